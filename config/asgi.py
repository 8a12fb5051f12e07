"""ASGI entry point: the Django app first, then Socket.IO wrapped around it.

Socket.IO serves ``/socket.io/``; everything else goes to Django. Browsers in every
web replica receive events through the Redis manager, whatever process emitted them.

Static files (``/static/...``, including the npm-installed ``vendor/`` bundles) are
served by Django's staticfiles handler whatever ``DEBUG`` says, so ``daphne
config.asgi:application`` is a complete web server. A production proxy may serve
``collectstatic``'s output in front of it instead.

Connections authenticate with the Django session cookie or ``auth: {token}``
(see ``facilitation.sockets``). Browsers must come from the same origin as the page
(the Host header), unless ``settings.SOCKETIO_CORS_ALLOWED_ORIGINS`` lists others:
a cookie-authenticated WebSocket must not be openable from another site.
"""
import gc
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_app = get_asgi_application()

import socketio  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402

from facilitation.sockets import register  # noqa: E402

sio = socketio.AsyncServer(
    async_mode="asgi",
    client_manager=socketio.AsyncRedisManager(settings.REDIS_URL, channel=settings.SOCKETIO_CHANNEL),
    # None: same origin as the request's Host (python-engineio's default check).
    cors_allowed_origins=getattr(settings, "SOCKETIO_CORS_ALLOWED_ORIGINS", None),
)
register(sio)
application = socketio.ASGIApp(sio, other_asgi_app=ASGIStaticFilesHandler(django_app), socketio_path="socket.io")

# Everything loaded so far (Django, DRF, the model SDKs: ~100k objects) lives as long as the
# process. Moving it to the permanent generation keeps the cyclic GC from rescanning it in the
# middle of a fan-out: at 200 clients in one room that took p99 from ~130 ms to ~45 ms
# (benchmarks/socket_latency.py, docs/benchmarks.md).
gc.freeze()
