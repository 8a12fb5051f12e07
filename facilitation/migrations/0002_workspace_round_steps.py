"""Workspace rounds run on step leases: a workspace running at the upgrade gets its current step.

Before, a workspace's rounds ran on their own Celery tasks and had no ``StepLease`` rows. An active
or paused workspace now gets the step it is in: an ended round waiting for its narrative (one
slot), or its open round (one slot per agent seat, then the round's clock). The sweeper sends an
active room's ready slots; seats whose round was already written finish their slot without
writing again.
"""
from datetime import timedelta

from django.db import migrations
from django.utils import timezone

SPEAKING = ("participant", "devil_advocate")


def open_current_steps(apps, schema_editor):
    Room = apps.get_model("rooms", "Room")
    Turn = apps.get_model("rooms", "Turn")
    Seat = apps.get_model("rooms", "Seat")
    Narrative = apps.get_model("rooms", "Narrative")
    StepLease = apps.get_model("facilitation", "StepLease")
    now = timezone.now()
    rows = []
    for room in Room.objects.filter(kind="workspace", status__in=("active", "paused"), round__gt=0, step_leases__isnull=True):
        if room.round >= 2 and not Narrative.objects.filter(room=room, round=room.round - 1).exists():
            rows.append(StepLease(room=room, slot=0, step_seq=1, slots=1, ready_at=now))
            continue
        turn = Turn.objects.filter(room=room, number=room.round, ended_at__isnull=True).first()
        if turn is None:
            continue
        agents = Seat.objects.filter(room=room, agent__isnull=False, is_active=True, role__in=SPEAKING).count()
        seconds = int((room.turn_policy or {}).get("maxSeconds", 300))
        clock = max(now, turn.started_at + timedelta(seconds=seconds))
        rows += [StepLease(room=room, slot=slot, step_seq=1, slots=agents + 1, ready_at=now if slot < agents else clock)
                 for slot in range(agents + 1)]
    StepLease.objects.bulk_create(rows)


class Migration(migrations.Migration):

    dependencies = [
        ("facilitation", "0001_step_leases"),
        ("rooms", "0015_observation_search_vector"),
    ]

    operations = [migrations.RunPython(open_current_steps, migrations.RunPython.noop)]
