"""ASGI entry point: the Django app first, then Socket.IO wrapped around it.

Socket.IO serves ``/socket.io/``; everything else goes to Django. Browsers in every
web replica receive events through the Redis manager, whatever process emitted them.
"""
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_app = get_asgi_application()

import socketio  # noqa: E402
from django.conf import settings  # noqa: E402

from facilitation.sockets import register  # noqa: E402

sio = socketio.AsyncServer(
    async_mode="asgi",
    client_manager=socketio.AsyncRedisManager(settings.REDIS_URL, channel=settings.SOCKETIO_CHANNEL),
    cors_allowed_origins=[],
)
register(sio)
application = socketio.ASGIApp(sio, other_asgi_app=django_app, socketio_path="socket.io")
