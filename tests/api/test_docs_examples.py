"""docs/api.md works: its shell blocks run, in order, with real curl against a live server.

The server is the live stack (bundled Redis, a Celery worker and daphne on the test
database); the discussion runs on the offline rehearsal model through the real worker.
``python manage.py`` in the guide is pointed at this project and the test database.
"""
import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from docx import Document

from facilitation.presets.seed import seed_presets
from rooms.models import Room, RoomMember
from tests.conftest import database_url_of_test_db

DOC = Path(settings.BASE_DIR) / "docs" / "api.md"
BLOCK = re.compile(r"^```bash\n(.*?)^```", re.MULTILINE | re.DOTALL)


def shell_blocks(text: str) -> list[str]:
    return [m.group(1) for m in BLOCK.finditer(text)]


def test_the_guide_has_the_integration_flow():
    blocks = "\n".join(shell_blocks(DOC.read_text()))
    for needle in ("create_api_token", "curl", "/api/discussions", "/start", "turns?afterSeq=", "export?format=md",
                   "export?format=docx"):
        assert needle in blocks, needle


@pytest.mark.worker
@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
def test_docs_examples_run_against_a_live_server(live_stack, tmp_path):
    seed_presets()
    project = Path(settings.BASE_DIR)
    # ``python manage.py ...`` in the guide runs this project's manage.py on the test database.
    prelude = (
        "set -eu\n"
        f"python() {{ if [ \"${{1:-}}\" = manage.py ]; then shift; command {sys.executable} {project / 'manage.py'} \"$@\";"
        f" else command {sys.executable} \"$@\"; fi; }}\n"
    )
    script = prelude + "\n".join(shell_blocks(DOC.read_text()))
    env = {**os.environ, "BASE": live_stack.base_url, "DATABASE_URL": database_url_of_test_db(), "LLM_PROVIDER": "rehearsal"}
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    output = done.stdout
    assert done.returncode == 0, f"exit {done.returncode}\nstdout:\n{output[-4000:]}\nstderr:\n{done.stderr[-4000:]}"

    room = Room.objects.get(name="Caching strategy review")
    assert "Finished: concluded" in output
    assert room.status == "concluded" and room.conclusion and room.owner.username == "integrator"
    assert room.moderator.alias == "impartial-chair"
    assert '"code":"validation_error"' in output and '"maxRounds"' in output
    assert '"code":"invalid_transition"' in output
    assert Room.objects.filter(name="Too long").count() == 0
    assert re.search(r"\[\d+\] round \d+, .+ \(synthesis\):", output)
    assert RoomMember.objects.filter(room=room, user__username="colleague", access="viewer").exists()

    stem = f"discussion-{room.pk}-caching-strategy-review"
    markdown = (tmp_path / f"{stem}.md").read_text()
    # The Markdown export is the discussion file: its header, then every turn (import reads it back).
    assert markdown.startswith("<!-- convene discussion file v1 -->") and 'name: "Caching strategy review"' in markdown
    assert re.search(r"^### Turn \d+ · round \d+ · .+ \(facilitator\)", markdown, re.M) and "(participant)" in markdown
    minutes = Document(io.BytesIO((tmp_path / f"{stem}.docx").read_bytes()))
    assert minutes.paragraphs[0].text == "Minutes: Caching strategy review"
