"""How an HTTP model API's failures map onto the seam's errors (shared by the SDK providers)."""
import time
from email.utils import parsedate_to_datetime

from facilitation.llm.base import LLMError, TerminalLLMError, TransientLLMError

#: Statuses worth another attempt besides every 5xx: timeout, conflict, rate limit.
TRANSIENT_STATUSES = {408, 409, 429}


def retry_after_seconds(headers) -> float | None:
    """Seconds a ``retry-after`` (or ``retry-after-ms``) header asks us to wait, if any."""
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    value = headers.get("retry-after")
    try:
        if millis:
            return float(millis) / 1000
        if value:
            return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time()) if value else None
    except (TypeError, ValueError):
        return None


def status_error(provider: str, status: int, message: str, headers) -> LLMError:
    """A transient error for rate limits, timeouts and server errors; terminal for the rest."""
    if status in TRANSIENT_STATUSES or status >= 500:
        return TransientLLMError(message, provider=provider, status=status, retry_after=retry_after_seconds(headers))
    return TerminalLLMError(message, provider=provider, status=status)
