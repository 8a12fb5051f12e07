"""A room's topic is Markdown on every page that shows it, rendered safely; agents of one name can be told apart."""
from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.utils import timezone

from rooms.actions.catalog import do_create_agent
from rooms.actions.rooms import do_create_room
from rooms.models import Agent, Room
from tests.browser.conftest import api, shot
from tests.factories import make_facilitator, make_participant, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# A topic as people write it, with what could break out of the page.
TOPIC = "\n".join([
    "## Should we **cache** the catalogue reads?",
    "See [the plan](https://example.com/plan) and `SELECT 1`.",
    "<img src=x onerror=\"window.__pwned = 'topic-img'\"> <script>window.__pwned = 'topic-script'</script>",
    "[trap](javascript:window.__pwned='topic-link')",
])
TAGS_OF_A_PAGE = "script, img, svg, iframe, object, embed, style, form, input"


def _inert(page, scope):
    """Nothing in ``scope`` ran or carries a handler; its links go to http(s) only, in a new tab."""
    assert page.evaluate("window.__pwned") is None
    assert page.locator(f"{scope} :is({TAGS_OF_A_PAGE})").count() == 0
    handlers = page.eval_on_selector_all(f"{scope} *", """ns => ns.flatMap(n => [...n.attributes]
        .filter(a => a.name.startsWith('on') || a.name === 'style').map(a => n.tagName + ' ' + a.name))""")
    assert handlers == []
    links = page.eval_on_selector_all(f"{scope} a", "ns => ns.map(n => [n.getAttribute('href'), n.target, n.rel])")
    assert links and all(h and h.startswith(("https://", "http://")) and t == "_blank" and "noopener" in r for h, t, r in links), links


def _formatted(page, scope):
    box = page.locator(scope)
    assert box.locator("strong", has_text="cache").count() == 1
    assert box.locator("code", has_text="SELECT 1").count() == 1
    assert box.locator("a[href='https://example.com/plan']", has_text="the plan").count() == 1
    text = box.inner_text()
    assert "**" not in text and "](https" not in text and "## " not in text
    # The tag a person typed is shown as the text it is, and so is a link that is not http(s).
    assert "<script>" in text and "[trap](javascript:" in text


def test_a_topic_is_markdown_in_the_list_the_room_the_desk_and_a_run(make_page):
    page, owner = make_page("tara")
    owner.user_permissions.add(Permission.objects.get(codename="start_facilitation_run"))
    chair = make_facilitator("Topic Chair", key="topic-chair")
    agents = [make_participant("Reader", alias="reader"), make_participant("Writer", alias="writer")]
    seats = [{"agent_id": a.pk, "role": "participant"} for a in agents]
    room = do_create_room(owner, name="Catalogue cache", topic=TOPIC, format="deliberation", moderator_id=chair.pk, participants=seats)
    desk = do_create_room(owner, name="Catalogue desk", topic=TOPIC, kind="workspace", moderator_id=chair.pk, participants=seats)
    status, body = api(page, "POST", "discussions", {
        "kind": "facilitation", "name": "Catalogue roles", "topic": TOPIC, "pattern": "list", "slots": {"min": 2},
        "deadline": (timezone.now() + timedelta(hours=2)).isoformat()})
    assert status == 201, body
    run_id = body["data"]["id"]

    # The list: each topic on one line under its name, formatted, no block of its own.
    page.goto("/")
    line = f"#discussion-rows tr[data-id='{room.pk}'] .topic-line"
    page.locator(line).wait_for()
    shot(page, "list-markdown-topic.png")
    _formatted(page, line)
    _inert(page, "#discussion-rows .topic-line")
    assert page.locator(f"{line} :is(p, div, h1, h2, h3, h4, h5, h6, ul, ol, li, pre, blockquote, br)").count() == 0
    ems = page.eval_on_selector(line, "n => n.getBoundingClientRect().height / parseFloat(getComputedStyle(n).fontSize)")
    assert ems <= 3.2, ems  # at most the two lines the row allows
    # Search and filters work as before: by the topic's words, and by kind.
    page.get_by_label("Search").fill("plan catalogue")
    page.wait_for_function("() => document.querySelectorAll('#discussion-rows tr').length === 2")  # the run is not in the table
    page.get_by_label("Search").fill("nothing-like-this")
    page.wait_for_function("() => document.querySelector('#list-status').textContent === 'No discussion matches.'")
    page.get_by_label("Search").fill("")
    page.get_by_label("Kind").select_option("workspace")
    page.wait_for_function(f"() => [...document.querySelectorAll('#discussion-rows tr')].map(r => r.dataset.id).join() === '{desk.pk}'")
    _formatted(page, f"#discussion-rows tr[data-id='{desk.pk}'] .topic-line")

    # The room's header: the topic as a block of Markdown (its heading below the page's own).
    for url, scope in ((f"/discussions/{room.pk}/", "#room-topic"), (f"/workspaces/{desk.pk}/", "#room-topic"),
                       (f"/discussions/{run_id}/", "#room-topic")):
        page.goto(url)
        page.locator(f"{scope} .markdown strong").wait_for()
        _formatted(page, scope)
        _inert(page, scope)
        assert page.locator(f"{scope} :is(h1, h2, h3)").count() == 0 and page.locator(f"{scope} h5").count() == 1
    shot(page, "run-markdown-topic.png")
    assert Room.objects.get(pk=run_id).topic == TOPIC  # shown rendered, kept as written
    assert not page.errors, page.errors


def test_the_wizard_review_renders_the_topic(make_page):
    page, _ = make_page("uma")
    page.goto("/discussions/new/")
    page.get_by_label("Topic").fill(TOPIC)
    page.get_by_role("button", name="Next").click()
    page.wait_for_selector("#moderator optgroup[label='Built-in presets'] option", state="attached")
    page.get_by_label("Facilitator", exact=True).select_option(label="The Impartial Chair")
    page.locator(".prow").filter(has=page.locator(".name", has_text="Architect")).first.locator(".p-check").check()
    page.get_by_role("button", name="Next").click()
    page.locator(".review-topic .markdown strong").wait_for()
    _formatted(page, ".review-topic")
    _inert(page, ".review-topic")
    assert not page.errors, page.errors


def test_agents_of_one_name_are_told_apart_and_a_name_of_yours_is_not_given_twice(make_page):
    page, owner = make_page("nina")
    owner.is_staff = True  # staff see everyone's agents: another person's shows whose it is
    owner.save()
    owner.user_permissions.add(Permission.objects.get(codename="start_facilitation_run"))
    # Two of one name, as agents made before names were one owner's own may be (the server refuses a second now).
    twins = [do_create_agent(owner, name="Chair Twin", is_facilitator=True)]
    twins.append(Agent.objects.create(name="Chair Twin", alias="chair-twin-2", is_facilitator=True, created_by=owner))
    mine = do_create_agent(owner, name="The Impartial Chair", is_facilitator=True)
    other = do_create_agent(make_user("otto"), name="Chair Twin", is_facilitator=True)
    assert len({a.alias for a in twins}) == 2

    page.goto("/discussions/new/")
    page.get_by_label("Topic").fill("Which cache?")
    page.get_by_role("button", name="Next").click()
    page.wait_for_selector("#moderator optgroup[label='Your facilitators'] option", state="attached")
    options = dict(zip(page.eval_on_selector_all("#moderator option", "ns => ns.map(n => n.value)"),
                       page.eval_on_selector_all("#moderator option", "ns => ns.map(n => n.textContent)")))
    assert options[str(twins[0].pk)] == f"Chair Twin (@{twins[0].alias}, yours)"
    assert options[str(twins[1].pk)] == f"Chair Twin (@{twins[1].alias}, yours)"
    assert options[str(other.pk)] == f"Chair Twin (@{other.alias}, otto's)"
    assert options[str(mine.pk)] == "The Impartial Chair (@the-impartial-chair, yours)"
    builtin = Agent.objects.get(is_builtin=True, name="The Impartial Chair")
    assert options[str(builtin.pk)] == "The Impartial Chair (@impartial-chair, built-in)"
    assert options[str(Agent.objects.get(is_builtin=True, name="The Closer").pk)] == "The Closer"  # one of its name: as it is
    assert len(set(options.values())) == len(options)
    # The same labels where a facilitator is ticked as a participant.
    rows = page.locator(f".prow[data-agent-id='{twins[1].pk}'] .name")
    assert rows.text_content() == f"Chair Twin (@{twins[1].alias}, yours)"

    # A new facilitator under a name of yours is refused, with why; nothing is created.
    page.get_by_role("button", name="New facilitator").click()
    page.locator("#nf-name").fill(" chair twin ")
    page.get_by_role("button", name="Create facilitator").click()
    error = page.locator("#nf-error")
    error.wait_for()
    assert 'You already have an assistant named "Chair Twin"' in error.inner_text() and "told apart" in error.inner_text()
    assert Agent.objects.filter(created_by=owner, name__iexact="chair twin").count() == 2
    page.locator("#nf-name").fill("Chair Triplet")
    page.get_by_role("button", name="Create facilitator").click()
    page.wait_for_function("() => document.querySelector('#moderator').selectedOptions[0].textContent === 'Chair Triplet'")

    # The review names the chosen one as the list did, and the room gets that one.
    page.get_by_label("Facilitator", exact=True).select_option(str(twins[1].pk))
    page.locator(".prow").filter(has=page.locator(".name", has_text="Architect")).first.locator(".p-check").check()
    page.get_by_role("button", name="Next").click()
    assert f"Chair Twin (@{twins[1].alias}, yours)" in page.locator("#review").inner_text()
    page.get_by_role("button", name="Save as draft").click()
    page.wait_for_url("**/discussions/*/")
    assert Room.objects.get(owner=owner).moderator_id == twins[1].pk

    # The facilitators page: the cards tell the twins apart, and a name of yours is refused there too.
    page.goto("/facilitators/")
    page.locator(f"[data-agent-id='{twins[0].pk}'] h3").wait_for()
    assert page.locator(f"[data-agent-id='{twins[0].pk}'] h3").inner_text() == f"Chair Twin (@{twins[0].alias}, yours)"
    assert page.locator(f"[data-agent-id='{other.pk}'] .badge").inner_text() == "otto's"
    page.locator("#create-toggle").click()
    page.locator("#f-name").fill("Chair Triplet")
    page.locator("#create-save").click()
    page.locator("#f-name-error").wait_for()  # said next to the name
    assert 'already have an assistant named "Chair Triplet"' in page.locator("#f-name-error").inner_text()
    assert Agent.objects.filter(created_by=owner, name="Chair Triplet").count() == 1
    shot(page, "facilitators-same-name.png")

    # The form of a facilitation run labels its facilitators the same way.
    page.goto("/facilitation/new/")
    page.wait_for_selector(f"#run-facilitator option[value='{twins[0].pk}']", state="attached")
    assert page.locator(f"#run-facilitator option[value='{twins[0].pk}']").text_content() == f"Chair Twin (@{twins[0].alias}, yours)"
    assert not page.errors, page.errors
