"""The compose file describes the production topology and every command in it exists."""
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker" / "compose.yaml").read_text())


def test_topology_has_every_service():
    assert {"postgres", "redis", "web", "worker", "beat"} <= set(COMPOSE["services"])
    assert COMPOSE["services"]["beat"]["deploy"]["replicas"] == 1


def _run(argv, timeout=60):
    exe = shutil.which(argv[0], path=str(Path(sys.executable).parent)) or shutil.which(argv[0])
    assert exe, f"{argv[0]} is not installed"
    return subprocess.run([exe, *argv[1:]], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def test_every_app_service_command_exists():
    for name in ("migrate", "web", "worker", "beat"):
        command = COMPOSE["services"][name]["command"]
        if command[0] == "sh":
            # "python manage.py X && python manage.py Y": each management command must exist.
            for part in command[2].split("&&"):
                words = part.split()
                assert words[:2] == ["python", "manage.py"]
                listed = _run([sys.executable, "manage.py", "help", words[2]])
                assert listed.returncode == 0, listed.stderr
            continue
        if command[0] == "daphne":
            result = _run(["daphne", "--help"])
            assert result.returncode == 0
            module, _, attr = command[-1].partition(":")
            assert (ROOT / (module.replace(".", "/") + ".py")).exists() and attr == "application"
        elif command[0] == "celery":
            sub = command[command.index("-A") + 2]
            result = _run(["celery", "-A", "config", sub, "--help"])
            assert result.returncode == 0, result.stderr
        else:  # pragma: no cover - a new kind of command needs a check here
            raise AssertionError(f"unchecked command {command}")


def test_dockerfile_copies_the_project_and_serves_asgi():
    text = (ROOT / "docker" / "Dockerfile").read_text()
    for folder in ("config/", "rooms/", "facilitation/", "channels_bridge/", "frontend/"):
        assert f"COPY {folder}" in text
    assert "config.asgi:application" in text


def test_web_replicas_sit_behind_a_sticky_load_balancer_that_passes_websockets():
    web, lb = COMPOSE["services"]["web"], COMPOSE["services"]["lb"]
    assert web["deploy"]["replicas"] >= 2 and "ports" not in web  # only the balancer is published
    assert lb["ports"] and any("nginx.conf" in v for v in lb["volumes"])
    conf = (ROOT / "docker" / "nginx.conf").read_text()
    assert "ip_hash" in conf and "server web:8000" in conf
    assert "proxy_set_header Upgrade $http_upgrade" in conf
    assert COMPOSE["services"]["worker"]["deploy"]["replicas"] >= 2


def test_every_replica_counts_the_limits_in_one_shared_cache():
    """Sign-in, bad-token and write limits live in Django's cache: per process unless it is shared, which with
    several web replicas would multiply every limit by their number."""
    env = COMPOSE["x-app"]["environment"]
    assert COMPOSE["services"]["web"]["deploy"]["replicas"] >= 2
    cache, realtime = env["CONVENE_CACHE_URL"], env["REDIS_URL"]
    assert "redis://redis:6379/" in cache and cache.rsplit("/", 1)[-1] != realtime.rsplit("/", 1)[-1]
