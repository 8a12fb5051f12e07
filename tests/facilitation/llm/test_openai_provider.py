"""The real ``openai`` SDK against a fake OpenAI-compatible server on loopback."""
import time

import pytest

from facilitation.llm.base import LLMRequest, TerminalLLMError, TransientLLMError
from facilitation.llm.openai_provider import OpenAIProvider
from tests.fakes.openai_server import FakeOpenAIServer


@pytest.fixture
def server():
    with FakeOpenAIServer() as fake:
        yield fake


@pytest.fixture
def provider(server):
    return OpenAIProvider(base_url=server.url, model="llama3.2")


def ask(text="Where do we meet?", **overrides) -> LLMRequest:
    fields = {
        "system": "You are a careful participant.",
        "messages": [{"role": "user", "content": text}],
        "purpose": "contribution",
        "max_tokens": 200,
        "temperature": 0.5,
        "timeout": 5.0,
    }
    fields.update(overrides)
    return LLMRequest(**fields)


def test_success_puts_system_first_and_reports_usage(server, provider):
    first = provider.complete(ask("Lisbon?"))
    second = provider.complete(ask("Porto?"))

    assert first.text == "You said: Lisbon?"
    assert (first.provider, first.model) == ("openai", "llama3.2")
    assert first.output_tokens > 0 and first.cache_read_tokens == 0
    assert second.cache_read_tokens > 0  # the system prompt was seen before
    body = server.requests[-1]["body"]
    assert body["messages"][0] == {"role": "system", "content": "You are a careful participant."}
    assert body["messages"][1] == {"role": "user", "content": "Porto?"}
    assert (body["model"], body["max_tokens"], body["temperature"]) == ("llama3.2", 200, 0.5)
    assert server.requests[-1]["path"] == "/v1/chat/completions"
    assert server.requests[-1]["headers"]["authorization"] == "Bearer not-needed"


def test_cached_tokens_are_not_counted_twice(server, provider):
    provider.complete(ask())
    second = provider.complete(ask())

    prompt_tokens = sum(len(m["content"]) // 4 + 1 for m in server.requests[-1]["body"]["messages"])
    assert second.input_tokens + second.cache_read_tokens == prompt_tokens


def test_usage_without_details_from_a_local_server():
    with FakeOpenAIServer(usage_details=False) as fake:
        response = OpenAIProvider(base_url=fake.url).complete(ask())

    assert response.input_tokens > 0 and response.cache_read_tokens == 0
    assert response.model == "gpt-4o-mini"


def test_rate_limit_is_transient_with_retry_after(server, provider):
    server.fail_next(429, retry_after="2")

    with pytest.raises(TransientLLMError) as caught:
        provider.complete(ask())

    assert (caught.value.status, caught.value.retry_after, caught.value.provider) == (429, 2.0, "openai")
    assert len(server.requests) == 1


def test_server_error_is_transient(server, provider):
    server.fail_next(500)

    with pytest.raises(TransientLLMError):
        provider.complete(ask())


@pytest.mark.parametrize("status", [400, 401, 404])
def test_client_errors_are_terminal(server, provider, status):
    server.fail_next(status)

    with pytest.raises(TerminalLLMError) as caught:
        provider.complete(ask())

    assert caught.value.status == status


def test_wrong_key_is_terminal():
    with FakeOpenAIServer(api_key="sk-right") as fake:
        with pytest.raises(TerminalLLMError) as caught:
            OpenAIProvider(base_url=fake.url, api_key="sk-wrong").complete(ask())

    assert caught.value.status == 401


def test_hang_longer_than_timeout_is_transient_and_bounded(server, provider):
    server.hang_next(10)
    started = time.monotonic()

    with pytest.raises(TransientLLMError):
        provider.complete(ask(timeout=0.5))

    assert time.monotonic() - started < 3


def test_from_settings(settings, server):
    settings.LLM = {**settings.LLM, "OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": ""}
    settings.CONVENE = {**settings.CONVENE, "DEFAULT_MODEL": ""}

    response = OpenAIProvider.from_settings().complete(ask())

    assert response.model == "gpt-4o-mini"
    assert server.requests[-1]["headers"]["authorization"] == "Bearer not-needed"


SCHEMA = {"type": "object", "properties": {"decision": {"type": "string", "enum": ["continue", "synthesize"]}},
          "required": ["decision"], "additionalProperties": False}


def test_a_schema_asks_for_a_strict_json_schema_response(server, provider):
    server.responder = lambda body: {"decision": "synthesize"}
    response = provider.complete(ask(response_schema=SCHEMA, response_name="record_decision"))
    assert server.requests[-1]["body"]["response_format"] == {
        "type": "json_schema", "json_schema": {"name": "record_decision", "schema": SCHEMA, "strict": True}}
    assert response.text == '{"decision": "synthesize"}'


def test_a_server_without_json_schema_is_asked_in_plain_json_and_remembered():
    with FakeOpenAIServer(json_schema=False, responder=lambda body: '{"decision": "continue"}') as server:
        provider = OpenAIProvider(base_url=server.url, model="llama3.2")
        assert provider.complete(ask(response_schema=SCHEMA)).text == '{"decision": "continue"}'
        assert [("response_format" in r["body"]) for r in server.requests] == [True, False]
        again = OpenAIProvider(base_url=server.url, model="llama3.2")
        again.complete(ask(response_schema=SCHEMA))
        assert "response_format" not in server.requests[-1]["body"] and len(server.requests) == 3


def test_block_messages_are_flattened_to_text(server, provider):
    blocks = [{"type": "text", "text": "First.", "cache_control": {"type": "ephemeral"}}, {"type": "text", "text": "Second."}]
    provider.complete(ask(messages=[{"role": "user", "content": blocks}]))
    assert server.requests[-1]["body"]["messages"][1] == {"role": "user", "content": "First.\n\nSecond."}
