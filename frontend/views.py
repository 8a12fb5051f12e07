"""Pages: server-rendered shells whose data comes from the REST API and Socket.IO.

No domain logic lives here. The room page runs the same access rule as the API
(``rooms.access.can_view``) so a person without access gets a plain "not found"
page instead of an empty shell.
"""
from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.templatetags.static import static

from facilitation.actions.inputs import MAX_BIG, MAX_USD
from facilitation.actions.lifecycle import verbs_by_status
from facilitation.goals.creation import PERMISSION as RUN_PERMISSION
from facilitation.goals.patterns import MAX_ITEMS as RUN_MAX_ITEMS
from facilitation.goals.texts import STATE_WORDS as RUN_STATES
from facilitation.llm.registry import PROVIDERS
from facilitation.workspace import inputs as workspace_inputs
from facilitation.workspace.actions.rounds import DEFAULT_POLICY, POLICY_LIMITS
from rooms import limits
from rooms.access import can_control, can_participate, can_view
from rooms.actions.chat import typed_command
from rooms.events.types import client_names
from rooms.models import Room
from rooms.queries import measured_latency


def _page(request, template: str, page: dict | None = None, status: int = 200):
    data = {"user": request.user.get_username(), **(page or {})}
    # Socket.IO names come from rooms.events.types; the page hands them to live.js.
    return render(request, template, {"page_data": data, "socket_names": client_names()}, status=status)


class SignInView(auth_views.LoginView):
    """Sign-in; under ``make demo`` it says where the demo account's password is (its terminal)."""

    template_name = "frontend/login.html"
    redirect_authenticated_user = True

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "demo_account": getattr(settings, "CONVENE_DEMO_ACCOUNT", "")}


@login_required
def discussion_list(request):
    return _page(request, "frontend/discussion_list.html", {"canStartRuns": request.user.has_perm(RUN_PERMISSION),
                                                             "runStates": RUN_STATES})


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
        "latency": measured_latency(),
        "rehearsalPace": convene.get("REHEARSAL_PACE") or 0,
        "idlePauseSeconds": convene["WORKSPACE_IDLE_PAUSE"],
        "idleRounds": convene["WORKSPACE_IDLE_ROUNDS"],
        "roundPolicy": DEFAULT_POLICY, "roundPolicyLimits": POLICY_LIMITS,
        "topicLimit": limits.TOPIC,
    })


@login_required
def discussion_room(request, discussion_id: int):
    room = Room.objects.filter(pk=discussion_id).first()
    if room is None or not can_view(request.user, room):
        return render(request, "frontend/not_found.html", {"discussion_id": discussion_id}, status=404)
    if room.kind == Room.Kind.WORKSPACE:
        return redirect("frontend:workspace", discussion_id=room.pk)
    return _page(request, "frontend/room.html", {
        "discussionId": room.pk,
        "kind": room.kind,
        "canControl": can_control(request.user, room),
        "canParticipate": can_participate(request.user, room),
        "controls": verbs_by_status(),  # the lifecycle table: verbs allowed from each status
        "owner": room.owner.get_username() if room.owner_id else "",
        "runStates": RUN_STATES if room.kind == Room.Kind.FACILITATION else {},
        # How a Teams group types the join command: the bot @mentioned by its name there.
        "teamsStart": typed_command("teams", "facilitator start") if room.kind == Room.Kind.FACILITATION else "",
    })


@login_required
def workspace_desk(request, discussion_id: int):
    """The manager's desk of a workspace room (read-only for people who may only view it); a room of
    another kind is shown on its own page."""
    room = Room.objects.filter(pk=discussion_id).first()
    if room is None or not can_view(request.user, room):
        return render(request, "frontend/not_found.html", {"discussion_id": discussion_id}, status=404)
    if room.kind != Room.Kind.WORKSPACE:
        return redirect("frontend:discussion", discussion_id=room.pk)
    return _page(request, "frontend/workspace.html", {
        "discussionId": room.pk,
        "kind": room.kind,
        "canControl": can_control(request.user, room),
        "canParticipate": can_participate(request.user, room),
        "idlePauseSeconds": settings.CONVENE["WORKSPACE_IDLE_PAUSE"],
        "idleRounds": settings.CONVENE["WORKSPACE_IDLE_ROUNDS"],
        "narrativeLimit": workspace_inputs.NARRATIVE,  # the most characters a narrative's text may have, as the server checks it
        "taskDescriptionLimit": workspace_inputs.COMMENT,  # and a task's description
        "budgetUsdLimit": float(MAX_USD),  # the largest budget in USD the server takes
        "budgetTokensLimit": MAX_BIG,  # and in tokens
    })


@login_required
def run_new(request):
    """The form that sets up a facilitation run (for people with the permission to start one)."""
    convene = settings.CONVENE
    return _page(request, "frontend/run_new.html", {
        "canStartRuns": request.user.has_perm(RUN_PERMISSION),
        "defaultTtlHours": convene["FACILITATION_DEFAULT_TTL_HOURS"],
        "maxTtlHours": convene["FACILITATION_MAX_TTL_HOURS"],
        "maxListItems": RUN_MAX_ITEMS,  # the most items a list run may ask for, as the server checks it
        "topicLimit": limits.TOPIC,  # the most characters a goal may have, as the server checks it
    })


@login_required
def facilitators(request):
    return _page(request, "frontend/facilitators.html", {
        "defaultModel": settings.CONVENE.get("DEFAULT_MODEL") or "",
        "modelTiers": getattr(settings, "MODEL_TIERS", {}),
    })


@login_required
def agents(request):
    """The agents people take part in discussions with: the built-ins, and their own to create, edit and delete."""
    convene = settings.CONVENE
    return _page(request, "frontend/agents.html", {
        "defaultModel": convene.get("DEFAULT_MODEL") or "",
        "defaultProvider": convene["DEFAULT_PROVIDER"],
        "providers": list(PROVIDERS),  # what an agent's provider may be, as the API checks it ("" is the default)
        "modelTiers": getattr(settings, "MODEL_TIERS", {}),
    })


def favicon(request):
    return redirect(static("convene/favicon.svg"), permanent=True)
