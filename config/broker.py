"""The Redis transport the Celery processes use: kombu's, with one repair for a lost broker connection.

When the worker loses Redis (a restart), Celery first collects the broken connection, which detaches
the transport from it, then closes it; closing a channel gives its unacknowledged messages back to
Redis, and kombu's channel then reads the detached connection's address and fails with an
``AttributeError``, which Celery does not expect there: the worker stops ("Unrecoverable error")
instead of reconnecting. Here a channel of a detached connection fails the way a lost connection
fails (a connection error, which Celery ignores while it reconnects). The messages stay in Redis'
unacknowledged set and are given back after the visibility timeout, and the engine's sweeper sends
any step left without a lease again meanwhile.
"""
import redis
from kombu.transport import redis as kombu_redis


class Channel(kombu_redis.Channel):
    def _connparams(self, asynchronous=False):
        if self.connection.client is None:
            raise redis.exceptions.ConnectionError("The broker connection was closed.")
        return super()._connparams(asynchronous=asynchronous)


class Transport(kombu_redis.Transport):
    Channel = Channel
