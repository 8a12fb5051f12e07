"""What one attempt at sending a delivery came to."""
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Outcome:
    kind: str  # sent | wait (paced: not an attempt) | retry | undeliverable
    wait: float | None = 0.0  # retry: None means "back off as the attempts say"
    diagnostic: str = ""
    message_ids: list = field(default_factory=list)


def sent(message_ids=None) -> Outcome:
    return Outcome("sent", message_ids=list(message_ids or []))


def wait(seconds: float) -> Outcome:
    return Outcome("wait", wait=seconds)


def retry(diagnostic: str, wait: float | None = None) -> Outcome:
    return Outcome("retry", wait=wait, diagnostic=diagnostic)


def undeliverable(diagnostic: str) -> Outcome:
    return Outcome("undeliverable", diagnostic=diagnostic)
