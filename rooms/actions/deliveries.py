"""The outbox's one write path: queueing messages to chats and people, and recording how sending went.

Whoever wants something said in a chat (the engine relaying a turn, a command's answer, a
report to a principal, a status message) calls one of the ``queue_*`` functions inside its
transaction. Each writes ``Delivery`` rows, an audit ``Invocation`` and, for a room, a
``discussion:delivery`` event, and hands the row ids to the bridge's sender task (by name,
on the ``bridge`` queue) once the transaction commits. The sender reports back through
``claim_delivery``, ``record_part_sent``, ``mark_sent``, ``mark_retrying`` and
``mark_undeliverable``.
"""
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.db.models import F, Q
from django.db.models.functions import Greatest
from django.utils import timezone

from rooms import principals
from rooms.actions.chat import typed_command
from rooms.audit import new_correlation_id, record
from rooms.dispatch import enqueue_on_commit
from rooms.events import EventType, build, record_event
from rooms.models import Chat, ChatIdentity, ChatLink, Delivery, Observation, Room
from rooms.models.chat import written_in_a_chat

SEND_TASK = "bridge.send_delivery"
QUEUE = "bridge"

# Which room turns reach linked chats: what people and agents say, and the conclusion.
RELAYED_KINDS = (Observation.Kind.CONTRIBUTION, Observation.Kind.SYNTHESIS, Observation.Kind.DECISION,
                 Observation.Kind.MESSAGE)


def _room_for_event(room_or_id) -> Room:
    """The room locked for its next seq. Pass the room object you hold (e.g. inside an engine
    commit, whose seq may be ahead of the database): its seq is kept if it is ahead."""
    pk = getattr(room_or_id, "pk", room_or_id)
    db_seq = Room.objects.select_for_update().filter(pk=pk).values_list("seq", flat=True).first() or 0
    room = room_or_id if isinstance(room_or_id, Room) else Room.objects.only("id", "seq").get(pk=pk)
    room.seq = max(room.seq, db_seq)
    return room


def _event(delivery: Delivery, room=None) -> None:
    if delivery.room_id:
        record_event(_room_for_event(room if room is not None else delivery.room_id), EventType.DELIVERY,
                     build.delivery(delivery))


def _dispatch(delivery: Delivery, countdown: float | None = None) -> None:
    enqueue_on_commit(SEND_TASK, delivery.pk, queue=QUEUE, countdown=countdown)


#: The most characters a delivery's ``recipient`` (who it went to, as people read it) keeps.
_RECIPIENT = Delivery._meta.get_field("recipient").max_length


def _create(*, correlation_id: str, **fields) -> Delivery:
    if isinstance(fields.get("recipient"), str):  # a chat's title or a person's name may be longer than the column
        fields["recipient"] = fields["recipient"][:_RECIPIENT]
    delivery = Delivery.objects.create(correlation_id=correlation_id, **fields)
    if delivery.status == Delivery.Status.QUEUED:
        _dispatch(delivery)
    return delivery


def _chat_label(chat: Chat) -> str:
    return f"{chat.platform} chat {chat.title or chat.external_id}"


# --- what the relay sends --------------------------------------------------------------


def relay_text(obs: Observation) -> tuple[str, str] | None:
    """A room turn as a chat message: the speaker's prefix and the turn's text (Markdown), or None for
    what is not relayed."""
    if obs.kind not in RELAYED_KINDS or obs.status != Observation.Status.OK:
        return None
    content = (obs.content or "").strip()
    if obs.kind == Observation.Kind.DECISION:
        content = ((obs.data or {}).get("question") or "").strip()  # only the facilitator's question is said aloud
    if not content:
        return None
    if obs.kind == Observation.Kind.SYNTHESIS:
        return f"{obs.author_name} (conclusion): ", content
    return f"{obs.author_name}: ", content


def queue_relay(room: Room, obs: Observation, *, origin_chat_id: int | None = None,
                correlation_id: str | None = None) -> list[Delivery]:
    """Send a room turn to every chat linked to the room except the one it came from.

    Call inside the transaction that commits the turn (the room row is locked by the caller).
    The unique (source, chat) constraint makes a repeated call a no-op.
    """
    relayed = relay_text(obs)
    if relayed is None:
        return []
    prefix, content = relayed
    text = prefix + content
    links = list(ChatLink.objects.filter(room_id=room.pk, active=True).select_related("chat"))
    targets = [link.chat for link in links if link.chat_id != origin_chat_id and link.chat.bot_present]
    if not targets:
        return []
    correlation = correlation_id or new_correlation_id()
    plain = written_in_a_chat(obs.data)
    existing = set(Delivery.objects.filter(source=obs, kind=Delivery.Kind.RELAY).values_list("chat_id", flat=True))
    created = []
    for chat in targets:
        if chat.pk in existing:
            continue
        created.append(_create(
            correlation_id=correlation, room=room, kind=Delivery.Kind.RELAY, principal=f"chat:{chat.pk}",
            platform=chat.platform, chat=chat, recipient=_chat_label(chat), text=text, source=obs,
            card={"boldPrefix": len(obs.author_name), **({"plainText": True} if plain else {"markdownFrom": len(prefix)})},
        ))
    if created:
        record("bridge.queue_relay", room=room, correlation_id=correlation,
              data={"seq": obs.seq, "chats": [d.chat_id for d in created]})
        for delivery in created:
            _event(delivery, room)
    return created


# --- messages the engine and the commands send -----------------------------------------


@dataclass(frozen=True)
class Mention:
    """A person named in a message: ``text[offset:offset+length]`` is their name."""

    offset: int
    length: int
    identity_id: int

    def as_json(self) -> dict:
        return {"offset": self.offset, "length": self.length, "identityId": self.identity_id}


def compose(*parts) -> tuple[str, list[Mention]]:
    """Build a message from strings and ``ChatIdentity`` rows (each becomes a mention).

    >>> compose("Thanks ", ana, ", over to ", ben, ".")
    """
    text, mentions = "", []
    for part in parts:
        if isinstance(part, ChatIdentity):
            name = part.name or part.username or part.external_id
            mentions.append(Mention(len(text), len(name), part.pk))
            text += name
        else:
            text += str(part)
    return text, mentions


def _mentions_json(mentions) -> list[dict]:
    return [m.as_json() if isinstance(m, Mention) else dict(m) for m in (mentions or ())]


def queue_post(chat: Chat, text: str, *, mentions=(), room: Room | None = None, kind: str = Delivery.Kind.POST,
               principal: str = "", correlation_id: str | None = None, card: dict | None = None,
               source: Observation | None = None) -> Delivery:
    """Post a message to a group (or answer in any chat, ``kind=reply``). ``card`` carries formatting hints
    (``{"markdownFrom": n}``: the text from ``n`` on is Markdown, e.g. a quoted conclusion). ``source``: the turn the
    post tells of (an edit's "Name (edited): ..."), so that what happens to the turn reaches the post not sent yet."""
    with transaction.atomic():
        correlation = correlation_id or new_correlation_id()
        delivery = _create(
            correlation_id=correlation, room=room, kind=kind, principal=principal or f"chat:{chat.pk}",
            platform=chat.platform, chat=chat, recipient=_chat_label(chat), text=text, mentions=_mentions_json(mentions),
            card=card or {}, source=source,
        )
        record(f"bridge.queue_{kind}", room=room, correlation_id=correlation, data={"chat": chat.pk, "delivery": delivery.pk})
        _event(delivery, room)
    return delivery


#: The ``card`` mark of the one reply that tells a chat its room has ended (``queue_ended_notice``).
ENDED_NOTICE = "roomEnded"


def queue_ended_notice(link: ChatLink, text: str, *, card: dict | None = None,
                       correlation_id: str | None = None) -> Delivery | None:
    """Tell a chat, once, that the room it is linked to has ended: the answer to the first message said there
    after the end. Once per chat and ended room, however many messages follow and however often an update is
    processed again (a worker retry): under the link's row lock, a reply marked ``ENDED_NOTICE`` for this chat
    and room means it was told. Returns the delivery, or None (told already, unlinked meanwhile, or the room is
    not over). Leaves an audit row (``bridge.room_ended_notice``) and the ``discussion:delivery`` event."""
    with transaction.atomic():
        link = (ChatLink.objects.select_for_update(of=("self",)).select_related("chat", "room")
                .filter(pk=link.pk, active=True).first())
        if link is None or not link.room.is_terminal:
            return None
        chat, room = link.chat, link.room
        told = Delivery.objects.filter(chat=chat, room=room, kind=Delivery.Kind.REPLY, card__notice=ENDED_NOTICE)
        if told.exists():
            return None
        correlation = correlation_id or new_correlation_id()
        delivery = _create(
            correlation_id=correlation, room=room, kind=Delivery.Kind.REPLY, principal=f"chat:{chat.pk}",
            platform=chat.platform, chat=chat, recipient=_chat_label(chat), text=text,
            card={**(card or {}), "notice": ENDED_NOTICE},
        )
        record("bridge.room_ended_notice", room=room, correlation_id=correlation,
              data={"chat": chat.pk, "link": link.pk, "status": room.status, "delivery": delivery.pk})
        _event(delivery, room)
    return delivery


def queue_status(chat: Chat, text: str, *, card: dict | None = None, room: Room | None = None,
                 correlation_id: str | None = None) -> Delivery:
    """Show ``text`` (and on Teams ``card``, an Adaptive Card) as the bot's one status message in
    the chat: the first is posted, later ones edit it in place. ``text`` is plain (Teams' adapter escapes
    it where its card would render Markdown)."""
    with transaction.atomic():
        correlation = correlation_id or new_correlation_id()
        delivery = _create(
            correlation_id=correlation, room=room, kind=Delivery.Kind.STATUS, principal=f"chat:{chat.pk}",
            platform=chat.platform, chat=chat, recipient=_chat_label(chat), text=text, card=card or {},
        )
        record("bridge.queue_status", room=room, correlation_id=correlation, data={"chat": chat.pk, "delivery": delivery.pk})
        _event(delivery, room)
    return delivery


def _start_hint(platform: str | None) -> str:
    """How the identity code is sent to the bot in a direct chat, on ``platform`` (on any, when None)."""
    if platform:
        return typed_command(platform, "start CODE", direct=True)
    return f"{typed_command('telegram', 'start CODE', direct=True)} (Teams: {typed_command('teams', 'start CODE', direct=True)})"


def queue_direct(principal: str, text: str, *, room: Room | None = None, platform: str | None = None,
                 correlation_id: str | None = None, attachment: dict | None = None, plain: bool = False,
                 reached: set | None = None) -> list[Delivery]:
    """A direct message to a principal, resolved now: one delivery per holder and chat account.

    ``plain``: the text is plain, not Markdown (it quotes what people wrote): it goes out as written
    (Teams: escaped in its XML format; Telegram without entities).

    ``reached``: when one message goes to several principals (a run's report to ``role:management`` and
    ``user:ana``), the ids of the users it was queued for already; a holder among them gets nothing again
    (one person, one copy), and every holder addressed here is added to it.

    Nobody to reach (an unknown user, an empty role, a holder with no linked account) is an
    ``undeliverable`` delivery with its diagnostic, never a silent drop.
    """
    resolution = principals.resolve(principal)
    with transaction.atomic():
        correlation = correlation_id or new_correlation_id()
        created = []
        if not resolution.holders:
            created.append(_create(
                correlation_id=correlation, room=room, kind=Delivery.Kind.DIRECT, principal=principal, platform=platform or "",
                recipient=principal, text=text, status=Delivery.Status.UNDELIVERABLE, diagnostic=resolution.problem,
            ))
        skipped = []
        for user, identities in resolution.holders:
            if reached is not None:
                if user.pk in reached:
                    skipped.append(user.pk)
                    continue
                reached.add(user.pk)
            reachable = [i for i in identities if platform is None or i.platform == platform]
            if not reachable:
                created.append(_create(
                    correlation_id=correlation, room=room, kind=Delivery.Kind.DIRECT, principal=principal,
                    platform=platform or "", recipient=user.get_username(), text=text,
                    status=Delivery.Status.UNDELIVERABLE,
                    diagnostic=f"{user.get_username()} has no linked {platform or 'chat'} account: they can link one "
                               f"with POST /api/me/chat-identities and {_start_hint(platform)} in a direct chat with the bot.",
                ))
            for identity in reachable:
                created.append(_create(
                    correlation_id=correlation, room=room, kind=Delivery.Kind.DIRECT, principal=principal,
                    platform=identity.platform, identity=identity,
                    recipient=f"{user.get_username()} ({identity.platform})", text=text, attachment=attachment or {},
                    card={"plainText": True} if plain else {},
                ))
        data = {"principal": principal, "deliveries": [d.pk for d in created]}
        if skipped:
            data["reachedAlready"] = skipped  # user ids this message was queued for through another principal
        record("bridge.queue_direct", room=room, correlation_id=correlation, data=data)
        for delivery in created:
            _event(delivery, room)
    return created


def queue_direct_to_identity(identity: ChatIdentity, text: str, *, room: Room | None = None, kind: str = Delivery.Kind.DIRECT,
                             correlation_id: str | None = None) -> Delivery:
    """A direct message to one chat account (e.g. the answer to ``start CODE`` in a direct chat)."""
    with transaction.atomic():
        correlation = correlation_id or new_correlation_id()
        delivery = _create(
            correlation_id=correlation, room=room, kind=kind, principal=f"identity:{identity.pk}", platform=identity.platform,
            identity=identity, recipient=f"{identity.display_name} ({identity.platform})", text=text,
        )
        record("bridge.queue_direct", room=room, correlation_id=correlation, data={"identity": identity.pk, "delivery": delivery.pk})
        _event(delivery, room)
    return delivery


def answer_file_offer(offer_id: int | None, identity: ChatIdentity, *, accepted: bool, upload: dict | None = None,
                      declined: Callable[[Delivery], str] | None = None, correlation_id: str | None = None) -> Delivery | None:
    """Someone answered a file offer (Teams' consent card on a direct message with an attachment).

    Only the person the offer went to can answer it, and only once: an accepted offer queues one
    delivery that uploads the file where Teams said (``upload``) and shows it in the chat; a declined one
    queues one answer in that personal chat, ``declined(offer)`` (its ``card.declinedOffer`` names the offer),
    when given. Anything else (an unknown offer, someone else's, a second answer) queues nothing; every
    answer leaves an audit row. Returns the upload delivery or the answer to a decline, or None.
    """
    correlation = correlation_id or new_correlation_id()
    with transaction.atomic():
        offer = (Delivery.objects.select_for_update().filter(pk=offer_id, kind=Delivery.Kind.DIRECT, platform="teams").first()
                 if offer_id else None)
        problem = ""
        if offer is None or not offer.attachment or offer.attachment.get("upload"):
            problem = "unknown offer"
        elif offer.identity_id != identity.pk:
            problem = "offered to someone else"
        elif Delivery.objects.filter(Q(attachment__offer=offer.pk) | Q(card__declinedOffer=offer.pk)).exists():
            problem = "answered already"
        if not problem and not accepted and declined is not None:
            answer = _create(correlation_id=offer.correlation_id or correlation, room=offer.room, kind=Delivery.Kind.REPLY,
                             principal=f"identity:{identity.pk}", platform=identity.platform, identity=identity,
                             recipient=offer.recipient, text=declined(offer), card={"declinedOffer": offer.pk})
            record("bridge.file_offer_answered", room=offer.room_id, correlation_id=answer.correlation_id,
                  data={"offer": offer.pk, "identity": identity.pk, "accepted": False, "delivery": answer.pk})
            _event(answer, offer.room)
            return answer
        if problem or not accepted:
            record("bridge.file_offer_answered", room=offer.room_id if offer is not None else None, correlation_id=correlation,
                  data={"offer": offer_id, "identity": identity.pk, "accepted": accepted, "refused": problem or None})
            return None
        delivery = _create(
            correlation_id=offer.correlation_id or correlation, room=offer.room, kind=Delivery.Kind.DIRECT,
            principal=offer.principal, platform=offer.platform, identity=identity, recipient=offer.recipient,
            text=f"{offer.attachment.get('filename') or 'The file'}, accepted: saved to their OneDrive and shown in the chat",
            attachment={**offer.attachment, "offer": offer.pk, "upload": dict(upload or {})},
        )
        record("bridge.file_offer_answered", room=offer.room_id, correlation_id=delivery.correlation_id,
              data={"offer": offer.pk, "identity": identity.pk, "accepted": True, "delivery": delivery.pk})
        _event(delivery, offer.room)
    return delivery


# --- the sender's side ---------------------------------------------------------------------


def _same_target(d: Delivery) -> Q:
    return Q(chat_id=d.chat_id) if d.chat_id else Q(identity_id=d.identity_id, chat__isnull=True)


def next_in_line(delivery_id: int) -> int | None:
    """The oldest pending delivery to the same place as this (finished) one."""
    d = Delivery.objects.filter(pk=delivery_id).first()
    if d is None:
        return None
    return (Delivery.objects.filter(_same_target(d), status__in=Delivery.PENDING).exclude(pk=d.pk)
            .order_by("pk").values_list("pk", flat=True).first())


@dataclass(frozen=True)
class Claimed:
    delivery: Delivery | None = None
    wait: float = 0.0  # > 0: not now, try again in this many seconds
    done: bool = False  # nothing left to do (sent, undeliverable, or another worker has it)


def claim_delivery(delivery_id: int, lease_seconds: float = 120.0) -> Claimed:
    """Take a delivery for sending: only one worker at a time, in order per target. The turn it tells of comes with it
    (``source``: the sender and the platforms read what it says and whom it addresses)."""
    now = timezone.now()
    with transaction.atomic():
        d = Delivery.objects.select_for_update(of=("self",)).select_related("source").filter(pk=delivery_id).first()
        if d is None or d.status in (Delivery.Status.SENT, Delivery.Status.UNDELIVERABLE):
            return Claimed(done=True)
        if d.status == Delivery.Status.SENDING and d.lease_until and d.lease_until > now:
            return Claimed(done=True)
        if d.next_attempt_at and d.next_attempt_at > now:
            return Claimed(wait=(d.next_attempt_at - now).total_seconds())
        if Delivery.objects.filter(_same_target(d), pk__lt=d.pk, status__in=Delivery.PENDING).exists():
            # An earlier message to the same place goes first; when it is done, it hands over to this one.
            return Claimed(done=True)
        d.status = Delivery.Status.SENDING
        d.attempts += 1
        d.lease_until = now + timedelta(seconds=lease_seconds)
        d.save(update_fields=["status", "attempts", "lease_until", "updated_at"])
    return Claimed(delivery=d)


def record_part_sent(delivery_id: int, message_id: str) -> None:
    """One part of a message is out: a retry starts after it (never posts it twice)."""
    with transaction.atomic():
        d = Delivery.objects.select_for_update().get(pk=delivery_id)
        d.message_ids = [*d.message_ids, str(message_id)]
        d.parts_sent = len(d.message_ids)
        d.save(update_fields=["message_ids", "parts_sent", "updated_at"])


def mark_sent(delivery_id: int, *, message_ids: list[str] | None = None) -> Delivery:
    with transaction.atomic():
        d = Delivery.objects.select_for_update().get(pk=delivery_id)
        if message_ids is not None:
            d.message_ids = [str(m) for m in message_ids]
            d.parts_sent = len(d.message_ids)
        d.status = Delivery.Status.SENT
        d.sent_at = timezone.now()
        d.lease_until = None
        d.next_attempt_at = None
        d.diagnostic = ""
        d.save()
        record("bridge.delivery_sent", room=d.room_id, correlation_id=d.correlation_id,
              data={"delivery": d.pk, "messages": d.message_ids, "attempts": d.attempts})
        _event(d)
    return d


def mark_retrying(delivery_id: int, *, wait: float, diagnostic: str) -> Delivery:
    with transaction.atomic():
        d = Delivery.objects.select_for_update().get(pk=delivery_id)
        d.status = Delivery.Status.RETRYING
        d.next_attempt_at = timezone.now() + timedelta(seconds=max(0.0, wait))
        d.lease_until = None
        d.diagnostic = diagnostic[:2000]
        d.save()
        record("bridge.delivery_retrying", room=d.room_id, correlation_id=d.correlation_id, success=False, error=diagnostic,
              data={"delivery": d.pk, "attempts": d.attempts, "wait": round(wait, 3)})
        _event(d)
    return d


def release_delivery(delivery_id: int, *, wait: float) -> None:
    """Give a claimed delivery back without counting an attempt (a rate limit said: not yet)."""
    Delivery.objects.filter(pk=delivery_id, status=Delivery.Status.SENDING).update(
        status=Delivery.Status.QUEUED, attempts=Greatest(F("attempts") - 1, 0), lease_until=None, updated_at=timezone.now(),
        next_attempt_at=timezone.now() + timedelta(seconds=max(0.0, wait)),
    )


def mark_undeliverable(delivery_id: int, *, diagnostic: str) -> Delivery:
    with transaction.atomic():
        d = Delivery.objects.select_for_update().get(pk=delivery_id)
        d.status = Delivery.Status.UNDELIVERABLE
        d.lease_until = None
        d.next_attempt_at = None
        d.diagnostic = diagnostic[:2000]
        d.save()
        record("bridge.delivery_undeliverable", room=d.room_id, correlation_id=d.correlation_id, success=False,
              error=diagnostic, data={"delivery": d.pk, "attempts": d.attempts})
        _event(d)
    return d


def withdraw_unsent(source: Observation, diagnostic: str) -> None:
    """What a turn was to tell the chats and has not begun to (its relays, and the posts that tell of it, e.g. an
    edit's), not sent at all: each undeliverable with ``diagnostic``. Messages to one place go in order, so the next
    one in each line is sent once the caller's transaction commits."""
    unsent = list(Delivery.objects.filter(source=source, kind__in=(Delivery.Kind.RELAY, Delivery.Kind.POST), parts_sent=0,
                                          status__in=(Delivery.Status.QUEUED, Delivery.Status.RETRYING))
                  .values_list("pk", flat=True))
    following = []
    for delivery_id in unsent:
        mark_undeliverable(delivery_id, diagnostic=diagnostic)
        following.append(next_in_line(delivery_id))
    follow = [pk for pk in following if pk is not None]
    if follow:
        transaction.on_commit(lambda: redispatch(follow))


def stranded_deliveries(limit: int = 500, grace_seconds: float = 30.0) -> list[int]:
    """Deliveries whose task was lost: the first pending one per target, overdue by ``grace_seconds``."""
    now = timezone.now()
    late = now - timedelta(seconds=grace_seconds)
    candidates = Delivery.objects.filter(
        Q(status__in=(Delivery.Status.QUEUED, Delivery.Status.RETRYING))
        & (Q(next_attempt_at__lte=late) | Q(next_attempt_at__isnull=True, updated_at__lte=late))
        | Q(status=Delivery.Status.SENDING, lease_until__lt=now)
    ).order_by("id")[:limit]
    heads = []
    for d in candidates:
        if not Delivery.objects.filter(_same_target(d), pk__lt=d.pk, status__in=Delivery.PENDING).exists():
            heads.append(d.pk)
    return heads


def redispatch(delivery_ids: list[int]) -> None:
    """Hand deliveries to the sender again (now, outside any transaction)."""
    from rooms.dispatch import send_now

    for pk in delivery_ids:
        send_now(SEND_TASK, (pk,), QUEUE)
