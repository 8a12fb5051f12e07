"""Teams: the JWT on every request, activities parsed with the Agents SDK schema, and sending through the connector."""
import pytest

from channels_bridge.models import InboundUpdate
from facilitation.actions.comments import do_post_comment
from rooms import dispatch
from rooms.actions.chat import do_create_room_code
from rooms.actions.deliveries import compose, queue_direct, queue_post, queue_status
from rooms.models import Chat, ChatIdentity, ChatLink, ChatMember, Delivery, Observation
from tests.channels_bridge.conftest import committed
from tests.factories import make_discussion, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(teams):
    return {"ana": teams.account(1, "Ana Lima"), "ben": teams.account(2, "Ben Okafor")}


@pytest.fixture
def chat_conv(teams):
    return teams.conversation("19:roles_chat@thread.v2", "groupChat")


# --- verification -----------------------------------------------------------------------------


def test_a_verified_activity_is_stored_once(teams, post_teams, people, chat_conv):
    activity = teams.message(chat_conv, people["ana"], "hello")
    assert post_teams(activity).status_code == 200
    assert post_teams(activity).status_code == 200  # the connector retried
    row = InboundUpdate.objects.get()
    assert row.platform == "teams" and row.service_url == teams.service_url
    assert [name for name, _, _ in dispatch.sent] == ["bridge.process_update"]


def test_a_nul_character_in_an_activity_is_dropped_before_it_is_stored(teams, post_teams, chat_conv):
    """PostgreSQL refuses U+0000 in JSON: the activity is stored without it on every backend (no 500 the connector
    would retry)."""
    import json

    activity = teams.message(chat_conv, teams.account(3, "Cy\x00"), "Lead\x00 for me")
    assert post_teams(activity).status_code == 200
    stored = InboundUpdate.objects.get().payload
    assert "\\u0000" not in json.dumps(stored) and stored["from"]["name"] == "Cy"


@pytest.mark.parametrize("forge", ["missing", "not-bearer", "garbage", "unknown-key", "wrong-audience", "wrong-issuer",
                                   "expired", "other-service-url", "unendorsed-channel", "hs256"])
def test_a_forged_request_is_401_and_changes_nothing(teams, post_teams, people, chat_conv, forge):
    import jwt as pyjwt

    from tests.fakes.botframework import SigningKey

    activity = teams.message(chat_conv, people["ana"], "hello")
    auth = {
        "missing": "",
        "not-bearer": f"Basic {teams.sign()}",
        "garbage": "Bearer not.a.token",
        "unknown-key": f"Bearer {teams.sign(key=SigningKey())}",  # signed by a key the JWKS does not publish
        "wrong-audience": teams.authorization(audience="someone-else"),
        "wrong-issuer": teams.authorization(issuer="https://evil.example"),
        "expired": teams.authorization(expires_in=-600),
        "other-service-url": teams.authorization(service_url="https://attacker.example/"),
        "unendorsed-channel": None,
        "hs256": "Bearer " + pyjwt.encode({"iss": "https://api.botframework.com", "aud": teams.app_id, "exp": 2**31,
                                           "serviceurl": teams.service_url}, "a-shared-secret-that-is-long-enough-0123", algorithm="HS256"),
    }[forge]
    if forge == "unendorsed-channel":
        activity["channelId"] = "slack"
        auth = teams.authorization()
    response = post_teams(activity, authorization=auth)
    assert response.status_code == 401
    assert InboundUpdate.objects.count() == 0 and dispatch.sent == []


@pytest.mark.parametrize("service_url, accepted", [
    ("https://attacker.example/amer/", False), ("http://smba.trafficmanager.net/amer/", False),
    ("https://smba.trafficmanager.net.attacker.example/", False), ("https://evilteams.microsoft.com/", False),
    ("https://smba.trafficmanager.net/amer/", True), ("https://smba.infra.gcc.teams.microsoft.com/", True)])
def test_an_activity_for_a_service_url_that_is_not_teams_is_401_and_changes_nothing(teams, post_teams, people, chat_conv,
                                                                                    service_url, accepted):
    """A validly signed token whose serviceurl (the activity's too) is not the Bot Connector for Teams is refused: the
    bot would send its own token there with every answer."""
    activity = {**teams.message(chat_conv, people["ana"], "hello"), "serviceUrl": service_url}
    response = post_teams(activity, authorization=teams.authorization(service_url=service_url))
    assert response.status_code == (200 if accepted else 401), response.content
    assert InboundUpdate.objects.count() == (1 if accepted else 0) and len(dispatch.sent) == (1 if accepted else 0)


def test_a_malformed_activity_is_400(teams, post_teams):
    deep = '{"type": "message", "x": ' + '{"a": ' * 100 + "1" + "}" * 101
    for body in ("{nope", '{"type": "message"}', "[]", deep, "[" * 100000):
        assert post_teams(body).status_code == 400
    assert InboundUpdate.objects.count() == 0


def test_keys_are_cached_and_fetched_again_for_an_unknown_key_id(teams, post_teams, people, chat_conv):
    post_teams(teams.message(chat_conv, people["ana"], "one"))
    post_teams(teams.message(chat_conv, people["ana"], "two"))
    assert teams.key_requests == 1
    new_key = teams.rotate()
    assert post_teams(teams.message(chat_conv, people["ana"], "three"), authorization=teams.authorization(key=new_key)).status_code == 200
    assert teams.key_requests == 2 and InboundUpdate.objects.count() == 3


# --- inbound ----------------------------------------------------------------------------------


def test_the_bot_added_knows_its_inviter_and_the_roster(teams, post_teams, run_tasks, people, chat_conv):
    teams.members[chat_conv["id"]] = [{**people["ana"], "email": "ana@example.org", "userPrincipalName": "ana@example.org"},
                                      {**people["ben"]}]
    post_teams(teams.bot_added(chat_conv, people["ana"]))
    run_tasks()
    chat = Chat.objects.get(platform="teams")
    assert chat.kind == "group" and chat.platform_type == "groupChat" and chat.tenant_id == teams.tenant_id
    assert chat.added_by.external_id == people["ana"]["id"] and chat.service_url == teams.service_url
    roster = set(ChatMember.objects.filter(chat=chat).values_list("identity__name", flat=True))
    assert roster == {"Ana Lima", "Ben Okafor"}
    assert "@Convene facilitator start CODE" in teams.sent_to(chat_conv["id"])[0]["activity"]["text"]


def test_every_hint_says_how_a_command_is_typed_on_teams(teams, post_teams, run_tasks, people, chat_conv):
    """On Teams a group command works only after the bot's @mention (with the name Teams shows), and a personal
    chat takes ``start CODE``: the greeting, the help, the link's and the stop's answers say exactly that."""
    teams.bot_name = "Fox Facilitator"
    owner = make_user("olga")
    room = make_discussion(owner)
    post_teams(teams.bot_added(chat_conv, people["ana"]))
    run_tasks()
    greeting = teams.sent_to(chat_conv["id"])[-1]["activity"]["text"]
    assert "@Fox Facilitator facilitator start CODE" in greeting and "/facilitator" not in greeting
    # Typed as the hint says (the mention, then the words), the command works: here, the help.
    post_teams(teams.message(chat_conv, people["ben"], "facilitator help"))
    run_tasks()
    help_text = teams.sent_to(chat_conv["id"])[-1]["activity"]["text"]
    for verb in ("start CODE", "status", "stop"):
        assert f"@Fox Facilitator facilitator {verb}" in help_text
    assert "/facilitator" not in help_text
    # Without the mention a slash command is an ordinary message: nothing answers it.
    sent = len(teams.sent_to(chat_conv["id"]))
    post_teams(teams.message(chat_conv, people["ben"], "/facilitator status", mention_bot=False))
    run_tasks()
    assert len(teams.sent_to(chat_conv["id"])) == sent
    code = committed(do_create_room_code, room, owner)
    post_teams(teams.message(chat_conv, people["ana"], f"facilitator start {code.code}"))
    run_tasks()
    linked = teams.sent_to(chat_conv["id"])[-1]["activity"]["text"]
    assert "@Fox Facilitator facilitator status tells more; @Fox Facilitator facilitator stop ends it." in linked
    post_teams(teams.message(chat_conv, people["ben"], "facilitator start"))
    run_tasks()
    assert teams.sent_to(chat_conv["id"])[-1]["activity"]["text"].startswith("Send @Fox Facilitator facilitator start CODE")
    # A personal chat: "start CODE", no slash, no mention.
    personal = teams.conversation("a:1personal-ben", "personal")
    post_teams(teams.message(personal, people["ben"], "hello", mention_bot=False))
    run_tasks()
    direct = teams.sent_to(personal["id"])[-1]["activity"]["text"]
    assert "send start CODE here" in direct and "/start" not in direct
    # The bot's own account is known by the name Teams shows.
    assert ChatIdentity.objects.get(external_id=teams.bot_id).name == "Fox Facilitator"


def test_link_relay_and_no_echo(teams, post_teams, run_tasks, people, chat_conv):
    from facilitation.actions.lifecycle import do_start_discussion

    owner = make_user("olga")
    room = make_discussion(owner)
    post_teams(teams.bot_added(chat_conv, people["ana"]))
    code = do_create_room_code(room, owner)
    post_teams(teams.message(chat_conv, people["ana"], f"facilitator start {code.code}"))
    run_tasks()
    assert ChatLink.objects.get(active=True).room == room
    sent_before = len(teams.sent_to(chat_conv["id"]))
    post_teams(teams.message(chat_conv, people["ben"], "I would take QA &amp; release", mentions=[people["ana"]]))
    run_tasks()
    turn = Observation.objects.get(room=room, author_kind="human")
    assert turn.author_name == "Ben Okafor" and turn.content == "I would take QA & release"
    assert len(teams.sent_to(chat_conv["id"])) == sent_before  # not echoed
    do_start_discussion(room)
    committed(do_post_comment, room.pk, owner, "Thanks Ben.")
    run_tasks()
    last = teams.sent_to(chat_conv["id"])[-1]["activity"]
    assert last["text"] == "**olga**: Thanks Ben." and last["type"] == "message"
    # Teams shows no headings in text messages: a relayed turn's headings arrive as bold lines (code untouched).
    committed(do_post_comment, room.pk, owner, "## Plan\n\n- cache the catalogue\n\n```\n# a comment, not a heading\n```")
    run_tasks()
    last = teams.sent_to(chat_conv["id"])[-1]["activity"]
    assert last["text"] == "**olga**: **Plan**\n\n- cache the catalogue\n\n```\n# a comment, not a heading\n```"
    assert last["textFormat"] == "markdown"


def _two_chats_linked_to_a_running_discussion(teams, post_teams, run_tasks, people, chat_conv) -> dict:
    """``chat_conv`` and a second group chat, both linked to one running discussion: the second one (what is relayed
    there from the first)."""
    from facilitation.actions.lifecycle import do_start_discussion

    owner = make_user("olga")
    room = make_discussion(owner)
    other = teams.conversation("19:second_office@thread.v2", "groupChat")
    for conv in (chat_conv, other):
        post_teams(teams.bot_added(conv, people["ana"]))
        code = do_create_room_code(room, owner)
        post_teams(teams.message(conv, people["ana"], f"facilitator start {code.code}"))
        run_tasks()
    do_start_discussion(room)
    return other


def test_a_chat_message_relayed_to_another_chat_is_plain_text(teams, post_teams, run_tasks, people, chat_conv):
    other = _two_chats_linked_to_a_running_discussion(teams, post_teams, run_tasks, people, chat_conv)
    post_teams(teams.message(chat_conv, people["ben"], "2*3*4 is 24 and **this** is not Markdown,\n&lt;b&gt;nor&lt;/b&gt; is this &amp; that"))
    run_tasks()
    run_tasks()
    last = teams.sent_to(other["id"])[-1]["activity"]
    # Teams' XML format: the name bold, the person's text escaped so every character shows as written.
    assert last["textFormat"] == "xml"
    assert last["text"] == ("<b>Ben Okafor</b>: 2*3*4 is 24 and **this** is not Markdown,<br/>"
                            "&lt;b&gt;nor&lt;/b&gt; is this &amp; that")


def test_a_direct_message_creates_a_conversation_with_the_tenant(teams, run_tasks, people):
    ana = make_user("ana")
    ChatIdentity.objects.create(platform="teams", external_id=people["ana"]["id"], name="Ana Lima", user=ana,
                                tenant_id=teams.tenant_id, service_url=teams.service_url)
    (delivery,) = committed(queue_direct, "user:ana", "Your report is ready.")
    run_tasks()
    (created,) = teams.conversations
    assert created["params"]["members"] == [{"id": people["ana"]["id"]}]
    assert created["params"]["channelData"] == {"tenant": {"id": teams.tenant_id}} and created["params"]["isGroup"] is False
    assert teams.sent_to(created["id"])[0]["activity"]["text"] == "Your report is ready."
    assert Delivery.objects.get(pk=delivery.pk).status == "sent"
    assert ChatIdentity.objects.get(external_id=people["ana"]["id"]).direct_conversation_id == created["id"]
    assert teams.token_requests == 1  # the bot's token is reused until it expires


def test_a_refused_direct_message_is_undeliverable(teams, run_tasks, people):
    ana = make_user("ana")
    ChatIdentity.objects.create(platform="teams", external_id=people["ana"]["id"], name="Ana", user=ana, tenant_id=teams.tenant_id)
    teams.refuse_direct(people["ana"]["id"])
    (delivery,) = committed(queue_direct, "user:ana", "Report")
    run_tasks()
    delivery.refresh_from_db()
    assert delivery.status == "undeliverable" and "403" in delivery.diagnostic and "installed" in delivery.diagnostic


def test_mentions_status_card_in_place_and_429(teams, run_tasks, people, chat_conv):
    chat = Chat.objects.create(platform="teams", external_id=chat_conv["id"], service_url=teams.service_url)
    ben = ChatIdentity.objects.create(platform="teams", external_id=people["ben"]["id"], name="Ben Okafor")
    text, mentions = compose("Over to ", ben, ".")
    committed(queue_post, chat, text, mentions=mentions)
    run_tasks()
    activity = teams.sent_to(chat_conv["id"])[-1]["activity"]
    assert activity["text"] == "Over to <at>Ben Okafor</at>."
    assert activity["entities"] == [{"type": "mention", "text": "<at>Ben Okafor</at>",
                                     "mentioned": {"id": people["ben"]["id"], "name": "Ben Okafor"}}]
    committed(queue_status, chat, "Roles: 1 of 3 filled")
    run_tasks()
    teams.fail_next(429, retry_after=1)
    committed(queue_status, Chat.objects.get(pk=chat.pk), "Roles: 2 of 3 filled")
    run_tasks()
    cards = [a for a in teams.sent_to(chat_conv["id"]) if a["activity"].get("attachments")]
    assert len(cards) == 1  # posted once...
    (update,) = teams.updates  # ...then updated in place, after waiting out the 429
    assert update["id"] == cards[0]["id"]
    card = update["activity"]["attachments"][0]
    assert card["contentType"] == "application/vnd.microsoft.card.adaptive"
    assert card["content"]["body"][0]["text"] == "Roles: 2 of 3 filled"
    last = Delivery.objects.filter(kind="status").order_by("-id").first()
    assert last.status == "sent" and last.attempts == 2


def test_installation_update_adds_and_removes_the_bot(teams, post_teams, run_tasks, people, chat_conv):
    """Teams sends ``installationUpdate`` when the app is installed in (or removed from) a chat."""
    post_teams(teams.activity("installationUpdate", chat_conv, people["ana"], action="add"))
    run_tasks()
    chat = Chat.objects.get(platform="teams", external_id=chat_conv["id"])
    assert chat.bot_present and chat.added_by.external_id == people["ana"]["id"]
    post_teams(teams.activity("installationUpdate", chat_conv, people["ben"], action="remove"))
    run_tasks()
    chat.refresh_from_db()
    assert not chat.bot_present


def test_a_deleted_status_card_is_posted_again_once_even_when_paced(teams, run_tasks, chat_conv, settings):
    from tests.channels_bridge.conftest import FAST_LIMITS

    settings.BRIDGES = {**settings.BRIDGES, "RATE_LIMITS": {**FAST_LIMITS, "teams_conversation": (1, 20.0)}}
    chat = Chat.objects.create(platform="teams", external_id=chat_conv["id"], service_url=teams.service_url)
    committed(queue_status, chat, "Roles: 1 of 3 filled")
    run_tasks()
    (first,) = teams.sent_to(chat_conv["id"])
    teams.delete(chat_conv["id"], first["id"])
    committed(queue_status, Chat.objects.get(pk=chat.pk), "Roles: 2 of 3 filled")
    run_tasks(max_rounds=20)
    (second,) = teams.sent_to(chat_conv["id"])
    assert second["activity"]["attachments"][0]["content"]["body"][0]["text"] == "Roles: 2 of 3 filled"
    assert teams.updates == []
    delivery = Delivery.objects.filter(kind="status").order_by("-id").first()
    assert delivery.status == "sent" and delivery.message_ids == [second["id"]]
    assert Chat.objects.get(pk=chat.pk).status_message_id == second["id"]


def test_a_delivery_the_pace_keeps_holding_back_gives_up_once_and_is_never_sent(teams, run_tasks, chat_conv, settings):
    """Pacing waits are not attempts, but they are bounded: a delivery whose wait would end past
    BRIDGES["MAX_WAIT_SECONDS"] after it was queued is undeliverable with that reason, and stays unsent."""
    from datetime import timedelta

    from django.utils import timezone

    from channels_bridge.sender import send_delivery

    settings.BRIDGES = {**settings.BRIDGES, "MAX_WAIT_SECONDS": 600,
                        "RATE_LIMITS": {**settings.BRIDGES["RATE_LIMITS"], "teams_conversation": (1, 0.002)}}
    chat = Chat.objects.create(platform="teams", external_id=chat_conv["id"], service_url=teams.service_url)
    first = committed(queue_post, chat, "One")
    run_tasks()  # takes the bucket's one token: the next message waits about 500 s
    assert Delivery.objects.get(pk=first.pk).status == "sent"
    second = committed(queue_post, chat, "Two")
    assert 0 < committed(send_delivery, second.pk) <= 600  # within the bound: given back to wait, not an attempt
    second.refresh_from_db()
    assert second.status == "queued" and second.attempts == 0
    Delivery.objects.filter(pk=second.pk).update(created_at=timezone.now() - timedelta(minutes=5),
                                                 next_attempt_at=timezone.now())
    assert committed(send_delivery, second.pk) is None  # 5 minutes queued + ~500 s more would pass 10 minutes
    second.refresh_from_db()
    assert second.status == "undeliverable" and "rate limits" in second.diagnostic and "10 minutes" in second.diagnostic
    assert committed(send_delivery, second.pk) is None  # finished: never tried again
    assert [a["activity"]["text"] for a in teams.sent_to(chat_conv["id"])] == ["One"]


def _as_shown(markdown: str) -> tuple[set, str]:
    """How Teams shows a Markdown text: the formatting it would apply, and the text people read."""
    from markdown_it import MarkdownIt

    tokens = [t for block in MarkdownIt("commonmark").parse(markdown) for t in (block.children or [])]
    formatting = {"strong_open", "em_open", "link_open", "image", "html_inline"} & {t.type for t in tokens}
    return formatting, "\n".join(t.content if t.type == "text" else "\n" for t in tokens
                                 if t.type in ("text", "softbreak", "hardbreak")).replace("\n\n\n", "\n")


NAME, TOPIC, MODERATOR = "[click](http://evil.example) 2*3*4", "Pick **one** _host_ <b>now</b>", "Chair_*of*_the_day"


def test_people_s_words_in_the_bot_s_answers_read_as_typed_on_teams(teams, post_teams, run_tasks, people, chat_conv):
    """Teams shows a bot's reply as Markdown: the room's name, its topic and its moderator's name are escaped in the
    answers to start, status and stop, so a link, bold or italic in them is shown as typed, never rendered."""
    from rooms.models import Agent, Room

    owner = make_user("olga")
    room = make_discussion(owner)
    Room.objects.filter(pk=room.pk).update(name=NAME, topic=TOPIC)
    Agent.objects.filter(pk=room.moderator_id).update(name=MODERATOR)
    post_teams(teams.bot_added(chat_conv, people["ana"]))
    code = do_create_room_code(room, owner)
    post_teams(teams.message(chat_conv, people["ana"], f"facilitator start {code.code}"))
    post_teams(teams.message(chat_conv, people["ben"], "facilitator status"))
    post_teams(teams.message(chat_conv, people["ana"], "facilitator stop"))
    run_tasks()
    linked, status, stopped = [a["activity"] for a in teams.sent_to(chat_conv["id"])[-3:]]
    for answer in (linked, status, stopped):
        assert answer["textFormat"] == "markdown"
        formatting, shown = _as_shown(answer["text"])
        assert not formatting, answer["text"]
        assert NAME in shown
    assert f"Linked to the discussion \u201c{NAME}\u201d." in _as_shown(linked["text"])[1]
    assert f"Moderated by {MODERATOR} toward: {TOPIC}" in _as_shown(status["text"])[1]
    assert f"no longer linked to \u201c{NAME}\u201d" in _as_shown(stopped["text"])[1]


def _linked_by_ana(teams, post_teams, run_tasks, people, chat_conv):
    """A discussion named ``NAME`` (owned by olga) that Ana linked the Teams chat to; returns (owner, room)."""
    from rooms.models import Room

    owner = make_user("olga")
    room = make_discussion(owner)
    Room.objects.filter(pk=room.pk).update(name=NAME)
    post_teams(teams.bot_added(chat_conv, people["ana"]))
    code = do_create_room_code(room, owner)
    post_teams(teams.message(chat_conv, people["ana"], f"facilitator start {code.code}"))
    run_tasks()
    return owner, room


def test_a_refused_move_to_another_room_names_the_live_room_as_typed_on_teams(teams, post_teams, run_tasks, people,
                                                                            chat_conv):
    """Ben did not link the chat and has no Convene account: another room's code leaves it where it is, and the answer
    names that room escaped (Teams shows it as Markdown), with the status command as typed there."""
    from rooms.models import ChatCode

    owner, room = _linked_by_ana(teams, post_teams, run_tasks, people, chat_conv)
    other = do_create_room_code(make_discussion(make_user("mallory")), owner)
    post_teams(teams.message(chat_conv, people["ben"], f"facilitator start {other.code}"))
    run_tasks()
    answer = teams.sent_to(chat_conv["id"])[-1]["activity"]
    formatting, shown = _as_shown(answer["text"])
    assert answer["textFormat"] == "markdown" and not formatting, answer["text"]
    assert shown.startswith(f"This chat is linked to the discussion \u201c{NAME}\u201d, which is still going on")
    assert "@Convene facilitator status" in shown
    assert ChatLink.objects.get(active=True).room_id == room.pk and ChatCode.objects.get(pk=other.pk).used_at is None


def test_the_status_card_shows_people_s_words_as_typed(teams, run_tasks, chat_conv):
    """An Adaptive Card's TextBlock renders a Markdown subset: each line of the status (plain text) is escaped, and
    so is the activity's text."""
    chat = Chat.objects.create(platform="teams", external_id=chat_conv["id"], service_url=teams.service_url)
    board = f"{TOPIC} (in progress)\n- {NAME}: _ana_\nStill missing: 1. a **Scribe**."
    committed(queue_status, chat, board)
    run_tasks()
    (posted,) = teams.sent_to(chat_conv["id"])
    blocks = posted["activity"]["attachments"][0]["content"]["body"]
    assert len(blocks) == 3 and blocks[0]["weight"] == "Bolder"
    assert all(_as_shown(line)[0] for line in board.split("\n"))  # as they are, every line would be formatted
    for block, line in zip(blocks, board.split("\n")):
        formatting, shown = _as_shown(block["text"])
        assert not formatting and shown == line, block["text"]
    # Only the card shows the status (a message's text would show above it, the status twice); the plain text is
    # its summary, for clients that cannot show cards.
    assert "text" not in posted["activity"] and posted["activity"]["summary"] == board


def test_a_teams_chat_whose_room_ended_is_told_once_with_the_name_as_typed(teams, post_teams, run_tasks, people,
                                                                          chat_conv):
    from facilitation.actions.lifecycle import do_start_discussion, do_stop_discussion

    _owner, room = _linked_by_ana(teams, post_teams, run_tasks, people, chat_conv)
    do_start_discussion(room.pk)
    do_stop_discussion(room.pk)
    run_tasks()
    before = len(teams.sent_to(chat_conv["id"]))
    for text in ("still there?", "hello?"):
        post_teams(teams.message(chat_conv, people["ben"], text, mention_bot=False))
    run_tasks()
    (notice,) = [a["activity"] for a in teams.sent_to(chat_conv["id"])[before:]]
    formatting, shown = _as_shown(notice["text"])
    assert not formatting
    assert shown.startswith(f"The discussion \u201c{NAME}\u201d has ended (stopped), so nothing said here is relayed")
    assert "@Convene facilitator start CODE" in shown
    assert not Observation.objects.filter(room=room, author_kind="human").exists()
    post_teams(teams.message(chat_conv, people["ben"], "facilitator status"))
    run_tasks()
    formatting, shown = _as_shown(teams.sent_to(chat_conv["id"])[-1]["activity"]["text"])
    assert not formatting and f"\u201c{NAME}\u201d has ended (stopped)" in shown and "It ended without a conclusion." in shown


def test_a_personal_chat_s_answer_shows_the_username_as_typed(teams, post_teams, run_tasks, people):
    from rooms.actions.chat import do_create_identity_code

    user = make_user("_ana_")
    code = do_create_identity_code(user)
    post_teams(teams.message(teams.conversation("a:personal-ana", "personal"), people["ana"], f"start {code.code}",
                             mention_bot=False))
    run_tasks()
    answer = teams.sent_to("a:personal-ana")[-1]["activity"]
    formatting, shown = _as_shown(answer["text"])
    assert not formatting and shown == "Linked: this account now speaks as _ana_ in Convene."


def test_a_channel_is_one_chat_whatever_thread_people_write_in(teams, post_teams, run_tasks, people):
    """In a channel Teams names the thread in the conversation id (``19:...@thread.tacv2;messageid=<root>``): the
    channel the bot was added to, the post that links it and the replies in any thread are one chat, linked once."""
    owner = make_user("olga")
    room = make_discussion(owner)
    channel_id = "19:general0123@thread.tacv2"
    data = {"tenant": {"id": teams.tenant_id}, "team": {"id": channel_id}, "channel": {"id": channel_id}}
    channel = teams.conversation(channel_id, "channel")
    post_teams({**teams.bot_added(channel, people["ana"]), "channelData": data})
    code = committed(do_create_room_code, room, owner)

    def in_thread(root: str, sender: dict, text: str, **kwargs) -> dict:
        activity = teams.message(teams.conversation(f"{channel_id};messageid={root}", "channel"), sender, text, **kwargs)
        return {**activity, "channelData": data}

    post_teams(in_thread("1700000000001", people["ana"], f"facilitator start {code.code}"))
    post_teams(in_thread("1700000000099", people["ben"], "A new post: I take QA", mention_bot=False))
    post_teams(in_thread("1700000000099", people["ben"], "facilitator status"))
    run_tasks()
    chat = Chat.objects.get(platform="teams", kind="channel")
    assert chat.external_id == channel_id and chat.added_by.external_id == people["ana"]["id"]
    assert ChatLink.objects.get(active=True).chat == chat
    assert Observation.objects.get(room=room, author_kind="human").content == "A new post: I take QA"
    answer = teams.sent_to(f"{channel_id};messageid=1700000000099")[-1]["activity"]["text"]  # in the asker's thread
    assert "not linked" not in answer and room.topic in answer


def _run_in(teams, post_teams, run_tasks, conv, people) -> "Room":
    """A role run (Lead, Scribe) olga set up, linked to ``conv`` by Ana, who added the bot."""
    import json
    from datetime import timedelta

    from django.contrib.auth.models import Permission
    from django.test import Client
    from django.utils import timezone

    from rooms.models import Room
    from tests.factories import make_facilitator

    make_facilitator("Convener", key="convener")
    owner = make_user("olga")
    owner.user_permissions.add(Permission.objects.get(codename="start_facilitation_run"))
    api = Client()
    api.force_login(owner)
    body = {"kind": "facilitation", "name": "Launch roles", "topic": "Every role carries exactly one name",
            "pattern": "role_assignment", "slots": {"roles": ["Lead", "Scribe"]}, "reportTo": ["user:olga"],
            "deadline": (timezone.now() + timedelta(hours=2)).isoformat(), "reminderMinutes": 30}
    answer = api.post("/api/discussions", json.dumps(body), content_type="application/json")
    assert answer.status_code == 201, answer.content
    post_teams(teams.bot_added(conv, people["ana"]))
    post_teams(teams.message(conv, people["ana"], f"facilitator start {answer.json()['data']['joinCode']}"))
    run_tasks()
    return Room.objects.get(pk=answer.json()["data"]["id"])


def test_a_like_on_the_request_to_confirm_confirms_as_a_typed_thumbs_up_does(teams, post_teams, run_tasks, people,
                                                                              chat_conv):
    """In Teams people answer "please confirm" with the 👍 reaction on the bot's message (a ``messageReaction``):
    it counts as the 👍 they could type, once; another reaction, or a like taken back, confirms nothing."""
    from rooms.models import FacilitationRun

    room = _run_in(teams, post_teams, run_tasks, chat_conv, people)
    for who, text in (("ana", "I'll take Lead"), ("ben", "I'll take Scribe")):
        post_teams(teams.message(chat_conv, people[who], text, mention_bot=False))
        run_tasks()
    (ask,) = [a for a in teams.sent_to(chat_conv["id"]) if "please confirm" in (a["activity"].get("text") or "")]
    post_teams(teams.message(chat_conv, people["ana"], "confirmed", mention_bot=False))
    post_teams(teams.reaction(chat_conv, people["ben"], ask["id"], "heart"))
    post_teams(teams.reaction(chat_conv, people["ben"], ask["id"], "like", removed=True))
    run_tasks()
    assert FacilitationRun.objects.get(room=room).state == "confirming"
    assert not Observation.objects.filter(room=room, author_name="Ben Okafor", content="👍").exists()
    like = teams.reaction(chat_conv, people["ben"], ask["id"])
    post_teams(like)
    post_teams(like)  # Teams sent it again: acknowledged and ignored
    run_tasks()
    assert FacilitationRun.objects.get(room=room).state == "completed"
    turn = Observation.objects.get(room=room, author_name="Ben Okafor", content="👍")
    assert turn.data["source"]["replyTo"] == ask["id"]
    # A like on a message in a personal chat (the report, say) is not a request for help.
    personal = teams.conversation("a:1personal-ben", "personal")
    sent = len(teams.activities)
    post_teams(teams.reaction(personal, people["ben"], "1:1"))
    run_tasks()
    assert len(teams.activities) == sent


def test_a_retry_after_given_as_a_date_is_waited_out(teams, chat_conv):
    """``Retry-After`` is seconds or an HTTP date (RFC 9110): a date says how long to wait as well."""
    from datetime import datetime, timedelta, timezone
    from email.utils import format_datetime

    from channels_bridge.teams import client as connector

    teams.fail_next(429, retry_after=format_datetime(datetime.now(timezone.utc) + timedelta(seconds=30), usegmt=True))
    with pytest.raises(connector.ConnectorError) as refused:
        connector.send_activity(teams.service_url, chat_conv["id"], {"type": "message", "text": "hello"})
    assert refused.value.status == 429 and 25 <= refused.value.retry_after <= 30
    teams.fail_next(429, retry_after=format_datetime(datetime.now(timezone.utc) - timedelta(seconds=30), usegmt=True))
    with pytest.raises(connector.ConnectorError) as past:
        connector.send_activity(teams.service_url, chat_conv["id"], {"type": "message", "text": "hello"})
    assert past.value.retry_after == 0


def test_a_message_over_the_comment_limit_is_cut_with_a_visible_mark(teams, post_teams, run_tasks, people, chat_conv):
    """Teams takes about 28 KB in a message, more than a turn holds: the turn is cut and says so, and keeps how long the
    message was."""
    from rooms import limits

    room = make_discussion(make_user("olga"))
    code = do_create_room_code(room, room.owner)
    post_teams(teams.message(chat_conv, people["ana"], f"facilitator start {code.code}"))
    words = "word " * 3000  # 15,000 characters
    post_teams(teams.message(chat_conv, people["ben"], words, mention_bot=False))
    run_tasks()
    turn = Observation.objects.get(room=room, author_kind="human")
    assert len(turn.content) <= limits.COMMENT and turn.content.endswith(" [\u2026]")
    assert turn.data["cut"] == {"length": len(words.strip())}
    assert turn.content[:-len(" [\u2026]")] == words.strip()[:len(turn.content) - len(" [\u2026]")]


def test_each_line_of_a_bot_message_stays_a_line_on_teams(teams, run_tasks, people, chat_conv):
    """Teams runs a Markdown paragraph's lines together: a multi-line message (a handshake, a status, a closing)
    goes out with a blank line after each line, so each is shown on its own; the items of a list and fenced code
    keep their single line breaks, and a mention keeps its place."""
    from markdown_it import MarkdownIt

    chat = Chat.objects.create(platform="teams", external_id=chat_conv["id"], service_url=teams.service_url)
    ana = ChatIdentity.objects.create(platform="teams", external_id=people["ana"]["id"], name="Ana Lima")
    text, mentions = compose("Goal: pick roles\nDone when: every role is held\nSo far:\n- Lead: ", ana,
                             "\n- Scribe: (open)\nStill missing: Scribe.\n```\nkeep\nthis\n```")
    committed(queue_post, chat, text, mentions=mentions)
    run_tasks()
    sent = teams.sent_to(chat_conv["id"])[-1]["activity"]
    assert sent["text"] == ("Goal: pick roles\n\nDone when: every role is held\n\nSo far:\n\n- Lead: <at>Ana Lima</at>\n"
                            "- Scribe: (open)\n\nStill missing: Scribe.\n\n```\nkeep\nthis\n```")
    blocks = MarkdownIt("commonmark").parse(sent["text"])
    assert not [t for b in blocks for t in (b.children or []) if t.type == "softbreak"]  # no two lines run together
    assert [b.content for b in blocks if b.type == "inline"][:3] == ["Goal: pick roles", "Done when: every role is held",
                                                                      "So far:"]
    assert sent["entities"][0]["text"] == "<at>Ana Lima</at>"


def test_a_command_followed_by_punctuation_is_understood_on_teams(teams, post_teams, run_tasks, people, chat_conv):
    """People @mention the bot as they would write to a person: "facilitator start CODE." links the chat and
    "facilitator status?" is answered with the status, not with "I do not know"."""
    owner = make_user("olga")
    room = make_discussion(owner)
    post_teams(teams.bot_added(chat_conv, people["ana"]))
    code = do_create_room_code(room, owner)
    post_teams(teams.message(chat_conv, people["ana"], f"facilitator start {code.code}."))
    run_tasks()
    assert ChatLink.objects.get(active=True).room == room
    post_teams(teams.message(chat_conv, people["ben"], "Facilitator status?"))
    run_tasks()
    answer = teams.sent_to(chat_conv["id"])[-1]["activity"]["text"]
    assert "Moderated by" in answer and "I do not know" not in answer, answer
    assert not Observation.objects.filter(room=room, author_kind="human").exists()  # commands are not turns


def test_a_long_message_is_split_by_its_size_as_teams_counts_it(teams, post_teams, run_tasks, people, chat_conv):
    """Teams takes at most 40 KB of activity, in UTF-16. A chat message of 9,900 characters full of "&" and "<" grows
    past that once escaped for Teams' XML format: it goes out in parts that each fit, nothing lost."""
    import html
    import json

    other = _two_chats_linked_to_a_running_discussion(teams, post_teams, run_tasks, people, chat_conv)
    written = "Q&A <ok> " * 1100
    post_teams(teams.message(chat_conv, people["ben"], html.escape(written, quote=False), mention_bot=False))  # as Teams sends it
    run_tasks()
    run_tasks()
    parts = [a["activity"] for a in teams.sent_to(other["id"]) if a["activity"].get("textFormat") == "xml"]
    assert len(parts) >= 2
    assert all(len(json.dumps(p, ensure_ascii=False).encode("utf-16-le")) <= 40 * 1024 for p in parts)
    read = "".join(html.unescape(p["text"]) for p in parts).removeprefix("<b>Ben Okafor</b>: ")
    assert read.replace(" ", "") == written.replace(" ", "")


def test_a_message_teams_refuses_as_too_large_is_undeliverable_at_once(teams, run_tasks, chat_conv):
    """413 (MessageSizeTooBig) would come back on every try: the delivery is undeliverable at once, saying why."""
    chat = Chat.objects.create(platform="teams", external_id=chat_conv["id"], service_url=teams.service_url)
    teams.fail_next(413)
    delivery = committed(queue_post, chat, "A message")
    run_tasks()
    delivery.refresh_from_db()
    assert delivery.status == "undeliverable" and delivery.attempts == 1 and "too large" in delivery.diagnostic
    assert teams.sent_to(chat_conv["id"]) == []


def test_a_chat_linked_to_another_room_gets_that_room_s_status_as_a_new_card(teams, post_teams, run_tasks, people,
                                                                             chat_conv):
    """The status card of the room a chat leaves keeps showing how that room ended; the next room's status is posted
    as a new card where the group reads, not written over the old card far above."""
    owner = make_user("olga")
    first, second = make_discussion(owner), make_discussion(owner)
    post_teams(teams.bot_added(chat_conv, people["ana"]))
    post_teams(teams.message(chat_conv, people["ana"], f"facilitator start {do_create_room_code(first, owner).code}"))
    run_tasks()
    chat = Chat.objects.get(external_id=chat_conv["id"])
    committed(queue_status, chat, "First room: concluded")
    run_tasks()
    old_card = Chat.objects.get(pk=chat.pk).status_message_id
    assert old_card
    post_teams(teams.message(chat_conv, people["ana"], f"facilitator start {do_create_room_code(second, owner).code}"))
    run_tasks()
    assert ChatLink.objects.get(active=True).room == second
    committed(queue_status, Chat.objects.get(pk=chat.pk), "Second room: in progress")
    run_tasks()
    assert not [u for u in teams.updates if u["id"] == old_card]  # the first room's card is left as it was
    new_card = Chat.objects.get(pk=chat.pk).status_message_id
    assert new_card and new_card != old_card
    (posted,) = [a for a in teams.sent_to(chat_conv["id"]) if a["id"] == new_card]
    assert posted["activity"]["summary"] == "Second room: in progress"


def test_an_error_answer_is_told_apart_from_the_connector_not_being_reached(teams, settings, chat_conv):
    """A 5xx is the connector answering with an error; "could not be reached" is kept for a connection that failed."""
    from channels_bridge.sender import send_delivery

    chat = Chat.objects.create(platform="teams", external_id=chat_conv["id"], kind="group", service_url=teams.service_url)
    teams.fail_next(503)
    delivery = committed(queue_post, chat, "Hello")
    committed(send_delivery, delivery.pk)
    delivery.refresh_from_db()
    assert delivery.status != "sent" and "Teams answered with an error 503" in delivery.diagnostic
    assert "could not be reached" not in delivery.diagnostic
    Delivery.objects.filter(pk=delivery.pk).delete()
    Chat.objects.filter(pk=chat.pk).update(service_url="http://127.0.0.1:9/")  # nothing listens there
    delivery = committed(queue_post, Chat.objects.get(pk=chat.pk), "Hello again")
    committed(send_delivery, delivery.pk)
    delivery.refresh_from_db()
    assert delivery.status != "sent" and "Teams could not be reached" in delivery.diagnostic


def test_installing_the_app_for_oneself_greets_once_in_the_personal_chat(teams, post_teams, run_tasks, people):
    """A personal install is announced twice (``installationUpdate`` and ``conversationUpdate``); the person hears
    once what the bot does and how to link their account: the same words as the answer to what they write there."""
    personal = teams.conversation("a:1personal-ben", "personal")
    post_teams(teams.activity("installationUpdate", personal, people["ben"], action="add"))
    post_teams(teams.bot_added(personal, people["ben"]))
    post_teams(teams.bot_added(personal, people["ben"]))
    run_tasks()
    sent = [a["activity"]["text"] for a in teams.sent_to(personal["id"])]
    assert len(sent) == 1
    assert "send start CODE here" in sent[0] and "group chats" in sent[0]
    post_teams(teams.message(personal, people["ben"], "hello", mention_bot=False))
    run_tasks()
    assert [a["activity"]["text"] for a in teams.sent_to(personal["id"])] == [sent[0], sent[0]]
    identity = ChatIdentity.objects.get(platform="teams", external_id=people["ben"]["id"])
    assert identity.started_bot and identity.direct_conversation_id == personal["id"]
