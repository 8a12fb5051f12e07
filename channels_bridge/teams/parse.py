"""Bot Framework activities -> normalized inbound events, read with the Microsoft 365 Agents
SDK's schema (``microsoft_agents.activity.Activity``).

What matters, per Teams: ``conversationUpdate`` with ``membersAdded`` containing the bot's
own id (the ``recipient``) means the bot was added, and ``from`` is who added it;
``conversation.conversationType`` is ``personal``, ``groupChat`` or ``channel`` (a channel's
conversation id names the thread after ``;messageid=``: the chat is the channel, and a message keeps its thread
for the answer to it); in groups
the bot receives messages that @mention it, with ``<at>Name</at>`` in the text and a
``mention`` entity; the tenant is ``conversation.tenantId`` or ``channelData.tenant.id``.
An ``invoke`` named ``fileConsent/invoke`` is a person's answer to a file consent card (personal
chats only): ``value.action`` is ``accept`` (with ``value.uploadInfo``) or ``decline``, and
``value.context`` is what the card carried. A ``messageReaction`` (on one of the bot's messages, the
message it reacts to in ``replyToId``) with a ``like`` added reads as a 👍 from that person. A
``messageUpdate`` (``channelData.eventType`` ``editMessage``, or ``undeleteMessage`` for a message brought
back) carries the revised message under the original message's ``id``; a ``messageDelete``
(``softDeleteMessage``) names the deleted message by its ``id``; ``from`` is who changed it.
"""
import html
import logging
import re

from microsoft_agents.activity import Activity
from microsoft_agents.activity.teams import FileConsentCardResponse, FileUploadInfo
from pydantic import ValidationError

from channels_bridge import commands
from channels_bridge.events import BotAdded, BotRemoved, FileConsent, MembersChanged, Message, MessageChanged
from rooms.actions.chat import Account, ChatRef

PLATFORM = "teams"
FILE_CONSENT = "fileConsent/invoke"
KINDS = {"personal": "direct", "groupChat": "group", "channel": "channel"}
log = logging.getLogger("convene.bridge")
LIKE, THUMBS_UP = "like", "\U0001F44D"
#: ``channelData.eventType`` of a ``messageUpdate`` / ``messageDelete``, and what it means for the message.
CHANGES = {("messageUpdate", "editMessage"): "edited", ("messageUpdate", "undeleteMessage"): "restored",
           ("messageDelete", "softDeleteMessage"): "deleted"}


class Malformed(ValueError):
    pass


def _column(model, field: str) -> int:
    return model._meta.get_field(field).max_length


def id_limits() -> dict[str, int]:
    """The longest id of each kind an activity may carry: what the columns that keep it hold (a chat's and a personal
    chat's conversation id, an account id, an Entra object id, a tenant id, the service URL). The activity id has no
    column of its own; it is kept with the conversation id in the stored update's key."""
    from rooms.models import Chat, ChatIdentity

    return {"conversation": min(_column(Chat, "external_id"), _column(ChatIdentity, "direct_conversation_id")),
            "account": _column(ChatIdentity, "external_id"), "aad": _column(ChatIdentity, "aad_object_id"),
            "tenant": min(_column(Chat, "tenant_id"), _column(ChatIdentity, "tenant_id")),
            "service_url": min(_column(Chat, "service_url"), _column(ChatIdentity, "service_url")),
            "activity": _column(ChatIdentity, "external_id")}


def oversized(activity: Activity) -> str:
    """What in the activity is longer than the column that would keep it ("" when nothing is): such an activity is
    acknowledged and ignored, since storing it would fail (PostgreSQL) or keep a cut id that names nobody."""
    limits = id_limits()
    values = [("conversation.id", "conversation", activity.conversation.id if activity.conversation else ""),
              ("serviceUrl", "service_url", activity.service_url), ("id", "activity", activity.id),
              ("replyToId", "activity", activity.reply_to_id), ("tenant", "tenant", tenant_of(activity))]
    accounts = [("from", activity.from_property), ("recipient", activity.recipient)]
    accounts += [("membersAdded", m) for m in activity.members_added or []]
    accounts += [("membersRemoved", m) for m in activity.members_removed or []]
    accounts += [("mentioned", m.mentioned) for m in activity.get_mentions()]
    for where, member in accounts:
        if member is not None:
            values += [(f"{where}.id", "account", member.id), (f"{where}.aadObjectId", "aad", member.aad_object_id)]
    for where, kind, value in values:
        if value and len(str(value)) > limits[kind]:
            return f"{where} is {len(str(value))} characters long, longer than the {limits[kind]} kept"
    return ""


def load(payload: dict) -> Activity:
    if not isinstance(payload, dict):
        raise Malformed("An activity is a JSON object.")
    try:
        activity = Activity.model_validate(payload)
    except ValidationError as exc:
        raise Malformed(f"Not a valid activity: {exc.errors()[0].get('msg', 'invalid')}") from exc
    if not activity.type or activity.conversation is None or not activity.conversation.id or not activity.service_url:
        raise Malformed("An activity needs type, conversation.id and serviceUrl.")
    if not isinstance(activity.channel_data, dict):  # a list, a string, a number: nothing Teams would say
        activity.channel_data = {}
    return activity


def tenant_of(activity: Activity) -> str:
    if activity.conversation is not None and activity.conversation.tenant_id:
        return activity.conversation.tenant_id
    data = activity.channel_data if isinstance(activity.channel_data, dict) else {}
    tenant = data.get("tenant") if isinstance(data.get("tenant"), dict) else {}
    return str(tenant.get("id") or "")


def _account(member, tenant: str) -> Account | None:
    if member is None or not member.id:
        return None
    is_bot = (member.role or "") == "bot" or member.id.startswith("28:")
    return Account(PLATFORM, member.id, name=member.name or "", is_bot=is_bot, aad_object_id=member.aad_object_id or "",
                   tenant_id=tenant)


THREAD = ";messageid="


def chat_id(conversation_id: str, conversation_type: str) -> str:
    """The chat a conversation id belongs to. In a channel Teams names the thread too
    (``19:...@thread.tacv2;messageid=<root post>``): every thread of the channel is the one chat the bot was
    added to, so a link covers the whole channel and the bot posts to it as a new post (its answer to a message goes
    into that message's thread: ``thread_of``)."""
    if conversation_type == "channel":
        return conversation_id.split(THREAD, 1)[0]
    return conversation_id


def thread_of(activity: Activity) -> str:
    """In a channel, the id of the post at the root of the thread an activity was written in: Teams names it in the
    conversation id (``19:...@thread.tacv2;messageid=<root post>``), or, for a message, failing that in
    ``replyToId``. "" elsewhere: group and personal chats have no threads (a reaction's ``replyToId`` is the message
    it reacts to, not a thread)."""
    conv = activity.conversation
    if conv is None or conv.conversation_type != "channel":
        return ""
    root = (conv.id or "").partition(THREAD)[2]
    if not root and activity.type == "message":
        root = activity.reply_to_id or ""
    return root


def chat_ref(activity: Activity) -> ChatRef:
    conv = activity.conversation
    ctype = conv.conversation_type or ("groupChat" if conv.is_group else "personal")
    return ChatRef(PLATFORM, chat_id(conv.id, ctype), kind=KINDS.get(ctype, "group"), platform_type=ctype, title=conv.name or "",
                   service_url=activity.service_url, tenant_id=tenant_of(activity))


_AT = re.compile(r"<at[^>]*>(.*?)</at>", re.S | re.I)
_TAGS = re.compile(r"<[^>]+>")
#: A reply that quotes a message: Teams puts the quoted message (its author, time and text) in front of the reply as
#: ``<blockquote itemtype="http://schema.skype.com/Reply" ...>``. Those words are not the replier's.
_QUOTED = re.compile(r"<blockquote\b[^>]*schema\.skype\.com/Reply[^>]*>.*?</blockquote>", re.S | re.I)


def plain_text(text: str) -> str:
    """Teams text as people wrote it: a quoted message left out, mentions as names, markup and entities removed."""
    text = _AT.sub(lambda m: m.group(1), _QUOTED.sub(" ", text or ""))
    return html.unescape(_TAGS.sub("", text)).replace("\xa0", " ").strip()


def parse_activity(payload: dict) -> list:
    activity = load(payload)
    if problem := oversized(activity):
        log.warning("Teams activity ignored: %s", problem)
        return []
    chat = chat_ref(activity)
    tenant = chat.tenant_id
    bot_id = activity.recipient.id if activity.recipient is not None else ""
    actor = _account(activity.from_property, tenant)
    kind = activity.type
    if kind == "conversationUpdate":
        events: list = []
        added = activity.members_added or []
        removed = activity.members_removed or []
        if any(m.id == bot_id for m in added):
            events.append(BotAdded(chat, actor))
        joined = tuple(a for m in added if m.id != bot_id and (a := _account(m, tenant)))
        left = tuple(a for m in removed if m.id != bot_id and (a := _account(m, tenant)))
        if joined or left:
            events.append(MembersChanged(chat, joined=joined, left=left, actor=actor))
        if any(m.id == bot_id for m in removed):
            events.append(BotRemoved(chat, actor))
        return events
    if kind == "installationUpdate":
        action = (activity.action or "").lower()
        if action.startswith("add"):
            return [BotAdded(chat, actor)]
        if action.startswith("remove"):
            return [BotRemoved(chat, actor)]
        return []
    if kind == "invoke" and activity.name == FILE_CONSENT:
        return _file_consent(activity, chat, actor)
    if kind == "messageReaction":
        return _liked(activity, chat, actor)
    if kind in ("messageUpdate", "messageDelete"):
        return _changed(activity, chat, actor, bot_id)
    if kind != "message" or actor is None:
        return []
    mentioned, mentions_bot, clean = _read_mentions(activity, bot_id, tenant)
    direct = chat.kind == "direct"
    command = commands.parse_addressed(clean) if (mentions_bot or direct) else None
    return [Message(chat=chat, sender=actor, text=plain_text(activity.text or ""), message_id=activity.id or "",
                    reply_to=activity.reply_to_id or "", mentioned=tuple(mentioned), mentions_bot=mentions_bot,
                    command=command, clean_text=clean, thread=thread_of(activity))]


def event_type(activity_or_payload) -> str:
    """``channelData.eventType`` of an activity (or of its JSON), or ""."""
    data = (activity_or_payload.get("channelData") if isinstance(activity_or_payload, dict)
            else activity_or_payload.channel_data)
    return str(data.get("eventType") or "") if isinstance(data, dict) else ""


def _changed(activity: Activity, chat: ChatRef, actor: Account | None, bot_id: str) -> list:
    """A message edited, deleted or brought back (Teams names it by its original ``id``); other updates say nothing."""
    change = CHANGES.get((activity.type, event_type(activity)))
    if change is None or actor is None or not activity.id:
        return []
    text = ""
    if change != "deleted":
        text = _read_mentions(activity, bot_id, chat.tenant_id)[2]
    return [MessageChanged(chat=chat, sender=actor, message_id=activity.id, change=change, text=text)]


def _read_mentions(activity: Activity, bot_id: str, tenant: str) -> tuple[list, bool, str]:
    """The accounts a message mentions, whether our bot is one of them, and its text without our @mention."""
    raw = activity.text or ""
    mentioned, mentions_bot, clean = [], False, raw
    for mention in activity.get_mentions():
        who = mention.mentioned
        if who is not None and who.id == bot_id:
            mentions_bot = True
            if mention.text:
                clean = clean.replace(mention.text, " ")
        elif (account := _account(who, tenant)) is not None:
            mentioned.append(account)
    return mentioned, mentions_bot, plain_text(clean)


def _liked(activity: Activity, chat: ChatRef, actor: Account | None) -> list:
    """A like added to one of the bot's messages (Teams sends reactions to the bot's messages only) is the person
    saying 👍, as if typed in the group: the answer people give to "please confirm". Other reactions, reactions
    taken back and reactions in a personal chat (to a report, say) say nothing."""
    if actor is None or chat.kind == "direct" or not any((r.type or "").lower() == LIKE for r in activity.reactions_added or []):
        return []
    return [Message(chat=chat, sender=actor, text=THUMBS_UP, message_id=activity.id or "",
                    reply_to=activity.reply_to_id or "", clean_text=THUMBS_UP, thread=thread_of(activity))]


def _file_consent(activity: Activity, chat: ChatRef, actor: Account | None) -> list:
    """The answer to a file consent card, or nothing when it is not one we can read."""
    if actor is None or chat.kind != "direct" or not isinstance(activity.value, dict):
        return []
    try:
        # The schema lists every field as required; a decline comes without ``uploadInfo``.
        answer = FileConsentCardResponse.model_validate({"action": None, "context": None, "uploadInfo": None, **activity.value})
    except ValidationError:
        return []
    context = answer.context if isinstance(answer.context, dict) else {}
    offer = context.get("delivery")
    offer_id = offer if isinstance(offer, int) and not isinstance(offer, bool) else None
    if answer.action == "accept":
        try:
            info = FileUploadInfo.model_validate(answer.upload_info or {})
        except ValidationError:
            return []
        upload = {"name": info.name, "uploadUrl": info.upload_url, "contentUrl": info.content_url,
                  "uniqueId": info.unique_id, "fileType": info.file_type}
        return [FileConsent(chat, actor, offer_id, accepted=True, upload=upload)]
    if answer.action == "decline":
        return [FileConsent(chat, actor, offer_id, accepted=False)]
    return []
