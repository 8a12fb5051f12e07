"""The browser bundles the pages load: ``serve`` and ``demo`` fetch them with npm when one is missing."""
import io
import json
import os
import stat

import pytest

from config.bootstrap import BROWSER_BUNDLES, ensure_browser_bundles, missing_bundles

# A stand-in for npm: records its arguments, then does what the real one would (``ci``/``install``
# fetch the packages and, in postinstall, copy the bundles; ``run build`` copies them), or fails.
FAKE_NPM = """#!/bin/sh
echo "$@" >> "$NPM_CALLS"
if [ -n "$NPM_FAILS" ]; then echo "npm ERR! $NPM_FAILS" >&2; exit 1; fi
prefix="$2"
mkdir -p "$prefix/node_modules" "$prefix/static/vendor"
for name in $NPM_WRITES; do echo "// bundle" > "$prefix/static/vendor/$name"; done
"""


@pytest.fixture
def frontend(tmp_path):
    root = tmp_path / "frontend"
    root.mkdir()
    (root / "package.json").write_text(json.dumps({"name": "convene-frontend", "private": True}))
    (root / "package-lock.json").write_text("{}")
    return root


@pytest.fixture
def npm(tmp_path, monkeypatch):
    """A fake npm first on PATH; ``calls()`` lists the argument lines it was run with."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "npm"
    script.write_text(FAKE_NPM)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    calls = tmp_path / "npm-calls"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("NPM_CALLS", str(calls))
    monkeypatch.setenv("NPM_WRITES", " ".join(BROWSER_BUNDLES))
    monkeypatch.delenv("NPM_FAILS", raising=False)

    class Npm:
        @staticmethod
        def calls() -> list[str]:
            return calls.read_text().splitlines() if calls.exists() else []
    return Npm


def run(frontend) -> tuple[bool, list[str]]:
    out = io.StringIO()
    ok = ensure_browser_bundles(out, frontend=frontend)
    return ok, [line for line in out.getvalue().splitlines() if line.strip()]


def test_missing_bundles_are_fetched_with_npm_ci(frontend, npm):
    assert missing_bundles(frontend) == list(BROWSER_BUNDLES)
    ok, lines = run(frontend)
    assert ok and missing_bundles(frontend) == []
    assert [call.split()[2:] for call in npm.calls()] == [["ci", "--no-audit", "--no-fund"]]
    assert lines == ["Fetching the browser bundles (ci --no-audit --no-fund in frontend/)..."]


def test_without_a_lock_file_npm_installs(frontend, npm):
    (frontend / "package-lock.json").unlink()
    ok, _ = run(frontend)
    assert ok and npm.calls()[0].split()[2] == "install"


def test_installed_packages_only_have_their_bundles_copied(frontend, npm):
    (frontend / "node_modules").mkdir()
    ok, _ = run(frontend)
    assert ok and [call.split()[2:] for call in npm.calls()] == [["run", "build"]]


def test_nothing_runs_when_every_bundle_is_there(frontend, npm):
    vendor = frontend / "static" / "vendor"
    vendor.mkdir(parents=True)
    for name in BROWSER_BUNDLES:
        (vendor / name).write_text("// bundle")
    ok, lines = run(frontend)
    assert ok and lines == [] and npm.calls() == []


def test_a_failing_npm_is_named_in_one_line_and_the_command_goes_on(frontend, npm, monkeypatch):
    monkeypatch.setenv("NPM_FAILS", "network request to registry.npmjs.org failed")
    ok, lines = run(frontend)
    assert not ok and missing_bundles(frontend) == list(BROWSER_BUNDLES)
    assert len(lines) == 2 and "npm ERR! network request to registry.npmjs.org failed" in lines[1]
    assert "`make install`" in lines[1]


def test_npm_that_leaves_a_bundle_out_is_not_taken_for_success(frontend, npm, monkeypatch):
    monkeypatch.setenv("NPM_WRITES", BROWSER_BUNDLES[0])
    ok, lines = run(frontend)
    assert not ok and missing_bundles(frontend) == list(BROWSER_BUNDLES[1:])
    assert "a bundle is still missing" in lines[-1]


def test_without_npm_one_line_says_what_to_install(frontend, tmp_path, monkeypatch):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    ok, lines = run(frontend)
    assert not ok and len(lines) == 1
    assert "npm is not installed" in lines[0] and "`make install`" in lines[0]
    assert not (frontend / "static").exists()
