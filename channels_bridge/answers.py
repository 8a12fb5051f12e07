"""Which message of a chat a delivery answers, whatever the platform: a reply queued for a person's message
(``card["answers"]``: ``channels_bridge.inbound.answering``) or a facilitator's turn that answers it (``data.answers``:
``facilitation.goals.voice.asked_in``), relayed to the chat the message was written in. Each platform's sender
turns it into its own reply (a Teams channel's thread, a Telegram reply in its forum topic)."""
from rooms.models import Delivery, Observation


def answers_of(d: Delivery) -> dict | None:
    """``{chatId, messageId, thread}`` of the message ``d`` answers in ``d``'s own chat, or None: a message that
    answers nobody, or a copy of an answer relayed to another chat than the one asked in."""
    answers = (d.card or {}).get("answers")
    if answers is None and d.kind == Delivery.Kind.RELAY and d.source_id:
        turn = d.source
        if turn is not None and turn.author_kind == Observation.AuthorKind.FACILITATOR and isinstance(turn.data, dict):
            answers = turn.data.get("answers")
    if not isinstance(answers, dict) or answers.get("chatId") != d.chat_id:
        return None
    return answers
