"""Sending one delivery, once: claim it, hand it to its platform, record the outcome.

The claim (a locked conditional update) makes one worker the sender; parts already sent
are skipped on a retry; a transient failure is retried with exponential backoff and
jitter until ``MAX_ATTEMPTS``, then the delivery is ``undeliverable`` with its diagnostic.
Pacing waits (a token bucket said "not yet", or is blocked after a 429) do not count as attempts; they are
bounded by time instead: a delivery the pace would hold back beyond ``BRIDGES["MAX_WAIT_SECONDS"]``
(default an hour) after it was queued is ``undeliverable`` with that reason, and is never sent later.
What a person needs is exempt: a direct message (a report, its minutes, an interim status, an answer in a
personal chat) and an answer to a command wait as long as the pace asks, however late that is.

A message whose moment has passed is not sent late (after a worker outage, or behind a long queue): a
facilitator's line steering a run (``facilitation.goals.voice.STEERING``) once the run has ended, and a line of
one moment (a reminder, a time check, a mediation: ``voice.MOMENTARY``) once it is older than
``BRIDGES["MOMENT_SECONDS"]`` (default ten minutes). Before any of its parts goes out it is ``undeliverable`` with
the reason (the audit row and event of ``mark_undeliverable``, and a log line), and the next message to the same
place goes out in its turn.
"""
import logging
import random

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from channels_bridge import bots
from facilitation.goals.voice import MOMENTARY, STEERING, report_refused
from rooms.actions import deliveries as outbox
from rooms.models import Delivery, Observation, Room

log = logging.getLogger("convene.bridge")


def _platform_sender(platform: str):
    if platform == "telegram":
        from channels_bridge.telegram.send import deliver
    elif platform == "teams":
        from channels_bridge.teams.send import deliver
    else:
        return None
    return deliver


def backoff(attempts: int) -> float:
    base = min(60.0, 1.0 * 2 ** max(0, attempts - 1))
    return base * random.uniform(0.75, 1.25)


def send_delivery(delivery_id: int) -> float | None:
    """Try to send; returns seconds after which to try again, or None when finished."""
    claim = outbox.claim_delivery(delivery_id)
    if claim.done:
        return None
    if claim.delivery is None:
        return max(0.05, claim.wait)
    d = claim.delivery
    passed = _moment_passed(d)
    if passed:
        return _drop(d, passed)
    deliver = _platform_sender(d.platform)
    if deliver is None:
        outbox.mark_undeliverable(d.pk, diagnostic=f"No bridge for platform {d.platform!r}.")
        return None
    try:
        result = deliver(d)
    except Exception as exc:  # an unexpected failure is retried like a transient one, then given up
        result = _unexpected(exc)
    if result.kind == "sent":
        outbox.mark_sent(d.pk, message_ids=result.message_ids)
        bots.touch_sent(d.platform)
        return _hand_over(d.pk)
    if result.kind == "wait":
        given_up = _moment_passed(d, result.wait) or ("" if d.kind in ALWAYS_DELIVERED else _held_back_too_long(d, result.wait))
        if given_up:
            return _drop(d, given_up)
        outbox.release_delivery(d.pk, wait=result.wait)
        return max(0.05, result.wait)
    if result.kind == "undeliverable":
        return _refused(d, result.diagnostic)
    limit = settings.BRIDGES.get("MAX_ATTEMPTS", 8)
    if d.attempts >= limit:
        return _refused(d, f"{result.diagnostic} Gave up after {d.attempts} attempts.")
    wait = result.wait if result.wait is not None else backoff(d.attempts)
    outbox.mark_retrying(d.pk, wait=wait, diagnostic=result.diagnostic)
    return max(0.05, wait)


MAX_WAIT_SECONDS = 3600.0
MOMENT_SECONDS = 600.0
#: What a person needs whenever it arrives: never dropped for its age, however long the pace holds it back.
ALWAYS_DELIVERED = (Delivery.Kind.DIRECT, Delivery.Kind.REPLY)


def _moment_passed(d, wait: float = 0.0) -> str:
    """The reason not to send a facilitator's line any more ("" while it may go out): a line steering a run that has
    ended since, or a line of one moment that would go out (after ``wait``) more than ``MOMENT_SECONDS`` after it was
    said. Only relayed lines of which no part went out yet (a message is never cut short)."""
    if d.kind != Delivery.Kind.RELAY or d.source is None or d.parts_sent:
        return ""
    said = d.source.data if d.source.author_kind == Observation.AuthorKind.FACILITATOR else None
    purpose = said.get("purpose") if isinstance(said, dict) else None
    if purpose not in STEERING:
        return ""
    status = Room.objects.filter(pk=d.room_id).values_list("status", flat=True).first()
    if status in Room.TERMINAL:
        return (f"Not sent: the facilitator's {purpose} was for the run while it went on, and the run ended ({status}) "
                "before it could go out.")
    limit = float(settings.BRIDGES.get("MOMENT_SECONDS", MOMENT_SECONDS))
    age = (timezone.now() - d.created_at).total_seconds()
    if purpose in MOMENTARY and age + max(0.0, wait) > limit:
        return (f"Not sent: the facilitator's {purpose} was said {round(age / 60)} minutes ago and its moment has passed "
                f"(such a line goes out within {round(limit / 60)} minutes or not at all).")
    return ""


def _refused(d, diagnostic: str) -> None:
    """The platform refused the delivery (or kept failing): undeliverable, and a run's report refused so is told to
    the run's owner in the same transaction (``voice.report_refused``); the next in line goes on."""
    with transaction.atomic():
        outbox.mark_undeliverable(d.pk, diagnostic=diagnostic)
        report_refused(d.pk)
    return _hand_over(d.pk)


def _drop(d, reason: str) -> None:
    """A claimed delivery given up before it went out (its moment passed, or the pace held it back too long): recorded
    undeliverable with the reason, never sent; the next in line goes on."""
    outbox.mark_undeliverable(d.pk, diagnostic=reason)
    log.info("delivery %s (%s to %s) dropped: %s", d.pk, d.kind, d.recipient, reason)
    return _hand_over(d.pk)


def _held_back_too_long(d, wait: float) -> str:
    """The reason to give up on a delivery the pace keeps holding back ("" while it may still wait): the wait
    asked for now would end past ``MAX_WAIT_SECONDS`` after it was queued."""
    limit = float(settings.BRIDGES.get("MAX_WAIT_SECONDS", MAX_WAIT_SECONDS))
    if (timezone.now() - d.created_at).total_seconds() + max(0.0, wait) <= limit:
        return ""
    parts = f" ({d.parts_sent} of its parts had gone out)" if d.parts_sent else ""
    return (f"Not sent{parts}: the platform's pace (rate limits) would have held it back more than {round(limit / 60)} "
            f"minutes after it was queued (the next try was {round(wait)} s away). It will not be sent later.")


def _hand_over(delivery_id: int) -> None:
    """Messages to one place go out in order: a finished one starts the next."""
    following = outbox.next_in_line(delivery_id)
    if following is not None:
        outbox.redispatch([following])
    return None


def _unexpected(exc: Exception):
    from channels_bridge import outcome

    return outcome.retry(f"Sending failed: {type(exc).__name__}: {exc}")
