"""Which SECRET_KEY the process signs sessions and tokens with.

- ``DJANGO_SECRET_KEY`` when it is set (and is not the old built-in placeholder);
- otherwise, in debug or on the embedded SQLite default (one machine), a random key
  generated once and kept in ``var/secret-key`` (mode 0600), so restarts keep sessions;
- otherwise (PostgreSQL: several machines must share one key) the process refuses to start.
"""
import os
import secrets
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

# The key older versions used when none was configured: never accepted outside debug.
BUILT_IN_PLACEHOLDER = "convene-insecure-development-key-change-me"
KEY_FILE = "secret-key"


class MissingSecretKey(ImproperlyConfigured):
    pass


def is_embedded_database(database_url: str) -> bool:
    return not database_url or database_url.startswith("sqlite:")


def kept_key(var_dir: Path) -> str:
    """The key kept under ``var/``, generated on first use (safe when several processes start at once)."""
    path = Path(var_dir) / KEY_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        for _ in range(50):  # another process may be writing it right now
            key = path.read_text().strip()
            if key:
                return key
            import time

            time.sleep(0.02)
        raise MissingSecretKey(f"{path} is empty: delete it or set DJANGO_SECRET_KEY.")
    key = secrets.token_urlsafe(50)
    with os.fdopen(fd, "w") as handle:
        handle.write(key + "\n")
    return key


def resolve(explicit: str, *, debug: bool, database_url: str, var_dir: Path) -> str:
    if explicit and explicit != BUILT_IN_PLACEHOLDER:
        return explicit
    if debug or is_embedded_database(database_url):
        return kept_key(var_dir)
    raise MissingSecretKey(
        "DJANGO_SECRET_KEY is not set: set it to a long random value shared by every process "
        "(for example: python -c 'import secrets; print(secrets.token_urlsafe(50))'), or set DJANGO_DEBUG=1 for development."
    )
