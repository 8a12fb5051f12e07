"""The Telegram Bot API client: python-telegram-bot's ``Bot``, used as a client library.

Calls go to ``{TELEGRAM_API_BASE}/bot<token>/<method>`` (files to ``.../file/bot<token>/``)
and run on the bridge's event loop (``channels_bridge.aio``), so Django and Celery code
calls them synchronously. Errors are python-telegram-bot's (``telegram.error``):
``RetryAfter`` (429), ``Forbidden`` (403), ``ChatMigrated``, ``BadRequest``, ``NetworkError``...
"""
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


class TelegramClient:
    def __init__(self, token: str, api_base: str):
        from telegram import Bot
        from telegram.request import HTTPXRequest

        self.token = token
        self.bot = Bot(
            token, base_url=f"{api_base}/bot", base_file_url=f"{api_base}/file/bot",
            request=HTTPXRequest(connection_pool_size=32, connect_timeout=5, read_timeout=15, write_timeout=15, pool_timeout=5),
            get_updates_request=HTTPXRequest(connection_pool_size=1),
        )

    def _run(self, coro, timeout: float = 40.0):
        return aio.run(coro, timeout)

    def get_me(self) -> dict:
        return self._run(self.bot.get_me()).to_dict()

    def send_message(self, chat_id: str, text: str, entities: list | None = None, reply_to: str | None = None) -> str:
        from telegram import ReplyParameters

        message = self._run(self.bot.send_message(
            chat_id=int(chat_id), text=text, entities=entities or None,
            reply_parameters=ReplyParameters(int(reply_to), allow_sending_without_reply=True) if reply_to else None,
        ))
        return str(message.message_id)

    def edit_message_text(self, chat_id: str, message_id: str, text: str, entities: list | None = None) -> str:
        result = self._run(self.bot.edit_message_text(chat_id=int(chat_id), message_id=int(message_id), text=text,
                                                      entities=entities or None))
        return str(getattr(result, "message_id", message_id))

    def send_document(self, chat_id: str, filename: str, data: bytes, caption: str = "") -> str:
        from telegram import InputFile

        message = self._run(self.bot.send_document(chat_id=int(chat_id), document=InputFile(data, filename=filename),
                                                   caption=caption or None))
        return str(message.message_id)

    def set_webhook(self, url: str, secret: str) -> bool:
        return self._run(self.bot.set_webhook(url=url, secret_token=secret or None, allowed_updates=ALLOWED_UPDATES))

    def delete_webhook(self) -> bool:
        return self._run(self.bot.delete_webhook())

    def get_webhook_info(self) -> dict:
        return self._run(self.bot.get_webhook_info()).to_dict()
