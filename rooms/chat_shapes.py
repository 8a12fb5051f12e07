"""The JSON shapes of deliveries, chat links and chat identities (events and REST share them).

Each shape is its serializer in ``rooms.serializers``.
"""
from rooms.models import ChatIdentity, ChatLink, Delivery
from rooms.serializers import PUBLIC_STATUS, DeliveryOut, IdentityOut, LinkOut

__all__ = ["PUBLIC_STATUS", "delivery_shape", "identity_shape", "link_shape"]


def delivery_shape(d: Delivery) -> dict:
    return DeliveryOut.render(d)


def link_shape(link: ChatLink) -> dict:
    return LinkOut.render(link)


def identity_shape(identity: ChatIdentity) -> dict:
    return IdentityOut.render(identity)
