"""A provider that replays a fixture script, for tests.

The script is a list of rules, each matched against the request's purpose and
meta; the first match answers. Rules never depend on call order, so several
worker processes replay the same script identically::

    [{"purpose": "contribution", "round": 2, "delay": 5},
     {"purpose": "evaluation", "text": "{...json...}"},
     {"purpose": "contribution", "speaker": "Architect", "error": "transient"},
     {"text": "fallback for anything"}]

``delay`` sleeps before answering (to simulate slow or hanging models),
``error`` raises ``transient`` or ``terminal``, ``text`` may contain the tokens ``{round}``,
``{question}``, ``{speaker}`` and ``{nextId}`` (the first speaking seat after the last speaker).
The script comes from ``settings.CONVENE_SCRIPT`` (a list) or the JSON file
named by the ``CONVENE_SCRIPT_FILE`` environment variable.
"""
import json
import os
import time

from django.conf import settings

from facilitation.llm.base import LLMRequest, LLMResponse, Provider, TerminalLLMError, TransientLLMError, estimate_tokens, prompt_text

DEFAULT_RULES = [
    {"purpose": "opening", "text": '{"decision": "continue", "nextParticipantId": {nextId}, "question": "Open for us: what matters most here?", "reasoning": "Start with the first voice."}'},
    {"purpose": "evaluation", "text": '{"decision": "continue", "nextParticipantId": {nextId}, "question": "What would you add?", "reasoning": "Keep going."}'},
    {"purpose": "contribution", "text": "Scripted contribution for round {round}. Q: what next?"},
    {"purpose": "synthesis", "text": "Scripted synthesis."},
    {"text": "Scripted."},
]


class ScriptedProvider(Provider):
    name = "scripted"
    offline = True

    def __init__(self, rules: list[dict] | None = None):
        self.rules = list(rules or []) + DEFAULT_RULES
        # A script that makes a model slow or hang is waited for as a real model is; any other answers at once.
        self.inline = not any(rule.get("delay") for rule in self.rules)

    @classmethod
    def from_settings(cls) -> "ScriptedProvider":
        rules = getattr(settings, "CONVENE_SCRIPT", None)
        path = os.environ.get("CONVENE_SCRIPT_FILE")
        if rules is None and path:
            with open(path) as fh:
                rules = json.load(fh)
        return cls(rules)

    @staticmethod
    def _matches(rule: dict, request: LLMRequest) -> bool:
        meta = request.meta
        if "purpose" in rule and rule["purpose"] != request.purpose:
            return False
        if "round" in rule and rule["round"] != meta.get("round"):
            return False
        if "speaker" in rule and rule["speaker"] != meta.get("speaker", {}).get("name"):
            return False
        return True

    @staticmethod
    def _log_call(request: LLMRequest) -> None:
        """With ``CONVENE_SCRIPT_CALLS_LOG`` set, one JSON line per call as it starts (the chaos
        benchmark counts repeated calls with it, including those a killed worker never finished)."""
        path = os.environ.get("CONVENE_SCRIPT_CALLS_LOG")
        if not path:
            return
        line = json.dumps({"purpose": request.purpose, "round": request.meta.get("round"),
                           "seat": (request.meta.get("speaker") or {}).get("id"), "at": time.time()}) + "\n"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)

    def complete(self, request: LLMRequest) -> LLMResponse:
        self._log_call(request)
        rule = next(r for r in self.rules if self._matches(r, request))
        if rule.get("delay"):
            time.sleep(float(rule["delay"]))
        if rule.get("error") == "transient":
            raise TransientLLMError("scripted transient error", provider=self.name, status=503)
        if rule.get("error") == "terminal":
            raise TerminalLLMError("scripted terminal error", provider=self.name, status=400)
        meta = request.meta
        speakers = meta.get("speakers") or [{"id": 0}]
        last = meta.get("lastSpeakerId")
        ids = [s["id"] for s in speakers]
        next_id = ids[(ids.index(last) + 1) % len(ids)] if last in ids else ids[0]
        text = rule.get("text", "")
        for token, value in (("{round}", meta.get("round", 0)), ("{question}", meta.get("question", "")),
                             ("{speaker}", meta.get("speaker", {}).get("name", "")), ("{nextId}", next_id)):
            text = text.replace(token, str(value))
        prompt_chars = len(prompt_text(request))
        return LLMResponse(text=text, provider=self.name, model=request.model or "scripted",
                           input_tokens=prompt_chars // 4 + 1, output_tokens=estimate_tokens(text))
