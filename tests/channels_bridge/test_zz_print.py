from facilitation.actions.lifecycle import do_start_discussion
from facilitation.management.inline import drive_inline
from facilitation.runs.scheduling import inline
from tests.channels_bridge.test_telegram_flow import *  # noqa
from tests.channels_bridge.test_telegram_flow import linked, GROUP


def test_print(telegram, post_telegram, run_tasks, room, owner):
    linked(post_telegram, run_tasks, room, owner)
    post_telegram(tu.message(GROUP, ANA, "I think caching the catalogue is fine but **not** prices."))
    run_tasks()
    with inline():
        committed(do_start_discussion, room.pk)
        committed(drive_inline, room.pk, provider="rehearsal")
    run_tasks()
    for m in telegram.sent_to(-4001):
        print("----", {k: v for k, v in m.items() if k not in ("text", "chat_id")})
        print(m["text"][:700])
    from rooms.models import Room
    r = Room.objects.get(pk=room.pk)
    print("STATUS", r.status, r.chat_linked, Observation.objects.filter(room=room).count(), Delivery.objects.filter(room=room).count())
    print(list(Delivery.objects.filter(room=room).values_list("status", "kind")[:5]))
    from rooms import dispatch
    print("SENT", dispatch.sent[:5])
    print("DRAIN", run_tasks()[:10])
    for m in telegram.sent_to(-4001)[2:]:
        print("----", {k: v for k, v in m.items() if k not in ("text", "chat_id")})
        print(m["text"][:900])
