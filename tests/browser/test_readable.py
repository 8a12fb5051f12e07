"""Readable turns and minutes: Markdown rendered on the page (safely) and in the .docx minutes."""
import io

import pytest
from docx import Document

from facilitation.actions.comments import do_post_comment, do_record_chat_message
from facilitation.actions.lifecycle import do_start_discussion
from rooms.models import Chat, ChatIdentity, ChatLink, Room
from rooms.actions.rooms import do_create_room
from tests.browser.conftest import HOSTILE_SPEAKER, api, pause_quietly, shot
from tests.factories import make_discussion, make_facilitator, make_participant
from tests.waiting import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.worker]

HOSTILE_CONCLUSION = """# Outcome

<img src=x onerror="window.__pwned = 'conclusion'">
Keep **going** with [a link](javascript:window.__pwned='link2').
"""


def test_a_hostile_turn_renders_as_inert_formatted_text(make_page):
    page, owner = make_page("hazel")
    chair = make_facilitator(key="hostile-chair")
    agents = [make_participant(HOSTILE_SPEAKER, alias="hostile"), make_participant("Calm", alias="calm")]
    room = do_create_room(owner, name="Hostile text", topic="Can text escape?", format="deliberation", moderator_id=chair.pk,
                          max_rounds=2, participants=[{"agent_id": a.pk, "role": "participant"} for a in agents])
    do_start_discussion(room)
    wait_for(lambda: Room.objects.get(pk=room.pk).is_terminal, timeout=60)
    page.goto(f"/discussions/{room.pk}/")
    status, body = api(page, "PATCH", f"discussions/{room.pk}", {"conclusion": HOSTILE_CONCLUSION})
    assert status == 200, body
    page.reload()
    card = page.locator("#timeline .tcard.turn", has=page.locator(".speaker", has_text=HOSTILE_SPEAKER)).first
    card.wait_for()
    shot(page, "room-hostile-turn.png")
    content = card.locator(".content")
    # Markdown is formatted: no asterisks, real emphasis, headings, lists and code.
    assert content.locator("strong", has_text="bold claim").count() == 1
    assert content.locator("em", has_text="italic aside").count() == 1
    assert content.locator("li").count() >= 2 and content.locator("h4").count() == 1
    assert "**" not in content.inner_text()
    # Markers and mentions stay highlighted inside the Markdown.
    assert content.locator(".marker-decision .marker-key").inner_text() == "DECISION:"
    assert content.locator(".mention").first.inner_text() == "@architect"
    # Nothing hostile became live: no script ran, no element or attribute was injected.
    page.wait_for_timeout(300)
    assert page.evaluate("window.__pwned") is None
    timeline = "#timeline .markdown, #conclusion .markdown"
    assert page.locator(f":is({timeline}) :is(script, img, svg, iframe, object, embed, style, form, input)").count() == 0
    handlers = page.eval_on_selector_all(f":is({timeline}) *", """ns => ns.flatMap(n => [...n.attributes]
        .filter(a => a.name.startsWith('on') || a.name === 'style' || a.name === 'srcdoc').map(a => n.tagName + ' ' + a.name))""")
    assert handlers == []
    hrefs = page.eval_on_selector_all(f":is({timeline}) a[href]", "ns => ns.map(n => n.getAttribute('href'))")
    assert hrefs and all(h.startswith(("https://", "http://", "mailto:")) for h in hrefs), hrefs
    assert "<script>" in content.inner_text()  # shown as the text it is
    # A person's text (the conclusion edited over the API) is rendered the same way.
    conclusion = page.locator("#conclusion .markdown")
    assert conclusion.locator("h4", has_text="Outcome").count() == 1 and conclusion.locator("strong", has_text="going").count() == 1
    assert "onerror" in conclusion.inner_text()
    assert not page.errors, page.errors


def test_docx_minutes_read_back_with_headings_lists_and_one_conclusion(make_page):
    page, owner = make_page("dora")
    room = make_discussion(owner, max_rounds=2)
    do_start_discussion(room)
    wait_for(lambda: Room.objects.get(pk=room.pk).is_terminal, timeout=60)
    page.goto(f"/discussions/{room.pk}/")
    page.wait_for_selector("#conclusion:not([hidden]) .markdown h5")
    with page.expect_download() as download:
        page.get_by_role("link", name="Export .docx").click()
    doc = Document(io.BytesIO(open(download.value.path(), "rb").read()))
    styled = [(p.style.name, p.text) for p in doc.paragraphs]
    # The scripted synthesis: "## Outcome", "## Next steps", a list and **bold**.
    assert ("Heading 3", "Outcome") in styled and ("Heading 3", "Next steps") in styled
    assert ("List Bullet", "Measure the hit rate") in styled
    assert any(r.bold and r.text == "catalogue" for p in doc.paragraphs for r in p.runs)
    assert sum("with a short TTL" in text for _, text in styled) == 1, "the conclusion is shown once"
    assert [text for style, text in styled if style.startswith("Heading") and "ecision" in text] == ["Decisions"]
    assert not any(text.startswith(("#", "- ", "**")) for _, text in styled)


def test_a_chat_message_shows_as_the_plain_text_it_was(make_page):
    page, owner = make_page("ines")
    room = make_discussion(owner, max_rounds=2)
    pause_quietly(room)  # people may speak; no step runs
    chat = Chat.objects.create(platform="telegram", external_id="-4100", title="Roles")
    ChatLink.objects.create(chat=chat, room=room)
    ben = ChatIdentity.objects.create(platform="telegram", external_id="502", name="Ben")
    do_record_chat_message(chat, ben, "2*3*4 is 24, and **this** stays as typed\n# 1 on my list\n\nVOTE: READY @architect")
    comment = do_post_comment(room.pk, owner, "From the page, **bold** is Markdown")
    page.goto(f"/discussions/{room.pk}/")
    human = page.locator("#timeline .tcard.turn", has=page.locator(".speaker", has_text="Ben"))
    human.wait_for()
    content = human.locator(".content")
    assert content.locator("p").first.inner_text() == "2*3*4 is 24, and **this** stays as typed\n# 1 on my list"
    assert content.locator("em, strong:not(.marker-key), h1, h2, h3, h4, h5, h6").count() == 0
    # Markers and mentions are highlighted in a chat message as in any turn.
    assert content.locator(".marker-vote .marker-key").inner_text() == "VOTE:"
    assert content.locator(".mention").inner_text() == "@architect"
    page_turn = page.locator(f"#timeline .tcard.turn[data-turn-id='{comment.pk}'] .content")
    assert page_turn.locator("strong", has_text="bold").count() == 1
    assert not page.errors, page.errors
