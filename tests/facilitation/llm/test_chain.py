"""Failing over between providers: on transient errors only, and saying who answered."""
import pytest

from facilitation.llm.anthropic_provider import AnthropicProvider
from facilitation.llm.base import LLMRequest, LLMResponse, Provider, TerminalLLMError, TransientLLMError
from facilitation.llm.chain import FallbackChain
from facilitation.llm.openai_provider import OpenAIProvider
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.openai_server import FakeOpenAIServer


class Stub(Provider):
    def __init__(self, name, outcome="ok", offline=False):
        self.name, self.outcome, self.offline = name, outcome, offline
        self.seen: list[LLMRequest] = []

    def complete(self, request):
        self.seen.append(request)
        if isinstance(self.outcome, Exception):
            raise self.outcome
        text = f"{self.name} says {self.outcome}"
        return LLMResponse(text=text, provider=self.name, model=request.model or "default")


def ask(**overrides):
    return LLMRequest(system="sys", messages=[{"role": "user", "content": "hi"}], purpose="contribution", **overrides)


def test_first_provider_answers_and_names_the_chain():
    first, second = Stub("anthropic"), Stub("openai")
    chain = FallbackChain([first, second])

    response = chain.complete(ask())

    assert (chain.name, chain.offline) == ("anthropic", False)
    assert response.provider == "anthropic"
    assert second.seen == []


def test_transient_moves_on_and_fallbacks_use_their_own_model():
    first = Stub("anthropic", TransientLLMError("busy", status=529))
    second = Stub("rehearsal", offline=True)

    response = FallbackChain([first, second]).complete(ask(model="claude-opus-4-1"))

    assert response.provider == "rehearsal"
    assert first.seen[0].model == "claude-opus-4-1"
    assert second.seen[0].model == ""


def test_terminal_stops_at_once():
    second = Stub("openai")
    chain = FallbackChain([Stub("anthropic", TerminalLLMError("bad key", status=401)), second])

    with pytest.raises(TerminalLLMError):
        chain.complete(ask())

    assert second.seen == []


def test_all_transient_raises_the_last_error():
    last = TransientLLMError("down too", status=503)
    chain = FallbackChain([Stub("anthropic", TransientLLMError("down", status=500)), Stub("openai", last)])

    with pytest.raises(TransientLLMError) as caught:
        chain.complete(ask())

    assert caught.value is last
    assert caught.value.provider == "openai"


def test_empty_chain_is_refused():
    with pytest.raises(ValueError):
        FallbackChain([])


def test_real_clients_fail_over_from_anthropic_to_openai():
    with FakeAnthropicServer() as claude, FakeOpenAIServer(responder=lambda body: "local answer") as local:
        chain = FallbackChain(
            [
                AnthropicProvider(api_key="k", base_url=claude.url, model="claude-test"),
                OpenAIProvider(base_url=local.url, model="qwen"),
            ]
        )
        claude.fail_next(529)
        claude.hang_next(10)

        overloaded = chain.complete(ask(timeout=0.5))
        timed_out = chain.complete(ask(timeout=0.5))
        recovered = chain.complete(ask(timeout=2))

        claude.fail_next(400)
        with pytest.raises(TerminalLLMError):
            chain.complete(ask(timeout=2))

    assert (overloaded.provider, overloaded.text, overloaded.model) == ("openai", "local answer", "qwen")
    assert timed_out.provider == "openai"
    assert recovered.provider == "anthropic"
    assert len(local.requests) == 2


def test_registry_builds_a_chain_from_settings(settings):
    from facilitation.llm.registry import provider_for

    settings.CONVENE = {**settings.CONVENE, "DEFAULT_PROVIDER": "anthropic", "FALLBACK_PROVIDERS": ["openai"]}

    chain = provider_for()

    assert isinstance(chain, FallbackChain)
    assert chain.name == "anthropic"
    assert [type(p) for p in chain.providers] == [AnthropicProvider, OpenAIProvider]
