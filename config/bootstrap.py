"""Before a command starts: is the database there and its schema current?

On the embedded default (SQLite under ``var/``) whatever is missing is applied at once, so a
fresh clone's ``manage.py serve`` just works. Elsewhere (PostgreSQL) migrating is an
operator's decision: the command stops with one line naming what to run.
"""
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
