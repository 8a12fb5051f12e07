"""Sending a delivery to Telegram: pacing, splitting, mentions, Markdown, errors.

A message longer than 4,096 characters goes out in parts split on paragraph boundaries;
parts already sent are recorded, so a retry resumes after them. A person mentioned (``channels_bridge.mentions``)
is named by @username with a ``mention`` entity when they have one, else by name with a ``text_mention`` entity;
the relayed speaker's name is a ``bold`` entity; offsets are in UTF-16 code units. A relayed turn's Markdown goes out as text with entities (``markdown.rendered``). Pacing: a token bucket per chat (about one message a second), per group
(20 a minute) and overall; a 429's ``retry_after`` blocks the chat's bucket that long.
A 403 (the person never started the bot, or the bot was removed) is undeliverable with a
diagnostic; a ``migrate_to_chat_id`` answer moves the chat to its supergroup id and retries.
An attachment (the minutes of a run) goes out as a document after the text, counted as one more part.

In a group, an answer to someone's message (a command's answer, the notice that the room has ended, the facilitator
answering a person in a run: ``answered``) is a reply to that message: its first part carries ``reply_parameters``
(``{"message_id", "allow_sending_without_reply": true}``, so a message deleted meanwhile does not stop the answer), and
in a forum supergroup every part goes into the topic the message was written in (``message_thread_id``). A topic
Telegram no longer has (deleted, or closed to the bot) gets the answer in the group's General topic instead. Everything
else (relayed turns, the status message, greetings, reminders, a run's closing) is a message to the group.
"""
import functools
import logging
import warnings
from datetime import timedelta

from channels_bridge import attachments, mentions, outcome, ratelimit
from channels_bridge.answers import answers_of
from channels_bridge.telegram import client as tg
from channels_bridge.telegram.markdown import rendered
from channels_bridge.text import Span, markdown_from, split_message, utf16_len, utf16_offset
from rooms.actions.chat import do_forget_status_message, do_migrate_chat, do_set_status_message
from rooms.actions.deliveries import record_part_sent
from rooms.models import Chat, ChatLink, Delivery

LIMIT = 4096
log = logging.getLogger("convene.bridge")


def _retry_after(exc) -> float:
    """Seconds from a ``RetryAfter`` (an int today, a timedelta in later python-telegram-bot)."""
    from telegram.warnings import PTBDeprecationWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        value = exc.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


def _target(d: Delivery) -> tuple[str, bool]:
    """(chat id, is a group)."""
    if d.chat_id:
        return d.chat.external_id, d.chat.kind != "direct"
    return d.identity.external_id, False  # a private chat's id is the user's id


def _text_and_spans(d: Delivery) -> tuple[str, list[Span]]:
    """The message's text and its spans: the speaker's name in bold, mentions, and the formatting of the
    Markdown that follows ``card.markdownFrom`` (a relayed turn's text)."""
    text, people = d.text or "", mentions.named(d)
    spans = _bold(d)
    start = markdown_from(text, d.card)
    if start is None:
        spans += [Span(n.offset, n.length, {"person": n}) for n in people]
        return _mentioned(text, spans)
    # Each person named in the Markdown is one private-use character (one the text does not hold) while it is
    # rendered, and is put back afterwards.
    inside = [n for n in people if n.offset >= start]
    places = [c for c in map(chr, range(0xE000, 0xF900)) if c not in text][:len(inside)]
    source, cursor = "", start
    for place, n in zip(places, inside):
        source += text[cursor:n.offset] + place
        cursor = n.end
    body, formatting = rendered(source + text[cursor:])
    spans = [s for s in spans if s.end <= start] + [Span(start + f.offset, f.length, f.data) for f in formatting]
    spans += [Span(start + body.find(place), 1, {"person": n}) for place, n in zip(places, inside) if place in body]
    return _mentioned(text[:start] + body, spans)


def _bold(d: Delivery) -> list[Span]:
    bold = (d.card or {}).get("boldPrefix")
    return [Span(0, bold, {"type": "bold"})] if isinstance(bold, int) and bold > 0 else []


def _mentioned(text: str, spans: list[Span]) -> tuple[str, list[Span]]:
    """Each person's place (a ``{"person"}`` span) as Telegram mentions them: by @username when they have one (a
    ``mention`` entity), else their name with a ``text_mention`` entity; the other spans move with the text."""
    people = sorted((s for s in spans if "person" in s.data), key=lambda s: s.offset)
    if not people:
        return text, spans
    out, cursor, moved, placed = "", 0, [], []
    for span in people:
        identity = span.data["person"].identity
        said = f"@{identity.username}" if identity.username else span.data["person"].name
        out += text[cursor:span.offset]
        placed.append(Span(len(out), len(said), {"type": "mention"} if identity.username
                           else {"type": "text_mention", "user": identity}))
        moved.append((span.end, len(said) - span.length))
        out += said
        cursor = span.end
    out += text[cursor:]

    def at(index: int) -> int:
        return index + sum(delta for end, delta in moved if end <= index)

    others = [Span(at(s.offset), at(s.end) - at(s.offset), s.data) for s in spans if "person" not in s.data]
    return out, sorted(others + placed, key=lambda s: s.offset)


def _entities(text: str, spans: list[Span]) -> list:
    from telegram import MessageEntity, User

    entities = []
    for span in spans:
        offset = utf16_offset(text, span.offset)
        length = utf16_len(text[span.offset:span.end])
        if span.data["type"] == "text_mention":
            identity = span.data["user"]
            user = User(id=int(identity.external_id), first_name=identity.name or identity.username or "someone", is_bot=False)
            entities.append(MessageEntity(MessageEntity.TEXT_MENTION, offset, length, user=user))
        else:
            extra = {k: span.data[k] for k in ("url", "language") if span.data.get(k)}
            entities.append(MessageEntity(span.data["type"], offset, length, **extra))
    return entities


def answered(d: Delivery) -> tuple[int, int | None] | None:
    """The message a delivery to a group answers, as (its message id, the forum topic it was written in or None), for
    the delivery to reply to it there. None for anything else: a message to the group that answers nobody, and every
    direct message; what is an answer: ``channels_bridge.answers``."""
    if not d.chat_id or d.chat.kind == Chat.Kind.DIRECT:
        return None
    answers = answers_of(d)
    if answers is None:
        return None
    message_id, topic = str(answers.get("messageId") or ""), str(answers.get("thread") or "")
    if not message_id.isdecimal() or int(message_id) <= 0:
        return None
    return int(message_id), int(topic) if topic.isdecimal() and int(topic) > 0 else None


#: What Telegram answers when a forum topic cannot be posted in: it was deleted, or closed (to a bot that may not
#: manage topics).
TOPIC_GONE = ("message thread not found", "topic_closed")


def home_topic(d: Delivery) -> int | None:
    """The forum topic the chat's link to the delivery's room was made in (``ChatLink.thread``), or None."""
    if not d.chat_id or not d.room_id:
        return None
    thread = (ChatLink.objects.filter(chat_id=d.chat_id, room_id=d.room_id).order_by("-active", "-id")
              .values_list("thread", flat=True).first()) or ""
    return int(thread) if thread.isdecimal() and int(thread) > 0 else None


def _general_closed(exc) -> bool:
    return "topic_closed" in str(exc.message).lower()


def _to_group(post, chat_id: str, home) -> tuple[str, int | None]:
    """``post(None)``: a message or file to the group (its General topic in a forum); while the General topic is closed
    to the bot, ``post(topic)`` into the topic the chat was linked in (``home()``), if it was linked in one. Returns the
    message's id and the topic it went to (None for the General topic)."""
    from telegram import error

    try:
        return post(None), None
    except error.BadRequest as exc:
        place = home() if _general_closed(exc) else None
        if place is None:
            raise
    log.info("Telegram chat %s: its General topic is closed; the message goes to topic %s, where it was linked", chat_id, place)
    return post(place), place


def _send(bot, chat_id: str, text: str, entities: list, reply_to: int | None, topic: int | None,
          home=lambda: None) -> tuple[str, int | None]:
    """Send one part: as a reply to ``reply_to`` and into the forum topic ``topic`` when given; when the topic cannot
    be posted in any more, to the group (its General topic) as a message. A message to the group goes into the topic
    the chat was linked in (``home()``) while the General topic is closed. Returns the message's id and the topic the
    parts that follow go to (None for the General topic)."""
    from telegram import error

    if topic is not None:
        try:
            return bot.send_message(chat_id, text, entities, reply_to=reply_to, topic=topic), topic
        except error.BadRequest as exc:
            if not any(words in str(exc.message).lower() for words in TOPIC_GONE):
                raise
            log.info("Telegram chat %s cannot be posted in topic %s (%s): the answer goes to the group", chat_id, topic,
                     exc.message)
            reply_to = None
    return _to_group(lambda place: bot.send_message(chat_id, text, entities, reply_to=reply_to, topic=place), chat_id, home)


def _send_file(bot, chat_id: str, filename: str, data: bytes, topic: int | None, home) -> str:
    """The file after the text: into the topic the text went to; else to the group (``_to_group``)."""
    if topic is not None:
        return bot.send_document(chat_id, filename, data, topic=topic)
    return _to_group(lambda place: bot.send_document(chat_id, filename, data, topic=place), chat_id, home)[0]


def _buckets(chat_id: str, group: bool) -> list:
    buckets = [ratelimit.bucket("telegram_chat", chat_id), ratelimit.bucket("telegram_global", "all")]
    if group:
        buckets.append(ratelimit.bucket("telegram_group", chat_id))
    return buckets


def _describe(d: Delivery) -> str:
    return d.recipient or d.principal


def deliver(d: Delivery) -> outcome.Outcome:
    from telegram import error

    if not tg.configured():
        return outcome.undeliverable("Telegram is not configured (TELEGRAM_BOT_TOKEN is empty).")
    chat_id, group = _target(d)
    bot = tg.client()
    full_text, spans = _text_and_spans(d)
    parts = split_message(full_text, LIMIT, spans)
    sent_ids = list(d.message_ids)
    try:
        if d.kind == Delivery.Kind.STATUS and d.chat_id and d.chat.status_message_id:
            text, spans = parts[0]
            wait = ratelimit.buckets().take(_buckets(chat_id, group))
            if wait > 0:
                return outcome.wait(wait)
            try:
                bot.edit_message_text(chat_id, d.chat.status_message_id, text, _entities(text, spans))
                return outcome.sent([d.chat.status_message_id])
            except error.BadRequest as exc:
                if "not modified" in str(exc).lower():
                    return outcome.sent([d.chat.status_message_id])
                if "not found" not in str(exc).lower():
                    raise
                # The status message is gone (deleted, or left in the group before it became a supergroup):
                # forget it for good before anything can make this attempt wait, so the next try posts anew
                # instead of editing the dead message again.
                do_forget_status_message(d.chat, d.chat.status_message_id, reason=f"Telegram: {exc.message}")
        reply_to, topic = answered(d) or (None, None)
        # The topic the chat was linked in: read once, and only when the General topic refuses a message.
        home = functools.cache(lambda: home_topic(d) if group else None)
        for index, (text, spans) in enumerate(parts):
            if index < d.parts_sent:
                continue
            wait = ratelimit.buckets().take(_buckets(chat_id, group))
            if wait > 0:
                return outcome.wait(wait)
            # A long answer replies with its first part; the parts that follow it go into the same topic.
            message_id, topic = _send(bot, chat_id, text, _entities(text, spans), reply_to if index == 0 else None, topic, home)
            record_part_sent(d.pk, message_id)
            sent_ids.append(message_id)
        if d.attachment and d.parts_sent <= len(parts):  # the file is the part after the text
            file = attachments.paced_part(d.attachment, sent_ids, _buckets(chat_id, group))
            if isinstance(file, outcome.Outcome):
                return file
            filename, data = file
            message_id = _send_file(bot, chat_id, filename, data, topic, home)
            record_part_sent(d.pk, message_id)
            sent_ids.append(message_id)
        if d.kind == Delivery.Kind.STATUS and d.chat_id and sent_ids:
            do_set_status_message(d.chat, sent_ids[0])
        return outcome.sent(sent_ids)
    except error.RetryAfter as exc:
        seconds = _retry_after(exc)
        ratelimit.buckets().block(ratelimit.bucket("telegram_chat", chat_id)[0], seconds)
        return outcome.retry(f"Telegram asked to wait {seconds:g} s (429 Too Many Requests).", wait=seconds)
    except error.ChatMigrated as exc:
        if d.chat_id:
            do_migrate_chat("telegram", chat_id, str(exc.new_chat_id))
        return outcome.retry(f"The group became a supergroup ({exc.new_chat_id}); sending there.", wait=0.0)
    except error.Forbidden as exc:
        if d.chat_id and d.chat.kind != "direct":
            return outcome.undeliverable(f"Telegram refused to post in {_describe(d)} (403: {exc.message}); "
                                         "the bot may have been removed from the group.")
        return outcome.undeliverable(f"Telegram refused the direct message to {_describe(d)} (403: {exc.message}): "
                                     "a bot can only write to people who have started a chat with it; ask them to "
                                     "open the bot and press Start.")
    except error.BadRequest as exc:
        if _general_closed(exc) and d.chat_id:
            return outcome.undeliverable(f"Telegram refused the message (400: {exc.message}): the topic it went to in "
                                         f"{_describe(d)} is closed to the bot (the General topic, when it went to none). "
                                         "Reopen it, or link the chat again from an open topic: while General is closed, "
                                         "the bot speaks in the topic the chat was linked in.")
        return outcome.undeliverable(f"Telegram rejected the message (400: {exc.message}).")
    except error.InvalidToken as exc:
        return outcome.retry(f"Telegram rejected the bot token: {exc.message}")
    except (error.TimedOut, error.NetworkError) as exc:
        status = tg.answered_status(exc)
        if status is not None:
            return outcome.retry(f"Telegram answered with an error {status}: {exc.message}")
        return outcome.retry(f"Telegram could not be reached: {exc.message}")
    except TimeoutError:
        return outcome.retry("Telegram did not answer in time.")
