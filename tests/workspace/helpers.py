"""Building workspace rooms for tests, and running their steps in this process."""
from facilitation.management.inline import run_ready
from facilitation.runs import leases
from rooms.actions.rooms import do_create_room
from rooms.models import Persona, RoomMember, Seat
from tests.factories import make_facilitator, make_participant

TOPIC = "Move the billing service from cron jobs to an event queue without losing invoices"


def make_workspace(owner, *, agents=3, turn_policy=None, name="Billing migration", viewer=None, participant=None):
    fac = make_facilitator(f"Narrator {owner.username}", key=f"narrator-{owner.username}-{Seat.objects.count()}")
    people = [make_participant(f"Agent{i}-{owner.username}", alias=f"ws{i}-{owner.username}-{Persona.objects.count()}")
              for i in range(agents)]
    room = do_create_room(owner, name=name, topic=TOPIC, kind="workspace", moderator_id=fac.pk,
                          participants=[{"agent_id": a.pk, "role": "participant"} for a in people], turn_policy=turn_policy)
    for user, access in ((viewer, "viewer"), (participant, "participant")):
        if user is not None:
            RoomMember.objects.create(room=room, user=user, access=access)
    return room


def agent_seats(room):
    return list(Seat.objects.filter(room=room, role="participant").order_by("position"))


def run_round_work(room):
    """Run what the room's steps can run now (its agents, a close and the next round's agents), in this process."""
    return run_ready(room.pk)


def clock_slot(room):
    """``(step_seq, slot)`` of the open round's clock: the last slot of the round's step."""
    step = leases.current(room.pk)
    return step.step_seq, step.slots - 1
