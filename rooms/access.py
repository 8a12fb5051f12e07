"""Who may see and change a room. One rule serves REST, Socket.IO and exports."""
from django.db.models import Q, QuerySet

from rooms.models import Room, RoomMember


def visible_rooms(user) -> QuerySet[Room]:
    if not user or not user.is_authenticated:
        return Room.objects.none()
    if user.is_staff:
        return Room.objects.all()
    return Room.objects.filter(Q(owner=user) | Q(members__user=user)).distinct()


def _membership(user, room: Room) -> str | None:
    return RoomMember.objects.filter(room=room, user=user).values_list("access", flat=True).first()


def can_view(user, room: Room) -> bool:
    if not user or not user.is_authenticated:
        return False
    if user.is_staff or room.owner_id == user.pk:
        return True
    return _membership(user, room) is not None


def can_participate(user, room: Room) -> bool:
    """May post where the room allows people to speak."""
    if not user or not user.is_authenticated:
        return False
    if user.is_staff or room.owner_id == user.pk:
        return True
    return _membership(user, room) == RoomMember.Access.PARTICIPANT


def can_control(user, room: Room) -> bool:
    """May change, run, share and delete the room: its owner and staff."""
    return bool(user and user.is_authenticated and (user.is_staff or room.owner_id == user.pk))
