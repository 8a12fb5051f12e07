"""What a newcomer meets first: commands on a fresh database, a missing secret key, healthz, deploy checks."""
import json
import os
import secrets
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PG_ADMIN_URL = os.environ.get("BENCH_PG_URL", "postgres://postgres@127.0.0.1:5432/postgres")


def manage(*args, env: dict, timeout: float = 120) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items()
            if k not in ("DATABASE_URL", "DJANGO_SECRET_KEY", "DJANGO_DEBUG", "ALLOWED_HOSTS", "REDIS_URL", "CONVENE_HTTPS",
                         "DJANGO_ALLOW_ASYNC_UNSAFE")}
    base["REDIS_URL"] = "redis://127.0.0.1:9/0"  # nothing listens: no realtime, no worker
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env={**base, **env},
                          capture_output=True, text=True, timeout=timeout)


def one_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    assert len(lines) == 1, text
    assert "Traceback" not in text
    return lines[0]


@pytest.fixture
def fresh_sqlite(tmp_path):
    return {"DATABASE_URL": f"sqlite:///{tmp_path / 'fresh.sqlite3'}"}


def test_create_api_token_prepares_a_fresh_sqlite_database(fresh_sqlite):
    result = manage("create_api_token", "newcomer", "--create-user", env=fresh_sqlite)
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.strip()) >= 32
    assert "Preparing the database" in result.stderr and "Traceback" not in result.stderr


def test_run_discussion_prepares_and_seeds_a_fresh_sqlite_database(fresh_sqlite):
    result = manage("run_discussion", "--topic", "Tabs or spaces?", "--rounds", "1", "--json", env=fresh_sqlite)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["status"] == "concluded"


def _pg_reachable() -> bool:
    try:
        import psycopg

        psycopg.connect(PG_ADMIN_URL.replace("postgres://", "postgresql://"), connect_timeout=2).close()
        return True
    except Exception:
        return False


@pytest.fixture
def empty_postgres():
    if not _pg_reachable():
        pytest.skip("no PostgreSQL on loopback")
    import psycopg

    name = f"convene_fresh_{uuid.uuid4().hex[:10]}"
    admin_url = PG_ADMIN_URL.replace("postgres://", "postgresql://")
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.mark.parametrize("command", [
    ["create_api_token", "someone", "--create-user"],
    ["run_discussion", "--topic", "Anything"],
    ["serve", "--port", "1"],
    ["demo", "--no-serve"],
])
def test_commands_on_an_unmigrated_postgres_say_what_to_run(empty_postgres, command):
    result = manage(*command, env={"DATABASE_URL": empty_postgres, "DJANGO_SECRET_KEY": "k" * 60})
    assert result.returncode != 0
    assert "python manage.py migrate" in one_line(result.stderr)


def test_an_unreachable_database_is_one_line():
    result = manage("create_api_token", "x", env={"DATABASE_URL": "postgres://nobody@127.0.0.1:9/none",
                                                  "DJANGO_SECRET_KEY": "k" * 60})
    assert result.returncode != 0
    assert "DATABASE_URL" in one_line(result.stderr)


@pytest.mark.parametrize("key", [None, "convene-insecure-development-key-change-me"])
def test_no_secret_key_outside_debug_refuses_to_start(key):
    env = {"DATABASE_URL": "postgres://nobody@127.0.0.1:9/none"}
    if key:
        env["DJANGO_SECRET_KEY"] = key
    result = manage("check", env=env)
    assert result.returncode == 2
    assert "DJANGO_SECRET_KEY" in one_line(result.stderr)


def test_the_embedded_default_keeps_a_generated_key(fresh_sqlite):
    from config.secret_key import BUILT_IN_PLACEHOLDER

    probe = "from django.conf import settings; print(settings.SECRET_KEY)"
    first = manage("shell", "-c", probe, env=fresh_sqlite)
    second = manage("shell", "-c", probe, env=fresh_sqlite)
    assert first.returncode == 0, first.stderr
    key = first.stdout.strip().splitlines()[-1]
    assert key == second.stdout.strip().splitlines()[-1] and len(key) >= 50 and key != BUILT_IN_PLACEHOLDER
    path = ROOT / "var" / "secret-key"
    assert path.read_text().strip() == key and (path.stat().st_mode & 0o077) == 0


def test_check_deploy_is_clean_with_a_key_and_real_hosts():
    result = manage("check", "--deploy", env={
        "DATABASE_URL": "postgres://nobody@127.0.0.1:9/none", "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "convene.example.com"})
    assert result.returncode == 0, result.stderr
    for warning in ("W004", "W008", "W012", "W016", "W009", "W018", "W020"):
        assert warning not in result.stdout + result.stderr


def test_healthz_is_503_while_the_schema_is_not_migrated(fresh_sqlite):
    probe = ("import json; from django.test import Client; r = Client().get('/healthz'); "
             "print(json.dumps({'status': r.status_code, 'body': r.json()}))")
    result = manage("shell", "-c", probe, env=fresh_sqlite)
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout.strip().splitlines()[-1])
    assert answer["status"] == 503
    assert answer["body"]["database"] == {"ok": True} and answer["body"]["schema"] == {"ok": False}
