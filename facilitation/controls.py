"""One lifecycle control (start, pause, resume, stop, conclude) by the action for the room's kind.

A facilitation run opens with its handshake and stops with its closing message and report
(``facilitation.goals.actions``); a workspace runs its rounds; a discussion its engine steps
(``facilitation.actions.lifecycle``). The POST routes, ``PATCH {"status"}`` and the socket controls
all come here, so a run never ends as a room while it stays live as a run.
"""
from facilitation.actions import lifecycle
from facilitation.goals import actions as goals
from facilitation.workspace.actions.lifecycle import do_control_workspace
from rooms.errors import StateConflict
from rooms.models import Room

S = Room.Status


def verb_for(room: Room, target: str) -> str | None:
    """The control that takes ``room`` to the status ``target`` (``PATCH {"status"}``), or None. A run waiting for
    its group can be stopped too, as ``POST .../stop`` stops it."""
    verb = lifecycle.verb_for(target, room.status)
    if verb is None and room.kind == Room.Kind.FACILITATION and target == S.STOPPED:
        return "stop"
    return verb


def control_room(room: Room, verb: str, user) -> Room:
    if room.kind == Room.Kind.FACILITATION and verb in ("start", "stop"):
        if verb == "start":
            goals.do_open_run(room.pk, initiator_name=user.get_full_name() or user.get_username(),
                              initiator_user=user, initiator_key=f"user:{user.pk}")
        else:
            goals.do_stop_run(room.pk, user)
        return Room.objects.get(pk=room.pk)
    if room.kind == Room.Kind.FACILITATION and verb in ("conclude", "pause"):
        # The discussion engine never runs a run: it ends when its group confirms the outcome, or with stop; and the
        # facilitator keeps reading the group while it runs, so a pause would only say what is not so.
        raise StateConflict(f"A facilitation run cannot {verb} this way: it ends when the group confirms its outcome, "
                            "or stop it to end it with its partial result.", {"status": room.status},
                            code="invalid_transition")
    if room.kind == Room.Kind.WORKSPACE:
        return do_control_workspace(room, verb, user)
    return lifecycle.run(verb, room, actor=user)
