"""The Telegram Bot API client: python-telegram-bot's ``Bot``, used as a client library.

Calls go to ``{TELEGRAM_API_BASE}/bot<token>/<method>`` (files to ``.../file/bot<token>/``)
and run on the bridge's event loop (``channels_bridge.aio``), so Django and Celery code
calls them synchronously. Errors are python-telegram-bot's (``telegram.error``):
``RetryAfter`` (429), ``Forbidden`` (403), ``ChatMigrated``, ``BadRequest``, ``NetworkError``...
``sendMessage`` answers a message with ``reply_parameters`` (``{"message_id", "allow_sending_without_reply": true}``)
and posts into a forum topic with ``message_thread_id``.
An answer with a 5xx status is ``ServerError`` (a ``NetworkError`` that keeps the status): Telegram was reached
and said it failed, which is not the same as a connection that failed or timed out.
"""
import json
import threading

from django.conf import settings

from channels_bridge import aio

ALLOWED_UPDATES = ["message", "edited_message", "my_chat_member", "chat_member"]

_lock = threading.Lock()
_clients: dict[tuple[str, str], "TelegramClient"] = {}


def configured() -> bool:
    return bool(settings.BRIDGES["TELEGRAM_BOT_TOKEN"])


def client() -> "TelegramClient":
    token, base = settings.BRIDGES["TELEGRAM_BOT_TOKEN"], settings.BRIDGES["TELEGRAM_API_BASE"].rstrip("/")
    with _lock:
        if (token, base) not in _clients:
            _clients[(token, base)] = TelegramClient(token, base)
        return _clients[(token, base)]


def server_error(status: int, payload: bytes) -> Exception:
    """A 5xx answer from Telegram as a ``NetworkError`` (so it is retried) that says its ``status``."""
    from telegram.error import NetworkError

    try:
        description = json.loads(payload or b"{}").get("description") or ""
    except (ValueError, AttributeError):
        description = ""
    exc = NetworkError(str(description)[:300] or f"HTTP {status}")
    exc.status = status
    return exc


def answered_status(exc: Exception) -> int | None:
    """The 5xx status Telegram answered with, when the error is such an answer (None: no answer came)."""
    status = getattr(exc, "status", None)
    return status if isinstance(status, int) else None


class TelegramClient:
    def __init__(self, token: str, api_base: str):
        from telegram import Bot
        from telegram.request import HTTPXRequest

        class Request(HTTPXRequest):  # a 5xx answer told apart from a failed connection
            async def do_request(self, *args, **kwargs):
                status, payload = await super().do_request(*args, **kwargs)
                if status >= 500:
                    raise server_error(status, payload)
                return status, payload

        self.token = token
        self.bot = Bot(
            token, base_url=f"{api_base}/bot", base_file_url=f"{api_base}/file/bot",
            request=Request(connection_pool_size=32, connect_timeout=5, read_timeout=15, write_timeout=15, pool_timeout=5),
            get_updates_request=Request(connection_pool_size=1),
        )

    def _run(self, coro, timeout: float = 40.0):
        return aio.run(coro, timeout)

    def get_me(self) -> dict:
        return self._run(self.bot.get_me()).to_dict()

    def send_message(self, chat_id: str, text: str, entities: list | None = None, reply_to: int | None = None,
                     topic: int | None = None) -> str:
        """Send ``text``; ``reply_to``: as a reply to that message of the chat (``reply_parameters``, sent all the same
        when the message is gone: ``allow_sending_without_reply``); ``topic``: into that forum topic
        (``message_thread_id``: a forum supergroup's topic, where the message replied to was written)."""
        from telegram import ReplyParameters

        message = self._run(self.bot.send_message(
            chat_id=int(chat_id), text=text, entities=entities or None,
            reply_parameters=ReplyParameters(int(reply_to), allow_sending_without_reply=True) if reply_to else None,
            message_thread_id=int(topic) if topic else None,
        ))
        return str(message.message_id)

    def edit_message_text(self, chat_id: str, message_id: str, text: str, entities: list | None = None) -> str:
        result = self._run(self.bot.edit_message_text(chat_id=int(chat_id), message_id=int(message_id), text=text,
                                                      entities=entities or None))
        return str(getattr(result, "message_id", message_id))

    def send_document(self, chat_id: str, filename: str, data: bytes, caption: str = "", topic: int | None = None) -> str:
        """Send a file; ``topic``: into that forum topic (``message_thread_id``)."""
        from telegram import InputFile

        message = self._run(self.bot.send_document(chat_id=int(chat_id), document=InputFile(data, filename=filename),
                                                   caption=caption or None, message_thread_id=int(topic) if topic else None))
        return str(message.message_id)

    def set_webhook(self, url: str, secret: str) -> bool:
        return self._run(self.bot.set_webhook(url=url, secret_token=secret or None, allowed_updates=ALLOWED_UPDATES))

    def delete_webhook(self) -> bool:
        return self._run(self.bot.delete_webhook())

    def get_webhook_info(self) -> dict:
        return self._run(self.bot.get_webhook_info()).to_dict()
