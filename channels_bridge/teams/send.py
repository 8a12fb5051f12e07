"""Sending a delivery to Teams through the Bot Connector.

Mentions are ``<at>Name</at>`` in the text plus a ``mention`` entity; a direct message to
someone the bot has no conversation with first creates one (with the tenant id); the
bot's status in a chat is one Adaptive Card, posted once and then updated in place (bots
cannot pin). A 429 waits out ``Retry-After`` (or backs off), blocking the conversation's
bucket for every worker meanwhile.
"""
from django.conf import settings

from channels_bridge import bots, outcome, ratelimit
from channels_bridge.teams import client as connector
from channels_bridge.text import Span, split_message
from rooms.actions.chat import do_note_direct_chat, do_set_status_message
from rooms.actions.deliveries import record_part_sent
from rooms.models import ChatIdentity, Delivery

LIMIT = 20_000  # characters per message (Teams allows about 28 KB)
CARD_TYPE = "application/vnd.microsoft.card.adaptive"


def status_card(text: str, card: dict | None = None) -> dict:
    """An Adaptive Card: the given one, or a plain card showing ``text``."""
    if card and card.get("type") == "AdaptiveCard":
        return card
    return {"type": "AdaptiveCard", "$schema": "http://adaptivecards.io/schemas/adaptive-card.json", "version": "1.4",
            "body": [{"type": "TextBlock", "text": line, "wrap": True, **({"weight": "Bolder"} if i == 0 else {})}
                     for i, line in enumerate((text or " ").split("\n"))]}


def _mentioned(d: Delivery) -> list[Span]:
    ids = [m.get("identityId") for m in d.mentions or []]
    people = {i.pk: i for i in ChatIdentity.objects.filter(pk__in=ids, platform="teams")}
    return [Span(m["offset"], m["length"], {"identity": people[m["identityId"]]})
            for m in d.mentions or [] if m.get("identityId") in people]


def message_activity(text: str, spans: list[Span], bold_prefix: int = 0) -> dict:
    """The text with ``<at>Name</at>`` for each mention, and the mention entities."""
    out, entities, cursor = "", [], 0
    for span in sorted(spans, key=lambda s: s.offset):
        identity = span.data["identity"]
        name = text[span.offset:span.end]
        tag = f"<at>{name}</at>"
        out += text[cursor:span.offset] + tag
        cursor = span.end
        entities.append({"type": "mention", "text": tag, "mentioned": {"id": identity.external_id, "name": name}})
    out += text[cursor:]
    if bold_prefix and not spans and bold_prefix < len(out):
        out = f"**{out[:bold_prefix]}**{out[bold_prefix:]}"
    activity = {"type": "message", "text": out, "textFormat": "markdown"}
    if entities:
        activity["entities"] = entities
    return activity


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
            activity = {"type": "message", "text": d.text, "attachments": [{"contentType": CARD_TYPE, "content": status_card(d.text, d.card)}]}
            if d.chat.status_message_id:
                connector.update_activity(service_url, conversation, d.chat.status_message_id, activity)
                return outcome.sent([d.chat.status_message_id])
            activity_id = connector.send_activity(service_url, conversation, activity)
            do_set_status_message(d.chat, activity_id)
            return outcome.sent([activity_id])
        sent_ids = list(d.message_ids)
        bold = (d.card or {}).get("boldPrefix") or 0
        for index, (text, spans) in enumerate(split_message(d.text or "", LIMIT, _mentioned(d), measure=len)):
            if index < d.parts_sent:
                continue
            wait = ratelimit.buckets().take([bucket])
            if wait > 0:
                return outcome.wait(wait)
            activity_id = connector.send_activity(service_url, conversation, message_activity(text, spans, bold if index == 0 else 0))
            record_part_sent(d.pk, activity_id)
            sent_ids.append(activity_id)
        return outcome.sent(sent_ids)
    except connector.ConnectorError as exc:
        return _failure(d, exc)


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
    return outcome.retry(f"Teams could not take the message ({exc.status or 'no answer'}: {exc.message}).")
