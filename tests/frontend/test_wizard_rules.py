"""The wizard's copy of a server rule: which agents a workspace cannot seat."""
import json
import re
from pathlib import Path

from django.conf import settings

from rooms.models import Seat


def test_the_wizard_leaves_out_the_roles_no_workspace_agent_works_in():
    source = (Path(settings.BASE_DIR) / "frontend" / "static" / "convene" / "wizard.js").read_text()
    found = re.search(r"const NOT_WORK_ROLES = (\[[^\]]*\]);", source)
    assert found, "wizard.js names the roles a workspace agent cannot have"
    assert sorted(json.loads(found.group(1))) == sorted(Seat.NOT_WORK_ROLES)
