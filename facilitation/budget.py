"""Prices and budgets: what a call costs and whether the next one may be made."""
from decimal import Decimal

from django.conf import settings

from facilitation.llm.base import LLMRequest, LLMResponse, estimate_tokens

MILLION = Decimal(1_000_000)


def prices_for(model: str) -> dict:
    table = settings.LLM_PRICES
    if model in table:
        return table[model]
    # Match dated or suffixed model ids ("claude-sonnet-5-20260101") by prefix.
    for name, prices in table.items():
        if model.startswith(name):
            return prices
    return {"input": 0.0, "output": 0.0, "cache_write": 0.0, "cache_read": 0.0}


def cost_of(response: LLMResponse) -> Decimal:
    p = prices_for(response.model)
    total = (
        Decimal(response.input_tokens) * Decimal(str(p["input"]))
        + Decimal(response.output_tokens) * Decimal(str(p["output"]))
        + Decimal(response.cache_write_tokens) * Decimal(str(p["cache_write"]))
        + Decimal(response.cache_read_tokens) * Decimal(str(p["cache_read"]))
    )
    return (total / MILLION).quantize(Decimal("0.000001"))


def estimate(request: LLMRequest, model: str) -> tuple[int, float]:
    """Tokens and USD the request may use at most: its prompt plus its output limit."""
    prompt = estimate_tokens(request.system) + sum(estimate_tokens(m["content"]) for m in request.messages)
    p = prices_for(model)
    usd = (prompt * p["input"] + request.max_tokens * p["output"]) / 1_000_000
    return prompt + request.max_tokens, usd


def need_text(need: tuple[int, float]) -> str:
    """What a call may use at most, in words (a budget check reserves it before the call)."""
    tokens, usd = need
    return f"a call may use up to {tokens:,} tokens" + (f" (${usd:.2f})" if usd else "") + ", its prompt and the most it may write"


def over(holder, need: tuple[int, float], held: tuple[int, float] = (0, 0.0)) -> bool:
    """Would a call needing ``need`` (what ``estimate`` gives) take ``holder`` over its budget? ``holder``:
    a room, an agent or their context, anything with ``budget_tokens``, ``budget_usd``, ``tokens_used``
    and ``cost_usd``. ``held``: what the holder's other calls in flight may still use (``leases.reserved``)."""
    return exceeds(holder.budget_tokens, holder.budget_usd, holder.tokens_used + held[0], float(holder.cost_usd) + held[1],
                   *need)


def exceeds(limit_tokens, limit_usd, used_tokens: int, used_usd: float, need_tokens: int, need_usd: float) -> bool:
    if limit_tokens is not None and used_tokens + need_tokens > limit_tokens:
        return True
    if limit_usd is not None and used_usd + need_usd > float(limit_usd):
        return True
    return False
