"""Before a command starts: is the database there and its schema current? Are the browser bundles there?

On the embedded default (SQLite under ``var/``) whatever is missing is applied at once, so a
fresh clone's ``manage.py serve`` just works. Elsewhere (PostgreSQL) migrating is an
operator's decision: the command stops with one line naming what to run.

The pages load three npm packages' browser bundles from ``frontend/static/vendor/`` (the Socket.IO
client, markdown-it, DOMPurify), which ``npm ci`` in ``frontend/`` fills. When one is missing, the
commands that serve pages run npm first; when npm is missing or fails, one line says what the pages
lack and which command fills them, and the server starts anyway (the pages poll and show plain text).
"""
import shutil
import subprocess
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import DEFAULT_DB_ALIAS, connections


def pending_migrations() -> list[str]:
    """Migrations not applied to the default database, as ``app.name``."""
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connections[DEFAULT_DB_ALIAS])
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    return [f"{migration.app_label}.{migration.name}" for migration, _ in plan]


def ensure_schema(out=None) -> None:
    """Apply missing migrations on SQLite; raise a one-line ``CommandError`` on other databases."""
    connection = connections[DEFAULT_DB_ALIAS]
    try:
        pending = pending_migrations()
    except Exception as exc:
        raise CommandError(f"Cannot use the {connection.vendor} database ({_first_line(exc)}): check DATABASE_URL.") from None
    if not pending:
        return
    if connection.vendor != "sqlite":
        raise CommandError(f"The database schema is not up to date ({len(pending)} migration(s) not applied): "
                           "run `python manage.py migrate` first.")
    if out is not None:
        out.write(f"Preparing the database under var/ ({len(pending)} migration(s))...")
        out.flush()
    call_command("migrate", interactive=False, verbosity=0)


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


#: The bundles the pages load from ``static/vendor/`` (``frontend/scripts/copy-vendor.mjs`` copies them there).
BROWSER_BUNDLES = ("socket.io.min.js", "markdown-it.min.js", "purify.min.js")


def missing_bundles(frontend: Path | None = None) -> list[str]:
    vendor = (frontend or Path(settings.BASE_DIR) / "frontend") / "static" / "vendor"
    return [name for name in BROWSER_BUNDLES if not (vendor / name).is_file()]


def ensure_browser_bundles(out=None, frontend: Path | None = None, timeout: float = 600) -> bool:
    """Fill ``frontend/static/vendor/`` with npm when a bundle is missing; True when all are there after."""
    frontend = frontend or Path(settings.BASE_DIR) / "frontend"
    if not missing_bundles(frontend):
        return True
    npm = shutil.which("npm")
    if npm is None or not (frontend / "package.json").is_file():
        _say(out, "The pages will have no live updates and show turns as plain text: their browser bundles are "
                  "missing and npm is not installed. Install Node.js with npm, then run `make install`.")
        return False
    if (frontend / "node_modules").is_dir():
        args = [npm, "--prefix", str(frontend), "run", "build"]  # the packages are there: copy their bundles
    else:
        args = [npm, "--prefix", str(frontend), "ci" if (frontend / "package-lock.json").is_file() else "install",
                "--no-audit", "--no-fund"]
    _say(out, f"Fetching the browser bundles ({' '.join(args[3:])} in frontend/)...")
    try:
        result = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
        failure = "" if result.returncode == 0 else _last_line(result.stderr or result.stdout) or f"exit status {result.returncode}"
    except (OSError, subprocess.TimeoutExpired) as exc:
        failure = _first_line(exc)
    if not failure and not missing_bundles(frontend):
        return True
    _say(out, "The pages will have no live updates and show turns as plain text: npm could not fetch their "
              f"browser bundles ({failure or 'a bundle is still missing'}). Run `make install` to try again.")
    return False


def _say(out, line: str) -> None:
    if out is not None:
        out.write(line + "\n")
        out.flush()


def _last_line(text: str) -> str:
    lines = [line.strip() for line in (text or "").strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""
