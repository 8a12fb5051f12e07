"""The JSON shapes of deliveries, chat links and chat identities (events and REST share them)."""
from rooms.models import ChatIdentity, ChatLink, Delivery

# The public contract names three delivery states; a message not yet sent (queued, or being
# sent right now) reads as "retrying": it will be tried until it is sent or undeliverable.
PUBLIC_STATUS = {
    Delivery.Status.QUEUED: "retrying",
    Delivery.Status.SENDING: "retrying",
    Delivery.Status.RETRYING: "retrying",
    Delivery.Status.SENT: "sent",
    Delivery.Status.UNDELIVERABLE: "undeliverable",
}


def _iso(value):
    return value.isoformat() if value else None


def delivery_shape(d: Delivery) -> dict:
    shape = {
        "id": d.pk,
        "kind": d.kind,
        "principal": d.principal,
        "recipient": d.recipient,
        "platform": d.platform,
        "status": PUBLIC_STATUS[d.status],
        "state": d.status,
        "attempts": d.attempts,
        "chatId": d.chat_id,
        "sourceSeq": d.source.seq if d.source_id and d.source is not None else None,
        "createdAt": _iso(d.created_at),
        "sentAt": _iso(d.sent_at),
    }
    if d.diagnostic:
        shape["diagnostic"] = d.diagnostic
    return shape


def link_shape(link: ChatLink) -> dict:
    chat = link.chat
    return {
        "id": link.pk,
        "chatId": chat.pk,
        "platform": chat.platform,
        "externalId": chat.external_id,
        "title": chat.title,
        "kind": chat.kind,
        "active": link.active,
        "linkedBy": link.linked_by.display_name if link.linked_by_id and link.linked_by is not None else None,
        "linkedAt": _iso(link.linked_at),
        "unlinkedAt": _iso(link.unlinked_at),
    }


def identity_shape(identity: ChatIdentity) -> dict:
    return {
        "id": identity.pk,
        "platform": identity.platform,
        "name": identity.name,
        "username": identity.username,
        "startedBot": identity.started_bot,
    }
