"""Leases with slots: claims, exactly-once commits of each slot, timer steps, heartbeats, the sweeper."""
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from facilitation.actions import lifecycle
from facilitation.runs import leases, scheduling, sweeper
from facilitation.runs.models import StepLease
from facilitation.runs.scheduling import inline
from rooms.models import Room
from tests.factories import make_discussion, make_user

pytestmark = pytest.mark.django_db


_people = iter(range(1, 1000))


def started_room(**extra):
    room = make_discussion(make_user(f"owner{next(_people)}"), **extra)
    with inline():
        lifecycle.do_start_discussion(room)
    return room


def finish(claim, **kwargs):
    with transaction.atomic():
        Room.objects.select_for_update().get(pk=claim.room_id)
        return leases.finish(claim, **kwargs)


def test_a_started_room_has_one_ready_slot_and_one_claim_wins():
    room = started_room()
    step = leases.current(room.pk)
    assert (step.step_seq, step.slots) == (1, 1)
    first = leases.claim_step(room.pk, 1, 60, 0)
    assert first is not None and first[1].pk == room.pk and first[0].attempt == 1
    assert leases.claim_step(room.pk, 1, 60, 0) is None  # held
    assert leases.claim_step(room.pk, 2, 60, 0) is None  # not the current step
    assert leases.held(room.pk)


def test_finishing_a_one_slot_step_opens_the_next_and_only_once():
    room = started_room()
    claim, _ = leases.claim_step(room.pk, 1, 60, 0)
    done = finish(claim)
    assert done.next.step_seq == 2 and done.next.slots == 1
    assert finish(claim) is None  # the same lease cannot finish twice
    assert leases.current(room.pk).step_seq == 2 and not leases.held(room.pk)


def test_every_slot_of_a_step_commits_once_and_the_last_one_opens_the_next_step():
    room = started_room()
    with transaction.atomic():
        opened = leases.open_step(room.pk, slots=3)
    assert opened.slots == 3
    claims = [leases.claim_step(room.pk, opened.step_seq, 60, slot)[0] for slot in range(3)]
    assert leases.claim_step(room.pk, opened.step_seq, 60, 1) is None
    assert {c.correlation for c in claims} == {f"{room.pk}:{opened.step_seq}:1:{s}" for s in range(3)}
    assert finish(claims[1]).next is None
    assert finish(claims[1]) is None
    assert finish(claims[0]).next is None
    last = finish(claims[2], next_slots=2)
    assert last.next.step_seq == opened.step_seq + 1 and last.next.slots == 2
    # The finished slots cannot be claimed for the old step; the new step has two fresh slots.
    assert leases.claim_step(room.pk, opened.step_seq, 60, 0) is None
    assert leases.claim_step(room.pk, last.next.step_seq, 60, 1) is not None
    assert leases.claim_step(room.pk, last.next.step_seq, 60, 2) is None  # beyond this step's slots


def test_opening_a_step_reads_the_rooms_slots_once_and_adds_only_the_missing_ones():
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    room = started_room()
    with CaptureQueriesContext(connection) as seen, transaction.atomic():
        opened = leases.open_step(room.pk, slots=2)
    reads = [q["sql"] for q in seen.captured_queries if q["sql"].startswith("SELECT") and "facilitation_steplease" in q["sql"]]
    assert len(reads) == 1, reads
    assert opened.step_seq == 2 and opened.slots == 2
    assert sorted(StepLease.objects.filter(room_id=room.pk).values_list("slot", "step_seq", "done")) == [(0, 2, False), (1, 2, False)]
    with transaction.atomic():
        again = leases.open_step(room.pk)
    assert again.step_seq == 3
    assert sorted(StepLease.objects.filter(room_id=room.pk).values_list("slot", "step_seq", "done")) == [(0, 3, False), (1, 3, True)]


def test_a_lease_taken_over_after_it_expired_cannot_commit():
    room = started_room()
    stale, _ = leases.claim_step(room.pk, 1, 60, 0)
    StepLease.objects.filter(room=room).update(lease_until=timezone.now() - timedelta(seconds=1))
    fresh, _ = leases.claim_step(room.pk, 1, 60, 0)
    assert fresh.attempt == 2
    assert not leases.still_ours(stale) and leases.still_ours(fresh)
    assert finish(stale) is None
    assert finish(fresh) is not None


def test_a_stop_takes_every_slot_away():
    room = started_room()
    with transaction.atomic():
        opened = leases.open_step(room.pk, slots=2)
    claims = [leases.claim_step(room.pk, opened.step_seq, 60, s)[0] for s in range(2)]
    lifecycle.do_stop_discussion(room)
    assert not any(leases.still_ours(c) for c in claims)
    assert not any(leases.extend(c, 60) for c in claims)
    assert all(finish(c) is None for c in claims)


def test_a_heartbeat_extends_the_lease_and_a_pause_keeps_it():
    room = started_room()
    claim, _ = leases.claim_step(room.pk, 1, 2, 0)
    before = StepLease.objects.get(room=room).lease_until
    lifecycle.do_pause_discussion(room)
    assert leases.extend(claim, 120)
    assert StepLease.objects.get(room=room).lease_until > before + timedelta(seconds=100)


@pytest.mark.parametrize("beat", [True, False])
def test_a_lease_check_that_meets_a_database_error_lets_the_call_go_on(monkeypatch, beat):
    from django.db import OperationalError

    from facilitation.runs import registry

    room = started_room()
    claim, claimed = leases.claim_step(room.pk, 1, 6, 0)
    run = registry.StepRun(claim=claim, room=claimed, step=None, lease=6)
    if beat:
        run._next_beat = 0  # a heartbeat is due
    checked = []

    def away(*args):
        checked.append(args[0])
        raise OperationalError("the database system is shutting down")

    monkeypatch.setattr(registry, "extend", away)
    monkeypatch.setattr(registry, "still_ours", away)
    assert run.abandoned() is False  # nobody can take the lease while the database is away: the call goes on
    assert checked == [claim]
    monkeypatch.undo()
    lifecycle.do_stop_discussion(room)
    assert run.abandoned() is True  # once it answers, a stop is seen as before


def test_a_step_ready_later_is_not_claimable_before_its_time():
    room = started_room()
    with transaction.atomic():
        opened = leases.open_step(room.pk, ready_at=timezone.now() + timedelta(minutes=5))
    assert leases.claim_step(room.pk, opened.step_seq, 60, 0) is None
    assert leases.stranded(0) == []  # waiting for its time is not stranded
    StepLease.objects.filter(room=room).update(ready_at=timezone.now() - timedelta(seconds=1))
    assert leases.claim_step(room.pk, opened.step_seq, 60, 0) is not None


def test_the_sweeper_resends_expired_and_forgotten_slots_by_task_name(monkeypatch):
    from celery import current_app

    sent = []
    monkeypatch.setattr(current_app, "send_task", lambda name, args=None, **options: sent.append((name, list(args), options["queue"])))
    waiting = started_room()
    expired = started_room()
    leases.claim_step(expired.pk, 1, 60, 0)
    StepLease.objects.filter(room=expired).update(lease_until=timezone.now() - timedelta(seconds=1))
    paused = started_room()
    lifecycle.do_pause_discussion(paused)
    StepLease.objects.update(ready_at=timezone.now() - timedelta(seconds=30))
    assert sweeper.sweep(stale_seconds=15) == 2
    assert sorted(sent) == sorted([(scheduling.RUN_STEP_TASK, [waiting.pk, 1, 0], "turns"), (scheduling.RUN_STEP_TASK, [expired.pk, 1, 0], "turns")])
    # A slot just re-sent waits another stale period before it is sent again.
    assert sweeper.sweep(stale_seconds=15) == 1  # only the expired lease, still expired


def test_a_ready_step_is_sent_by_name_once_the_transaction_commits(monkeypatch, django_capture_on_commit_callbacks):
    from celery import current_app

    sent = []
    monkeypatch.setattr(current_app, "send_task", lambda name, args=None, **options: sent.append((name, list(args), options)))
    room = make_discussion(make_user())
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        lifecycle.do_start_discussion(room)
    assert sent == []  # nothing before the commit
    for callback in callbacks:
        callback()
    assert [(n, a, o["queue"]) for n, a, o in sent] == [(scheduling.RUN_STEP_TASK, [room.pk, 1, 0], "turns")]
    assert not sent[0][2].get("countdown")


def test_a_step_made_ready_inline_is_not_sent(monkeypatch, django_capture_on_commit_callbacks):
    from celery import current_app

    sent = []
    monkeypatch.setattr(current_app, "send_task", lambda *a, **k: sent.append(a))
    room = make_discussion(make_user())
    with django_capture_on_commit_callbacks(execute=True), inline():
        lifecycle.do_start_discussion(room)
    assert sent == []


def test_a_paused_room_is_not_claimable_and_the_try_costs_no_attempt():
    room = started_room()
    lifecycle.do_pause_discussion(room)
    assert leases.claim_step(room.pk, 1, 60, 0) is None
    row = StepLease.objects.get(room=room, slot=0)
    assert (row.attempt, row.token, row.lease_until) == (0, "", None)
