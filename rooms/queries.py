"""Read helpers shared by actions and views (the API imports these, never an actions module)."""
from django.conf import settings
from django.db.models import Q, QuerySet

from rooms.events import EventType
from rooms.models import ChatIdentity, Observation, RoomEvent


def usable_by(model, user) -> QuerySet:
    """Catalog rows (agents, personas, roles) a user may see and use: the built-ins and their own;
    everything for staff."""
    if user is not None and getattr(user, "is_staff", False):
        return model.objects.all()
    if user is None or not user.is_authenticated:
        return model.objects.filter(is_builtin=True)
    return model.objects.filter(Q(is_builtin=True) | Q(created_by=user))


def measured_latency(limit: int = 2000) -> dict:
    """Median model-call latency per provider, from the latest successful calls' audit rows.

    ``{provider: {"participant": {"seconds", "calls"}, "facilitator": {...}}}``: what the
    wizard's time estimate is based on, instead of a guess.
    """
    from statistics import median

    from rooms.models import Invocation

    rows = (Invocation.objects.filter(success=True, latency_ms__gt=0, component__regex=r"^(participant|facilitator)\.")
            .exclude(provider="").order_by("-id").values_list("provider", "component", "latency_ms")[:limit])
    samples: dict[str, dict[str, list[int]]] = {}
    for provider, component, ms in rows:
        kind = "participant" if component.startswith("participant.") else "facilitator"
        samples.setdefault(provider, {}).setdefault(kind, []).append(ms)
    return {provider: {kind: {"seconds": round(median(values) / 1000, 2), "calls": len(values)} for kind, values in kinds.items()}
            for provider, kinds in samples.items()}


def telegram_link(parameter: str, code: str) -> str | None:
    """The t.me link that hands ``code`` to the Telegram bot (``parameter`` is ``startgroup`` for a group,
    ``start`` for a direct chat), once the bridge has met the bot (its own account is a chat identity)."""
    token = settings.BRIDGES["TELEGRAM_BOT_TOKEN"]
    if ":" not in token or not code:
        return None
    own = ChatIdentity.objects.filter(platform="telegram", external_id=token.split(":", 1)[0], is_bot=True)
    username = own.values_list("username", flat=True).first()
    return f"https://t.me/{username}?{parameter}={code}" if username else None


def turns_changed(room, up_to_seq: int, after_change: int, until_change: int, limit: int) -> tuple[list, int, bool]:
    """Turns with ``seq <= up_to_seq`` that changed after they were recorded (a chat message edited, deleted or
    restored: each change is a ``discussion:turn_updated`` event with a seq of its own), by a change whose seq is
    above ``after_change`` and at most ``until_change`` (the room's seq when the caller looked: every change up to
    it is committed). At most ``limit`` changes are read, oldest first: ``(turns as they read now, ordered by seq;
    the last change read, the next ``after_change``; whether more changes follow)``."""
    changes = list(RoomEvent.objects.filter(room=room, type=EventType.TURN_UPDATED.value, seq__gt=after_change,
                                            seq__lte=until_change).order_by("seq")
                   .values_list("seq", "payload__turn__seq")[:limit + 1])
    more = len(changes) > limit
    changes = changes[:limit]
    seqs = {turn for _seq, turn in changes if isinstance(turn, int) and turn <= up_to_seq}
    turns = list(Observation.objects.filter(room=room, seq__in=seqs).select_related("seat").order_by("seq")) if seqs else []
    return turns, (changes[-1][0] if more else max(until_change, after_change)), more
