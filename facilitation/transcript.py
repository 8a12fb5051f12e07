"""A discussion as one JSON document (run_discussion --json, exports)."""
from django.db.models import Sum

from facilitation.context import load_context
from facilitation.deliberation.analytics import analytics
from rooms.models import Invocation, Observation, Room
from rooms.payloads import turn_payload


def usage_of(room: Room) -> dict:
    agg = Invocation.objects.filter(room=room).aggregate(
        input=Sum("input_tokens"), output=Sum("output_tokens"), cache_read=Sum("cache_read_tokens"),
        cache_write=Sum("cache_write_tokens"), cost=Sum("cost_usd"),
    )
    return {
        "calls": Invocation.objects.filter(room=room, kind=Invocation.Kind.CALL).count(),
        "inputTokens": agg["input"] or 0, "outputTokens": agg["output"] or 0,
        "cacheReadTokens": agg["cache_read"] or 0, "cacheWriteTokens": agg["cache_write"] or 0,
        "totalTokens": room.tokens_used, "costUsd": float(room.cost_usd),
    }


def analytics_of(room: Room) -> dict:
    """The discussion's quality analytics (``deliberation.analytics``) from its record."""
    ctx = load_context(room)
    decisions = list(Observation.objects.filter(room=room, kind=Observation.Kind.DECISION).values_list("data", flat=True))
    synthesis = Observation.objects.filter(room=room, kind=Observation.Kind.SYNTHESIS).order_by("-seq").values_list("data", flat=True).first()
    return analytics(ctx.room, decisions, synthesis)


def discussion_document(room: Room) -> dict:
    rows = list(Observation.objects.filter(room=room).select_related("seat").order_by("seq"))
    return {
        "id": room.pk,
        "name": room.name,
        "topic": room.topic,
        "format": room.format,
        "status": room.status,
        "rounds": room.round,
        "maxRounds": room.max_rounds,
        "turns": [turn_payload(o) for o in rows if o.kind == Observation.Kind.CONTRIBUTION],
        "decisions": [{"seq": o.seq, "round": o.round, **o.data} for o in rows if o.kind == Observation.Kind.DECISION],
        "conclusion": room.conclusion,
        "rehearsal": any(o.provider == "rehearsal" for o in rows),
        "usage": usage_of(room),
    }
