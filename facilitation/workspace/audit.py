"""Every agent tool call and manager action is an ``Invocation`` row with a correlation id."""
from decimal import Decimal

from rooms.models import Invocation, Room


def log_invocation(room: Room, component: str, *, correlation: str, user=None, agent_id: int | None = None,
                   input: dict | None = None, output: str = "", success: bool = True, error: str = "",
                   provider: str = "", model: str = "", input_tokens: int = 0, output_tokens: int = 0,
                   latency_ms: int = 0, cost_usd: Decimal = Decimal(0)) -> Invocation:
    return Invocation.objects.create(
        room=room, component=component, correlation_id=correlation, user=user if user is not None and user.is_authenticated else None,
        agent_id=agent_id, input=input or {}, output=output, success=success, error=error[:2000], provider=provider,
        model=model, input_tokens=input_tokens, output_tokens=output_tokens, latency_ms=latency_ms, cost_usd=cost_usd,
    )
