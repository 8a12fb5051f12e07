"""Sending a delivery to Teams through the Bot Connector.

Mentions are ``<at>Name</at>`` in the text plus a ``mention`` entity; a direct message to
someone the bot has no conversation with first creates one (with the tenant id); the
bot's status in a chat is one Adaptive Card, posted once and then updated in place (bots
cannot pin). A 429 waits out ``Retry-After`` (or backs off), blocking the conversation's
bucket for every worker meanwhile.

A file (the minutes of a run) can only reach someone in a personal chat, and only with their
consent: after the text the bot offers it with a file consent card; when the person accepts,
Teams names an upload session (``rooms.actions.deliveries.answer_file_offer`` queues a delivery
holding it), the file is put there and shown in the chat with a file info card.

In a channel, an answer to someone's message (a command's answer, the facilitator answering a person: ``answered``)
goes into the thread the message was written in: a reply to that message's activity in the conversation that names
the thread (``<channel>;messageid=<root post>``), as the Agents SDK replies in a turn. Everything else (relayed turns,
the status card, reminders, a run's closing) is posted to the channel as before, and group and personal chats, which
have no threads, get every message as a message to the chat. An answer whose thread Teams no longer has (404: its post
was deleted) is posted to the channel instead.

A relayed turn is Markdown (``textFormat``); Teams shows no headings in text messages, so they go out
as bold lines, and it runs a paragraph's lines together, so each line break goes out as a blank line. A message a person wrote in another chat goes out as written: escaped in Teams' XML
format, with the writer's name in bold.
"""
import html
import logging
import re

from django.conf import settings
from microsoft_agents.activity.teams import FileConsentCard, FileInfoCard

from channels_bridge import attachments, bots, mentions, outcome, ratelimit
from channels_bridge.answers import answers_of
from channels_bridge.teams import client as connector
from channels_bridge.teams.parse import THREAD
from channels_bridge.text import Span, markdown_from, split_message, utf16_len
from facilitation.exports.markdown import escape_markdown
from rooms.actions.chat import do_forget_status_message, do_note_direct_chat, do_set_status_message
from rooms.actions.deliveries import record_part_sent
from rooms.models import Chat, Delivery

#: A message's text as sent, in UTF-16 code units: Teams takes an activity of up to 40 KB counted in UTF-16 (two bytes
#: a unit), so this leaves room for the rest of it (mentions, the envelope).
LIMIT = 18_000
CARD_TYPE = "application/vnd.microsoft.card.adaptive"
FILE_CONSENT_TYPE = "application/vnd.microsoft.teams.card.file.consent"
FILE_INFO_TYPE = "application/vnd.microsoft.teams.card.file.info"
log = logging.getLogger("convene.bridge")


def status_card(text: str, card: dict | None = None) -> dict:
    """An Adaptive Card: the given one, or a card showing the plain ``text``, a TextBlock a line. A TextBlock
    renders a Markdown subset (bold, italic, lists, links), so each line is escaped: the goal and the names
    people wrote read as typed (``2*3*4``, ``[click](...)``), as in the same status on Telegram."""
    if card and card.get("type") == "AdaptiveCard":
        return card
    return {"type": "AdaptiveCard", "$schema": "http://adaptivecards.io/schemas/adaptive-card.json", "version": "1.4",
            "body": [{"type": "TextBlock", "text": escape_markdown(line), "wrap": True,
                      **({"weight": "Bolder"} if i == 0 else {})}
                     for i, line in enumerate((text or " ").split("\n"))]}


def _mentioned(d: Delivery) -> list[Span]:
    """The people the message names whom Teams can mention (``channels_bridge.mentions``)."""
    return [Span(n.offset, n.length, {"identity": n.identity, "name": n.name}) for n in mentions.named(d)]


_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")


def without_headings(markdown: str) -> str:
    """Markdown as Teams shows it in a text message: headings are not rendered there (on no platform), so
    each becomes a bold line; fenced code is left as it is."""
    lines, fenced = [], False
    for line in markdown.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        heading = None if fenced else _HEADING.match(line)
        lines.append(f"**{heading.group(2)}**" if heading and heading.group(2) else line)
    return "\n".join(lines)


_LIST_ITEM = re.compile(r"^\s{0,3}(?:[-*+]|\d{1,9}[.)])\s")


def line_breaks(markdown: str) -> str:
    """Markdown whose line breaks Teams shows: Teams runs the lines of a paragraph together (a single line break is
    a space in Markdown), so each line that goes on with another line ends in a blank line (Teams shows that as one
    line break). Lines of fenced code and the items of a list, one after another, are left as they are."""
    lines, fenced, out = markdown.split("\n"), False, []
    for i, line in enumerate(lines):
        out.append(line)
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        if i + 1 == len(lines):
            break
        following = lines[i + 1]
        joined = (not fenced and line.strip() and following.strip()
                  and not (_LIST_ITEM.match(line) and _LIST_ITEM.match(following)))
        out.append("\n\n" if joined else "\n")
    return "".join(out)


def _text(d: Delivery, mentioned: list[Span]) -> str:
    """The delivery's text; a relayed turn's Markdown (after ``card.markdownFrom``) without headings (unless it
    mentions someone: the mentions' places are in the text as it is)."""
    text = d.text or ""
    start = markdown_from(text, d.card)
    if start is not None and not mentioned:
        return text[:start] + without_headings(text[start:])
    return text


def message_activity(text: str, spans: list[Span], bold_prefix: int = 0, plain: bool = False) -> dict:
    """The text with ``<at>Name</at>`` for each mention, and the mention entities (as Microsoft documents for bots:
    the entity's ``text`` is the ``<at>`` tag as it stands in the text, ``mentioned`` the member's id and name). The
    name in the tag is the name as written, escaped as XML: it is data. ``plain``: text a person wrote in a chat,
    sent in Teams' XML (HTML) format with every character escaped, so it reads as written (its asterisks stay
    asterisks) while the name in front is still bold."""
    piece = _escaped if plain else str
    out, entities, cursor = "", [], 0
    spans = sorted(spans, key=lambda s: s.offset)
    if bold_prefix and bold_prefix < len(text) and all(s.offset >= bold_prefix for s in spans):
        head = text[:bold_prefix]
        out, cursor = (f"<b>{piece(head)}</b>" if plain else f"**{head}**"), bold_prefix
    for span in spans:
        identity = span.data["identity"]
        name = span.data.get("name") or text[span.offset:span.end]
        tag = f"<at>{_escaped(name)}</at>"
        out += piece(text[cursor:span.offset]) + tag
        cursor = span.end
        entities.append({"type": "mention", "text": tag, "mentioned": {"id": identity.external_id, "name": name}})
    out += piece(text[cursor:])
    activity = {"type": "message", "text": out if plain else line_breaks(out), "textFormat": "xml" if plain else "markdown"}
    if entities:
        activity["entities"] = entities
    return activity


def _measure(plain: bool):
    """How long a piece of a message is as Teams counts it: in UTF-16, once escaped (text a person wrote, sent as XML,
    where ``&`` takes five characters) or with its line breaks doubled (Markdown)."""
    if plain:
        return lambda piece: utf16_len(_escaped(piece))
    return lambda piece: utf16_len(line_breaks(piece))


def _escaped(text: str) -> str:
    """Plain text inside Teams' XML format: markup characters escaped, line breaks kept."""
    return html.escape(text, quote=False).replace("\n", "<br/>")


def _dump(model) -> dict:
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


def file_offer_activity(delivery_id: int, filename: str, size: int) -> dict:
    """A file consent card: the person may save the file to their OneDrive, or decline."""
    context = {"delivery": delivery_id}
    card = FileConsentCard(description=f"{filename}: the minutes, as a Word document", size_in_bytes=size,
                           accept_context=context, decline_context=context)
    return {"type": "message", "attachments": [{"contentType": FILE_CONSENT_TYPE, "name": filename, "content": _dump(card)}]}


def file_info_activity(upload: dict) -> dict:
    """The uploaded file as a card the person can open or download."""
    card = FileInfoCard(unique_id=str(upload.get("uniqueId") or ""), file_type=str(upload.get("fileType") or ""), etag=None)
    return {"type": "message", "attachments": [{"contentType": FILE_INFO_TYPE, "contentUrl": upload.get("contentUrl"),
                                                "name": upload.get("name"), "content": _dump(card)}]}


def _where(d: Delivery) -> tuple[str, str]:
    """(serviceUrl, conversation id); a direct message may first create the conversation."""
    default = settings.BRIDGES["TEAMS_API_BASE"]
    if d.chat_id:
        return d.chat.service_url or default, d.chat.external_id
    identity = d.identity
    service_url = identity.service_url or default
    if not identity.direct_conversation_id:
        tenant = identity.tenant_id or settings.BRIDGES["TEAMS_TENANT_ID"]
        conversation = connector.create_conversation(service_url, bot_id=bots.teams_bot_id(), member_id=identity.external_id,
                                                     tenant_id=tenant)
        do_note_direct_chat(identity, conversation_id=conversation)
        return service_url, conversation
    return service_url, identity.direct_conversation_id


def answered(d: Delivery) -> tuple[str, str] | None:
    """Where an answer to a message written in a channel goes: (the conversation id of the message's thread, the
    message's activity id to reply to). None for anything else: a message to the channel that answers nobody, and every
    message to a group or personal chat (no threads there); what is an answer: ``channels_bridge.answers``."""
    if not d.chat_id or d.chat.kind != Chat.Kind.CHANNEL:
        return None
    answers = answers_of(d)
    if answers is None:
        return None
    thread, message_id = str(answers.get("thread") or ""), str(answers.get("messageId") or "")
    if not thread or not message_id:
        return None
    return f"{d.chat.external_id}{THREAD}{thread}", message_id


def _post(service_url: str, conversation: str, activity: dict, answer: tuple[str, str] | None) -> str:
    """Post ``activity`` to the conversation, or, as an answer (``answered``), into the thread of the message it
    answers; when Teams no longer has that message or thread (404), to the conversation after all."""
    if answer is None:
        return connector.send_activity(service_url, conversation, activity)
    thread, message_id = answer
    try:
        return connector.reply_to_activity(service_url, thread, message_id, activity)
    except connector.ConnectorError as exc:
        if exc.status != 404:
            raise
        log.info("Teams has no thread %s any more (%s): the answer is posted to the channel", thread, exc.message)
    return connector.send_activity(service_url, conversation, activity)


def deliver(d: Delivery) -> outcome.Outcome:
    if not connector.configured():
        return outcome.undeliverable("Teams is not configured (TEAMS_APP_ID and TEAMS_APP_PASSWORD are empty).")
    try:
        service_url, conversation = _where(d)
        bucket = ratelimit.bucket("teams_conversation", conversation)
        if d.kind == Delivery.Kind.STATUS and d.chat_id:
            wait = ratelimit.buckets().take([bucket])
            if wait > 0:
                return outcome.wait(wait)
            # The card alone: Teams shows a message's text above its card, so the status would read twice.
            # ``summary`` is the text a client that cannot show cards shows instead (plain text).
            activity = {"type": "message", "summary": d.text or "",
                        "attachments": [{"contentType": CARD_TYPE, "content": status_card(d.text, d.card)}]}
            if d.chat.status_message_id:
                try:
                    connector.update_activity(service_url, conversation, d.chat.status_message_id, activity)
                    return outcome.sent([d.chat.status_message_id])
                except connector.ConnectorError as exc:
                    if exc.status != 404:
                        raise
                    # The card is gone: forget it for good before the pacing can make us wait, so the next
                    # try posts a new card instead of updating the dead one again.
                    do_forget_status_message(d.chat, d.chat.status_message_id, reason=f"Teams: {exc.status} {exc.message}")
                wait = ratelimit.buckets().take([bucket])
                if wait > 0:
                    return outcome.wait(wait)
            activity_id = connector.send_activity(service_url, conversation, activity)
            do_set_status_message(d.chat, activity_id)
            return outcome.sent([activity_id])
        if (d.attachment or {}).get("upload"):
            return _upload(d, service_url, conversation, bucket)
        sent_ids = list(d.message_ids)
        answer = answered(d)
        bold = (d.card or {}).get("boldPrefix") or 0
        plain = bool((d.card or {}).get("plainText"))
        mentioned = _mentioned(d)
        parts = list(split_message(_text(d, mentioned), LIMIT, mentioned, measure=_measure(plain)))
        for index, (text, spans) in enumerate(parts):
            if index < d.parts_sent:
                continue
            wait = ratelimit.buckets().take([bucket])
            if wait > 0:
                return outcome.wait(wait)
            activity_id = _post(service_url, conversation, message_activity(text, spans, bold if index == 0 else 0, plain), answer)
            record_part_sent(d.pk, activity_id)
            sent_ids.append(activity_id)
        if d.attachment and not d.chat_id and d.parts_sent <= len(parts):  # the offer of the file follows the text
            file = attachments.paced_part(d.attachment, sent_ids, [bucket])
            if isinstance(file, outcome.Outcome):
                return file
            filename, data = file
            activity_id = connector.send_activity(service_url, conversation, file_offer_activity(d.pk, filename, len(data)))
            record_part_sent(d.pk, activity_id)
            sent_ids.append(activity_id)
        return outcome.sent(sent_ids)
    except connector.ConnectorError as exc:
        return _failure(d, exc)


def _upload(d: Delivery, service_url: str, conversation: str, bucket) -> outcome.Outcome:
    """An accepted file: put it into the upload session (part one), then show it (part two)."""
    upload = d.attachment["upload"]
    sent_ids = list(d.message_ids)
    if d.parts_sent < 1:
        file = attachments.render_part(d.attachment, [])  # nothing sent yet: a file gone is undeliverable
        if isinstance(file, outcome.Outcome):
            return file
        _, data = file
        try:
            connector.upload_file(str(upload.get("uploadUrl") or ""), data)
        except connector.ConnectorError as exc:
            if exc.status in (400, 403, 404, 410):  # a refused, unknown or expired upload session: it will not work later
                return outcome.undeliverable(f"The file could not be saved to the OneDrive of {d.recipient} "
                                             f"({exc.status}: {exc.message}).")
            raise
        record_part_sent(d.pk, "upload")
        sent_ids.append("upload")
    if d.parts_sent < 2:
        wait = ratelimit.buckets().take([bucket])
        if wait > 0:
            return outcome.wait(wait)
        activity_id = connector.send_activity(service_url, conversation, file_info_activity(upload))
        record_part_sent(d.pk, activity_id)
        sent_ids.append(activity_id)
    return outcome.sent(sent_ids)


def _failure(d: Delivery, exc: connector.ConnectorError) -> outcome.Outcome:
    who = d.recipient or d.principal
    if exc.status == 429:
        if exc.retry_after:
            conversation = d.chat.external_id if d.chat_id else d.identity.direct_conversation_id
            ratelimit.buckets().block(ratelimit.bucket("teams_conversation", conversation)[0], exc.retry_after)
        return outcome.retry(f"Teams asked to slow down (429){f', retry after {exc.retry_after:g} s' if exc.retry_after else ''}.",
                             wait=exc.retry_after)
    if exc.status in (403, 404) and not d.chat_id:
        return outcome.undeliverable(f"Teams refused the direct message to {who} ({exc.status}: {exc.message}): the app "
                                     "must be installed for that person (or in a team they belong to).")
    if exc.status in (403, 404):
        return outcome.undeliverable(f"Teams refused to post in {who} ({exc.status}: {exc.message}); the bot may have been removed.")
    if exc.status == 400:
        return outcome.undeliverable(f"Teams rejected the message (400: {exc.message}).")
    if exc.status == 413:  # the same message would be refused again
        return outcome.undeliverable(f"Teams refused the message as too large (413: {exc.message}).")
    if not exc.status:  # no answer: the connection failed or timed out (the message says which)
        return outcome.retry(f"Teams could not be reached: {exc.message}")
    if exc.status >= 500:
        return outcome.retry(f"Teams answered with an error {exc.status}: {exc.message}")
    return outcome.retry(f"Teams could not take the message ({exc.status}: {exc.message}).")
