"""The real ``anthropic`` SDK against a fake Messages API on loopback."""
import time

import pytest

from facilitation.llm.anthropic_provider import AnthropicProvider
from facilitation.llm.http_errors import retry_after_seconds
from facilitation.llm.base import LLMRequest, TerminalLLMError, TransientLLMError
from tests.fakes.anthropic_server import FakeAnthropicServer

KEY = "sk-ant-test"


@pytest.fixture
def server():
    with FakeAnthropicServer(api_key=KEY) as fake:
        yield fake


@pytest.fixture
def provider(server):
    return AnthropicProvider(api_key=KEY, base_url=server.url, model="claude-test")


def ask(text="What should we decide?", **overrides) -> LLMRequest:
    fields = {
        "system": "You are the facilitator. " * 200,
        "messages": [{"role": "user", "content": text}],
        "purpose": "evaluation",
        "max_tokens": 300,
        "temperature": 0.2,
        "timeout": 5.0,
    }
    fields.update(overrides)
    return LLMRequest(**fields)


def test_success_returns_text_usage_and_model(server, provider):
    response = provider.complete(ask("Pick a venue"))

    assert response.text == "You said: Pick a venue"
    assert response.provider == "anthropic"
    assert response.model == "claude-test"
    assert response.input_tokens > 0 and response.output_tokens > 0
    assert response.cache_write_tokens > 0 and response.cache_read_tokens == 0
    assert response.latency_ms >= 0


def test_second_call_reads_the_cached_prefix(server, provider):
    first = provider.complete(ask("one"))
    second = provider.complete(ask("two"))

    assert second.cache_read_tokens == first.cache_write_tokens > 0
    assert second.cache_write_tokens == 0


def test_request_carries_cache_control_limits_and_no_sdk_retries(server, provider):
    provider.complete(ask(model="claude-other", max_tokens=77, temperature=0.4))

    body = server.requests[-1]["body"]
    assert body["system"] == [
        {"type": "text", "text": "You are the facilitator. " * 200, "cache_control": {"type": "ephemeral"}}
    ]
    assert body["messages"] == [{"role": "user", "content": "What should we decide?"}]
    assert (body["model"], body["max_tokens"]) == ("claude-other", 77)
    assert "temperature" not in body  # API version 2026-10-21 refuses sampling parameters
    assert server.requests[-1]["headers"]["x-stainless-retry-count"] == "0"
    assert server.requests[-1]["headers"]["x-stainless-read-timeout"] == "5.0"


def test_empty_system_is_left_out(server, provider):
    provider.complete(ask(system=""))

    assert "system" not in server.requests[-1]["body"]


def test_responder_is_pluggable(server, provider):
    server.responder = lambda body: f"{len(body['messages'])} message(s), purpose unknown to the API"

    assert provider.complete(ask()).text == "1 message(s), purpose unknown to the API"


def test_rate_limit_is_transient_with_retry_after(server, provider):
    server.fail_next(429, retry_after=7)

    with pytest.raises(TransientLLMError) as caught:
        provider.complete(ask())

    assert caught.value.status == 429
    assert caught.value.retry_after == 7.0
    assert caught.value.provider == "anthropic"
    assert len(server.requests) == 1  # the SDK did not retry on its own


@pytest.mark.parametrize("status", [500, 503, 529])
def test_server_errors_and_overload_are_transient(server, provider, status):
    server.fail_next(status)

    with pytest.raises(TransientLLMError) as caught:
        provider.complete(ask())

    assert caught.value.status == status
    assert provider.complete(ask()).text  # the fault was used up; the next call succeeds


@pytest.mark.parametrize("status", [400, 403, 404])
def test_client_errors_are_terminal(server, provider, status):
    server.fail_next(status)

    with pytest.raises(TerminalLLMError) as caught:
        provider.complete(ask())

    assert caught.value.status == status


def test_wrong_key_is_terminal(server):
    wrong = AnthropicProvider(api_key="sk-ant-wrong", base_url=server.url, model="claude-test")

    with pytest.raises(TerminalLLMError) as caught:
        wrong.complete(ask())

    assert caught.value.status == 401


def test_fake_refuses_sampling_parameters_like_the_api(server):
    import anthropic

    client = anthropic.Anthropic(api_key=KEY, base_url=server.url, max_retries=0)
    with pytest.raises(anthropic.BadRequestError, match="temperature: Extra inputs are not permitted"):
        client.messages.create(
            model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}], extra_body={"temperature": 1.0}
        )


def test_missing_credentials_are_terminal(server, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    monkeypatch.setenv("HOME", "/nonexistent")

    with pytest.raises(TerminalLLMError):
        AnthropicProvider(base_url=server.url, model="claude-test").complete(ask())


def test_invalid_request_from_the_api_is_terminal(server, provider):
    with pytest.raises(TerminalLLMError) as caught:
        provider.complete(ask(messages=[{"role": "moderator", "content": "hi"}]))

    assert caught.value.status == 400


def test_hang_longer_than_timeout_is_transient_and_bounded(server, provider):
    server.hang_next(10)
    started = time.monotonic()

    with pytest.raises(TransientLLMError):
        provider.complete(ask(timeout=0.5))

    assert time.monotonic() - started < 3


def test_stopped_server_is_transient_even_on_a_pooled_connection(server, provider):
    provider.complete(ask())  # leaves a kept-alive connection in the client's pool
    server.stop()

    with pytest.raises(TransientLLMError):
        provider.complete(ask(timeout=2))


def test_from_settings_reads_key_base_url_and_model(settings, server):
    settings.LLM = {**settings.LLM, "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": server.url}
    settings.CONVENE = {**settings.CONVENE, "DEFAULT_MODEL": "claude-haiku-4-5"}

    response = AnthropicProvider.from_settings().complete(ask())

    assert response.model == "claude-haiku-4-5"
    headers = server.requests[-1]["headers"]
    assert headers.get("x-api-key") == KEY or headers.get("authorization") == f"Bearer {KEY}"


def test_the_steps_of_a_process_share_one_client_and_its_connection(settings, server):
    from facilitation.llm.registry import get_provider

    settings.LLM = {**settings.LLM, "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": server.url}
    settings.CONVENE = {**settings.CONVENE, "DEFAULT_MODEL": "claude-test"}
    first, second = get_provider("anthropic"), get_provider("anthropic")  # as two steps ask for it
    assert first is second
    first.complete(ask())
    second.complete(ask())
    assert len(server.requests) == 2 and server.connections_made == 1
    settings.CONVENE = {**settings.CONVENE, "DEFAULT_MODEL": "claude-other"}  # another configuration, another client
    assert get_provider("anthropic") is not first and get_provider("anthropic").model == "claude-other"


def test_from_settings_defaults_the_model(settings):
    settings.LLM = {**settings.LLM, "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": ""}
    settings.CONVENE = {**settings.CONVENE, "DEFAULT_MODEL": ""}

    assert AnthropicProvider.from_settings().model == "claude-sonnet-5"


@pytest.mark.parametrize(
    "headers, expected",
    [
        ({"retry-after": "3"}, 3.0),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({}, None),
        ({"retry-after": "soon"}, None),
    ],
)
def test_retry_after_parsing(headers, expected):
    assert retry_after_seconds(headers) == expected


def test_a_prefix_under_1024_tokens_is_never_cached(server, provider):
    provider.complete(ask("one", system="Short system."))
    second = provider.complete(ask("two", system="Short system."))
    assert second.cache_read_tokens == 0 and second.cache_write_tokens == 0


def blocks(*texts, marks=()):
    return [{"role": "user", "content": [dict({"type": "text", "text": t}, **({"cache_control": {"type": "ephemeral"}} if n in marks else {}))
                                         for n, t in enumerate(texts)]}]


def test_message_breakpoints_cache_an_append_only_prompt_block_by_block(server, provider):
    turn = "A turn of realistic length. " * 40  # about 280 tokens
    first = provider.complete(ask(messages=blocks(turn + "1", "state A", marks=(0,))))
    second = provider.complete(ask(messages=blocks(turn + "1", turn + "2", "state B", marks=(1,))))
    # the second request finds the first one's prefix one block before its breakpoint, and writes only the new turn
    assert second.cache_read_tokens == first.cache_read_tokens + first.cache_write_tokens
    assert 0 < second.cache_write_tokens < 300
    changed = provider.complete(ask(messages=blocks(turn + "X", turn + "2", "state C", marks=(1,))))
    system_prefix = len("You are the facilitator. " * 200) // 4 + 1
    assert changed.cache_read_tokens == system_prefix < second.cache_read_tokens  # only the identical system prefix is read


def test_at_most_four_breakpoints_are_sent_the_latest_kept(server, provider):
    provider.complete(ask(messages=blocks("a", "b", "c", "d", "e", marks=(0, 1, 2, 3, 4))))
    body = server.requests[-1]["body"]
    marked = [b["text"] for b in body["messages"][0]["content"] if b.get("cache_control")]
    assert marked == ["c", "d", "e"] and body["system"][0]["cache_control"]


SCHEMA = {"type": "object", "properties": {"decision": {"type": "string", "enum": ["continue", "synthesize"]},
                                           "nextParticipantId": {"anyOf": [{"type": "integer", "enum": [5, 7]}, {"type": "null"}]}},
          "required": ["decision", "nextParticipantId"], "additionalProperties": False}


def test_a_schema_forces_a_tool_call_whose_input_is_the_answer(server, provider):
    server.responder = lambda body: {"decision": "continue", "nextParticipantId": 7}
    response = provider.complete(ask(response_schema=SCHEMA, response_name="record_decision"))
    body = server.requests[-1]["body"]
    assert body["tools"] == [{"name": "record_decision", "description": "Record the answer.", "input_schema": SCHEMA}]
    assert body["tool_choice"] == {"type": "tool", "name": "record_decision"}
    assert response.text == '{"decision": "continue", "nextParticipantId": 7}'


def test_without_a_schema_no_tool_is_offered(server, provider):
    provider.complete(ask())
    assert "tools" not in server.requests[-1]["body"] and "tool_choice" not in server.requests[-1]["body"]
