"""A fake Telegram Bot API on loopback: ``{root}/bot<token>/<method>``, the real JSON shapes.

Answers getMe, sendMessage, editMessageText, sendDocument, setWebhook, deleteWebhook and
getWebhookInfo as the Bot API does (``{"ok": true, "result": ...}``; errors
``{"ok": false, "error_code", "description", "parameters"?}``). Requests arrive as
python-telegram-bot sends them: form-encoded fields (JSON for structured values),
multipart for files. Scriptable: ``fail_next`` (e.g. 429 with ``retry_after``),
``forbid`` (403 for a chat: a person who never started the bot), ``migrate`` (a group
upgraded to a supergroup answers with ``migrate_to_chat_id``), ``delete`` (a message someone
deleted), ``delete_topic`` / ``close_topic`` (a forum topic that is gone, or closed to the bot), ``close_general`` (a
forum whose General topic is closed: a message or file sent without ``message_thread_id`` is refused "TOPIC_CLOSED").
``messages`` lists what was posted, ``edits`` what was edited, ``refused`` the calls it
answered with an error (scripted faults aside). A posted message keeps its request's
``reply_parameters`` (parsed from the JSON it arrives as) and ``message_thread_id``, and ``reply_to``:
the message it was sent as a reply to (None when it replies to nothing). As the Bot API does, a
reply to a deleted message is refused (400 "message to be replied not found") unless
``allow_sending_without_reply`` is true, and is then sent as no reply; a post into a deleted topic
is refused with "message thread not found", into a closed one with "TOPIC_CLOSED".
"""
import itertools
import json
import threading
import time
from collections import deque

from tests.fakes.loopback import LoopbackServer

MAX_TEXT = 4096


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


class FakeTelegram(LoopbackServer):
    def __init__(self, token: str = "123456:TEST", username: str = "ConveneTestBot"):
        super().__init__()
        self.token = token
        self.bot_id = int(token.split(":")[0])
        self.username = username
        self.messages: list[dict] = []
        self.edits: list[dict] = []
        self.documents: list[dict] = []
        self.refused: list[dict] = []  # calls answered with an error: {"method", "fields" (as sent), "description"}
        self.webhook: dict = {"url": "", "has_custom_certificate": False, "pending_update_count": 0}
        self._faults: deque = deque()
        self._forbidden: dict[str, str] = {}
        self._migrated: dict[str, int] = {}
        self._deleted: set[tuple[str, int]] = set()
        self._topics_gone: dict[tuple[str, int], str] = {}
        self._general_closed: set[str] = set()
        self._ids = itertools.count(1000)
        self._update_ids = itertools.count(1)
        self._fault_lock = threading.Lock()
        self.route("POST", r"/bot(?P<token>[^/]+)/(?P<method>\w+)", self._call)
        self.route("GET", r"/bot(?P<token>[^/]+)/(?P<method>\w+)", self._call)

    # -- scripting ---------------------------------------------------------------------------

    @property
    def api_base(self) -> str:
        return self.root

    def fail_next(self, status: int, *, times: int = 1, retry_after: int | None = None, description: str = "",
                  method: str | None = None) -> None:
        with self._fault_lock:
            for _ in range(times):
                self._faults.append((method, status, retry_after, description))

    def forbid(self, chat_id, description: str = "Forbidden: bot can't initiate conversation with a user") -> None:
        self._forbidden[str(chat_id)] = description

    def migrate(self, old_chat_id, new_chat_id) -> None:
        self._migrated[str(old_chat_id)] = int(new_chat_id)

    def delete(self, chat_id, message_id) -> None:
        """Someone deleted a message in the chat (the bot's, or anyone's): editing it now answers "message to edit not
        found", and a reply to it needs ``allow_sending_without_reply``."""
        with self._lock:
            self.messages = [m for m in self.messages
                             if not (str(m["chat_id"]) == str(chat_id) and str(m["message_id"]) == str(message_id))]
            self._deleted.add((str(chat_id), int(message_id)))

    def delete_topic(self, chat_id, thread_id) -> None:
        """A forum topic was deleted: posting into it answers "message thread not found"."""
        self._topics_gone[(str(chat_id), int(thread_id))] = "Bad Request: message thread not found"

    def close_topic(self, chat_id, thread_id) -> None:
        """A forum topic was closed (and the bot may not manage topics): posting into it answers "TOPIC_CLOSED"."""
        self._topics_gone[(str(chat_id), int(thread_id))] = "Bad Request: TOPIC_CLOSED"

    def close_general(self, chat_id) -> None:
        """The forum's General topic was closed: what is sent to the group without a topic answers "TOPIC_CLOSED"."""
        self._general_closed.add(str(chat_id))

    def _topic_refusal(self, chat_id: str, thread: int | None):
        """The refusal of a post into ``thread`` (None: the General topic), or None."""
        if thread is None:
            return self.error(400, "Bad Request: TOPIC_CLOSED") if chat_id in self._general_closed else None
        return self.error(400, self._topics_gone[(chat_id, thread)]) if (chat_id, thread) in self._topics_gone else None

    def sent_to(self, chat_id) -> list[dict]:
        return [m for m in self.messages if str(m["chat_id"]) == str(chat_id)]

    # -- the API -------------------------------------------------------------------------------

    @staticmethod
    def error(code: int, description: str, parameters: dict | None = None):
        body = {"ok": False, "error_code": code, "description": description}
        if parameters:
            body["parameters"] = parameters
        return code, body, {}

    def _fault(self, method: str):
        with self._fault_lock:
            for i, (only, status, retry_after, description) in enumerate(self._faults):
                if only is None or only == method:
                    del self._faults[i]
                    if status == 429:
                        wait = retry_after or 1
                        return self.error(429, description or f"Too Many Requests: retry after {wait}", {"retry_after": wait})
                    return self.error(status, description or f"Fake error {status}")
        return None

    def _fields(self, request) -> dict:
        fields = dict(request.form)
        if request.json:
            fields.update(request.json)
        return fields

    def _call(self, request):
        if request.match["token"] != self.token:
            return self.error(401, "Unauthorized")
        method = request.match["method"]
        fault = self._fault(method)
        if fault:
            return fault
        handler = getattr(self, f"_m_{method}", None)
        if handler is None:
            return self.error(404, "Not Found")
        fields = self._fields(request)
        status, body, headers = handler(fields, request)
        if status >= 400:
            with self._lock:
                self.refused.append({"method": method, "fields": fields, "description": body.get("description")})
        return status, body, headers

    def _bot_user(self) -> dict:
        return {"id": self.bot_id, "is_bot": True, "first_name": "Convene", "username": self.username}

    def _m_getMe(self, fields, request):
        return 200, {"ok": True, "result": {**self._bot_user(), "can_join_groups": True,
                                              "can_read_all_group_messages": False, "supports_inline_queries": False}}, {}

    def _target(self, fields):
        chat_id = str(fields.get("chat_id", ""))
        if not chat_id:
            return None, self.error(400, "Bad Request: chat_id is empty")
        if chat_id in self._forbidden:
            return None, self.error(403, self._forbidden[chat_id])
        if chat_id in self._migrated:
            return None, self.error(400, "Bad Request: group chat was upgraded to a supergroup chat",
                                    {"migrate_to_chat_id": self._migrated[chat_id]})
        return chat_id, None

    @staticmethod
    def _entities(fields) -> list:
        raw = fields.get("entities")
        if not raw:
            return []
        return json.loads(raw) if isinstance(raw, str) else raw

    @staticmethod
    def _chat(chat_id: str) -> dict:
        chat_type = "private" if not chat_id.startswith("-") else ("supergroup" if chat_id.startswith("-100") else "group")
        return {"id": int(chat_id), "type": chat_type}

    def _message(self, chat_id: str, **extra) -> dict:
        return {"message_id": next(self._ids), "date": int(time.time()), "chat": self._chat(chat_id),
                "from": self._bot_user(), **extra}

    @staticmethod
    def _json_field(fields, name):
        raw = fields.get(name)
        return json.loads(raw) if isinstance(raw, str) else raw

    def _m_sendMessage(self, fields, request):
        chat_id, problem = self._target(fields)
        if problem:
            return problem
        text = fields.get("text", "")
        if not text:
            return self.error(400, "Bad Request: message text is empty")
        if utf16_len(text) > MAX_TEXT:
            return self.error(400, "Bad Request: message is too long")
        entities = self._entities(fields)
        for e in entities:
            if e["offset"] + e["length"] > utf16_len(text):
                return self.error(400, "Bad Request: can't parse entities: entity beyond the end of the text")
        thread = fields.get("message_thread_id")
        thread = int(thread) if thread not in (None, "") else None
        refused = self._topic_refusal(chat_id, thread)
        if refused:
            return refused
        reply = self._json_field(fields, "reply_parameters")
        if reply is not None and (not isinstance(reply, dict) or not isinstance(reply.get("message_id"), int)):
            return self.error(400, "Bad Request: invalid reply parameters specified")
        reply_to = reply["message_id"] if reply else None
        if reply_to is not None and (chat_id, reply_to) in self._deleted:
            if reply.get("allow_sending_without_reply") is not True:
                return self.error(400, "Bad Request: message to be replied not found")
            reply_to = None
        extra = {"entities": entities} if entities else {}
        if reply_to is not None:
            extra["reply_to_message"] = {"message_id": reply_to, "date": int(time.time()), "chat": self._chat(chat_id)}
        if thread is not None:
            extra.update(message_thread_id=thread, is_topic_message=True)
        message = self._message(chat_id, text=text, **extra)
        with self._lock:
            self.messages.append({"chat_id": chat_id, "text": text, "entities": entities, "message_id": message["message_id"],
                                  "reply_parameters": reply, "message_thread_id": thread, "reply_to": reply_to,
                                  "at": time.monotonic()})
        return 200, {"ok": True, "result": message}, {}

    def _m_editMessageText(self, fields, request):
        chat_id, problem = self._target(fields)
        if problem:
            return problem
        message_id = int(fields.get("message_id", 0))
        original = next((m for m in self.messages if m["chat_id"] == chat_id and m["message_id"] == message_id), None)
        if original is None:
            return self.error(400, "Bad Request: message to edit not found")
        text = fields.get("text", "")
        if text == original["text"]:
            return self.error(400, "Bad Request: message is not modified: specified new message content and reply markup "
                                   "are exactly the same as a current content and reply markup of the message")
        original["text"] = text
        with self._lock:
            self.edits.append({"chat_id": chat_id, "message_id": message_id, "text": text, "at": time.monotonic()})
        return 200, {"ok": True, "result": {**self._message(chat_id, text=text), "message_id": message_id,
                                             "edit_date": int(time.time())}}, {}

    def _m_sendDocument(self, fields, request):
        chat_id, problem = self._target(fields)
        if problem:
            return problem
        filename, data = request.files.get("document", ("", b""))
        if not data:
            return self.error(400, "Bad Request: there is no document in the request")
        thread = fields.get("message_thread_id")
        thread = int(thread) if thread not in (None, "") else None
        refused = self._topic_refusal(chat_id, thread)
        if refused:
            return refused
        message = self._message(chat_id, document={"file_id": f"doc{len(self.documents)}", "file_unique_id": "u",
                                                   "file_name": filename, "file_size": len(data)})
        with self._lock:
            self.documents.append({"chat_id": chat_id, "filename": filename, "data": data, "caption": fields.get("caption"),
                                   "message_thread_id": thread})
        return 200, {"ok": True, "result": message}, {}

    def _m_setWebhook(self, fields, request):
        url = fields.get("url", "")
        if url and not url.startswith("https://"):
            return self.error(400, "Bad Request: bad webhook: An HTTPS URL must be provided for webhook")
        allowed = fields.get("allowed_updates")
        self.webhook = {"url": url, "has_custom_certificate": False, "pending_update_count": 0,
                        "allowed_updates": json.loads(allowed) if isinstance(allowed, str) else allowed,
                        "secret_token": fields.get("secret_token")}
        return 200, {"ok": True, "result": True, "description": "Webhook was set"}, {}

    def _m_deleteWebhook(self, fields, request):
        self.webhook = {"url": "", "has_custom_certificate": False, "pending_update_count": 0}
        return 200, {"ok": True, "result": True, "description": "Webhook was deleted"}, {}

    def _m_getWebhookInfo(self, fields, request):
        info = {k: v for k, v in self.webhook.items() if k != "secret_token" and v is not None}
        return 200, {"ok": True, "result": info}, {}

    # -- updates as Telegram sends them (fixtures follow the Bot API's documented objects) -----

    def next_update_id(self) -> int:
        return next(self._update_ids)
