"""Read helpers shared by actions and views."""
from django.db.models import Q, QuerySet

from rooms.models import Agent


def usable_agents(user) -> QuerySet[Agent]:
    """Agents a user may seat in a room: the built-ins and their own."""
    if user is not None and getattr(user, "is_staff", False):
        return Agent.objects.all()
    if user is None or not user.is_authenticated:
        return Agent.objects.filter(is_builtin=True)
    return Agent.objects.filter(Q(is_builtin=True) | Q(created_by=user))
