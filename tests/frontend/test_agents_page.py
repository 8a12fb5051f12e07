"""The Agents page: signed-in people reach it from the navigation and the wizard, with the server's providers and
model tiers; its form puts each field the API names next to an input the page has."""
import json
import re
from pathlib import Path

import pytest
from django.conf import settings

from facilitation.api.inputs import AgentIn, PersonaIn, RoleIn
from facilitation.llm.registry import PROVIDERS
from tests.factories import make_user

STATIC = Path(settings.BASE_DIR) / "frontend" / "static" / "convene"
TEMPLATE = Path(settings.BASE_DIR) / "frontend" / "templates" / "frontend" / "agents.html"


def _page_data(html: str) -> dict:
    found = re.search(r'<script id="page-data" type="application/json">(.*?)</script>', html, re.S)
    assert found, "the page hands its data to the script"
    return json.loads(found.group(1))


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _field_map(source: str, const: str) -> dict[str, str]:
    found = re.search(rf"const {const} = \{{(.*?)\}};", source, re.S)
    assert found, f"agents.js names its {const}"
    return dict(re.findall(r'(\w+): "(#[\w-]+)"', found.group(1)))


@pytest.mark.django_db
def test_the_page_asks_for_a_sign_in(client):
    response = client.get("/agents/")
    assert response.status_code == 302 and response.url.startswith("/login/")


@pytest.mark.django_db
def test_the_page_carries_the_providers_and_model_tiers_and_is_in_the_navigation(client, settings):
    settings.MODEL_TIERS = {"sonnet": "claude-sonnet-test"}
    client.force_login(make_user("agentpageowner"))
    response = client.get("/agents/")
    assert response.status_code == 200
    html = response.content.decode()
    data = _page_data(html)
    assert data["user"] == "agentpageowner"
    assert data["providers"] == list(PROVIDERS)
    assert data["modelTiers"] == {"sonnet": "claude-sonnet-test"}
    assert data["defaultProvider"] == settings.CONVENE["DEFAULT_PROVIDER"]
    assert re.search(r'<a href="/agents/" aria-current="page">Agents</a>', html), "the navigation names the page it is on"
    assert "convene/agent_forms.js" in html and "convene/agents.js" in html


@pytest.mark.django_db
def test_the_wizard_links_to_the_page_from_its_participant_step(client):
    client.force_login(make_user("wizardlinker"))
    html = client.get("/discussions/new/").content.decode()
    link = re.search(r'<a href="/agents/" id="make-agent"[^>]*>Make a new agent</a>', html)
    assert link and 'target="_blank"' in link.group(0) and 'rel="noopener"' in link.group(0)
    assert re.search(r'<a href="/agents/"\s*>Agents</a>', html), "the navigation links the page from every page"


def test_every_field_the_api_may_refuse_has_an_input_on_the_page():
    """A field error lands next to its input: each API field the page maps is one its request takes, and each
    input it names is in the template, with an error line it is described by."""
    source = (STATIC / "agents.js").read_text()
    template = TEMPLATE.read_text()
    for const, serializer in (("AGENT_FIELDS", AgentIn), ("ROLE_FIELDS", RoleIn), ("PERSONA_FIELDS", PersonaIn)):
        fields = _field_map(source, const)
        accepted = {_camel(name) for name in serializer().fields}
        assert fields and set(fields) <= accepted, (const, set(fields) - accepted)
        for selector in fields.values():
            input_id = selector[1:]
            tag = re.search(rf'<(?:input|select|textarea) id="{input_id}"[^>]*>', template)
            assert tag, f"{input_id} is on the page"
            assert f"{input_id}-error" in tag.group(0), f"{input_id} is described by its error line"
            assert f'<p id="{input_id}-error" class="error" hidden></p>' in template
    assert {"expertise", "concerns"} <= set(_field_map(source, "AGENT_FIELDS")), "an agent's lists are on the form"
    words = re.search(r"const PROVIDER_WORDS = \{(.*?)\};", source, re.S).group(1)
    assert set(re.findall(r"(\w+):", words)) == set(PROVIDERS), "every provider the API takes has its words"
