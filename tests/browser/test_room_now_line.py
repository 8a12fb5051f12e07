"""The room page says what is happening now, under the timeline: who is answering, that the facilitator weighs
the last answer or writes the conclusion, or who speaks next once a paused discussion resumes."""
import pytest

from rooms.actions.rooms import do_create_room
from rooms.events import EventType, build, record_event
from rooms.events.log import next_seq
from rooms.models import Agent, Observation, Room, Seat

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _set_status(room, status):
    Room.objects.filter(pk=room.pk).update(status=status)
    room.refresh_from_db()
    record_event(room, EventType.STATUS, build.status(room))


def _decide(room, chair, decision, next_seat=None):
    data = {"decision": decision, "nextParticipantId": next_seat.pk if next_seat else None, "question": "Which cache?",
            "reasoning": "Next.", "fallback": None, "progress": {}}
    seq = next_seq(room)
    obs = Observation.objects.create(room=room, seq=seq, seat=chair, author_name=chair.display_name, round=room.round,
                                     author_kind="facilitator", kind="decision", content="Which cache?", data=data)
    record_event(room, EventType.MODERATOR, build.moderator(obs, data, room.round), seq=seq)


def _answer(room, seat):
    seq = next_seq(room)
    obs = Observation.objects.create(room=room, seq=seq, seat=seat, author_name=seat.display_name, round=1,
                                     kind="contribution", content="Cache the catalogue.")
    record_event(room, EventType.TURN, build.turn(obs, role=seat.role), seq=seq)


def test_the_room_says_who_is_answering_and_what_the_facilitator_does(make_page):
    page, owner = make_page("nora")
    chair = Agent.objects.get(is_builtin=True, name="The Impartial Chair")
    architect = Agent.objects.get(is_builtin=True, alias="architect")
    room = do_create_room(owner, name="Now", topic="Which cache?", moderator_id=chair.pk,
                          participants=[{"agent_id": architect.pk, "role": "participant"}])
    seats = {s.role: s for s in room.seats.all()}
    chair_seat, speaker = seats[Seat.Role.FACILITATOR], seats[Seat.Role.PARTICIPANT]
    page.goto(f"/discussions/{room.pk}/")
    page.wait_for_function("() => window.convene.live.joined")
    now = page.locator("#now")
    assert now.is_hidden()  # a draft: nothing runs

    def says(text):
        page.wait_for_function("t => document.querySelector('#now').textContent === t && !document.querySelector('#now').hidden", arg=text)

    _set_status(room, "active")  # set by hand: no step is scheduled
    says("The facilitator is opening the discussion…")
    _decide(room, chair_seat, "continue", speaker)
    says("Architect is answering…")
    _set_status(room, "paused")
    says("Paused: Architect speaks next when the discussion resumes.")
    _set_status(room, "active")
    _answer(room, speaker)
    says("The facilitator is weighing the last answer and choosing who speaks next…")
    _decide(room, chair_seat, "synthesize")
    says("The facilitator is writing the conclusion…")

    # A reload reads the same from the transcript.
    page.reload()
    says("The facilitator is writing the conclusion…")
    _set_status(room, "concluded")
    now.wait_for(state="hidden")
    assert not page.errors, page.errors
