"""Principals: whoever a message is addressed to, resolved at the moment of sending.

``user:<username>`` is that user; ``role:<key>`` is every current member of the Django auth
group named ``<key>``. A person is reached on each chat account linked to their user.
"""
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from rooms.errors import ValidationFailed
from rooms.models import ChatIdentity

KINDS = ("user", "role")


def parse(principal) -> tuple[str, str]:
    if not isinstance(principal, str) or ":" not in principal:
        raise ValidationFailed("A principal is user:<username> or role:<key>.", {"principal": [repr(principal)]})
    kind, _, name = principal.partition(":")
    if kind not in KINDS or not name or len(name) > 150:
        raise ValidationFailed("A principal is user:<username> or role:<key>.", {"principal": [principal]})
    return kind, name


@dataclass
class Resolution:
    principal: str
    # (user, [identities]) per holder; a holder with no reachable account has an empty list.
    holders: list[tuple[object, list[ChatIdentity]]] = field(default_factory=list)
    problem: str = ""  # why nobody can be reached (unknown user, empty role)


def resolve(principal: str) -> Resolution:
    kind, name = parse(principal)
    result = Resolution(principal)
    User = get_user_model()
    if kind == "user":
        users = list(User.objects.filter(username=name, is_active=True))
        if not users:
            result.problem = f"No active user named {name!r}."
    else:
        group = Group.objects.filter(name=name).first()
        users = list(group.user_set.filter(is_active=True).order_by("username")) if group else []
        if not users:
            result.problem = f"The role {name!r} has no current holder."
    for user in users:
        identities = list(ChatIdentity.objects.filter(user=user, is_bot=False).order_by("platform", "id"))
        result.holders.append((user, identities))
    return result
