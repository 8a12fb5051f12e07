"""Who may read and change what, for the API: thin wrappers over ``rooms.access``.

A discussion the caller may not view is 404 (its existence is not revealed); one
they may view but not control is 403 on changes. Catalog rows (agents, personas,
roles) are visible when built-in or the caller's own (staff see all); built-ins
are read-only (403, enforced by the catalog actions).
"""
from rooms.access import can_control, can_participate, can_view
from rooms.queries import usable_by
from rooms.errors import Forbidden, NotFound
from rooms.models import Room

MAX_ID = 2**63 - 1


def _room(pk: int) -> Room | None:
    if pk > MAX_ID:
        return None
    return Room.objects.select_related("owner", "moderator").filter(pk=pk).first()


def viewable_room(user, pk: int) -> Room:
    room = _room(pk)
    if room is None or not can_view(user, room):
        raise NotFound("No such discussion.")
    return room


def controllable_room(user, pk: int) -> Room:
    room = viewable_room(user, pk)
    if not can_control(user, room):
        raise Forbidden("Only the owner of this discussion or staff may do this.")
    return room


def participating_room(user, pk: int) -> Room:
    """A room the caller may write in as a participant (owner, staff, or a member with participant access)."""
    room = viewable_room(user, pk)
    if not can_participate(user, room):
        raise Forbidden("Viewers cannot change this discussion.")
    return room


def access_of(user, room: Room, member_access: str | None = None) -> str:
    """The caller's access to a room they can view: owner, staff, participant or viewer."""
    if room.owner_id == user.pk:
        return "owner"
    if user.is_staff:
        return "staff"
    return member_access or "viewer"


def catalog_row(model, user, pk: int, what: str):
    row = usable_by(model, user).filter(pk=pk).first() if pk <= MAX_ID else None
    if row is None:
        raise NotFound(f"No such {what}.")
    return row

