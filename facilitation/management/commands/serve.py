"""Starts the embedded runtime: Redis (unless REDIS_URL is set), daphne, a Celery worker and beat.

Ctrl-C or SIGTERM stops every process it started.
"""
from django.core.management.base import BaseCommand

from config.bootstrap import ensure_browser_bundles, ensure_schema
from facilitation.presets.seed import ensure_presets
from config.runtime import Runtime


class Command(BaseCommand):
    help = "Serves Convene: bundled Redis if needed, daphne on 127.0.0.1:$PORT, a Celery worker and beat."

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=None)
        parser.add_argument("--host", default="127.0.0.1")

    def handle(self, *args, **opts):
        ensure_schema(self.stderr)
        ensure_browser_bundles(self.stderr)
        ensure_presets()
        with Runtime(host=opts["host"], port=opts["port"], out=self.stdout) as runtime:
            runtime.wait()
