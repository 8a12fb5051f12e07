"""Pages: server-rendered shells whose data comes from the REST API and Socket.IO.

No domain logic lives here. The room page runs the same access rule as the API
(``rooms.access.can_view``) so a person without access gets a plain "not found"
page instead of an empty shell.
"""
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.templatetags.static import static

from rooms.access import can_control, can_view
from rooms.models import Room


def _page(request, template: str, page: dict | None = None, status: int = 200):
    data = {"user": request.user.get_username(), **(page or {})}
    return render(request, template, {"page_data": data}, status=status)


@login_required
def discussion_list(request):
    return _page(request, "frontend/discussion_list.html")


@login_required
def discussion_new(request):
    convene = settings.CONVENE
    return _page(request, "frontend/wizard.html", {
        "defaultMaxRounds": convene["DEFAULT_MAX_ROUNDS"],
        "maxRoundsLimit": convene["MAX_ROUNDS_LIMIT"],
        "defaultProvider": convene["DEFAULT_PROVIDER"],
        "defaultModel": convene.get("DEFAULT_MODEL") or "",
        "modelTiers": getattr(settings, "MODEL_TIERS", {}),
        "prices": getattr(settings, "LLM_PRICES", {}),
    })


@login_required
def discussion_room(request, discussion_id: int):
    room = Room.objects.filter(pk=discussion_id).first()
    if room is None or not can_view(request.user, room):
        return render(request, "frontend/not_found.html", {"discussion_id": discussion_id}, status=404)
    return _page(request, "frontend/room.html", {
        "discussionId": room.pk,
        "canControl": can_control(request.user, room),
    })


@login_required
def facilitators(request):
    return _page(request, "frontend/facilitators.html", {
        "defaultModel": settings.CONVENE.get("DEFAULT_MODEL") or "",
        "modelTiers": getattr(settings, "MODEL_TIERS", {}),
    })


def favicon(request):
    return redirect(static("convene/favicon.svg"), permanent=True)
