"""Fail over to the next provider when one has a transient problem."""
from dataclasses import replace

from facilitation.llm.base import LLMRequest, LLMResponse, Provider, TransientLLMError


class FallbackChain(Provider):
    """Ask each provider in turn until one answers.

    A ``TransientLLMError`` moves on to the next provider at once (the engine does
    any waiting and retrying); when every provider fails, the last such error is
    raised. A ``TerminalLLMError`` is raised straight away: the request itself is
    at fault, so another provider would not help. The response's ``provider``
    names whichever provider actually answered.

    A model named in the request belongs to the first provider; the fallbacks are
    asked with the model left blank, so each uses its own default.
    """

    def __init__(self, providers: list[Provider]):
        if not providers:
            raise ValueError("A fallback chain needs at least one provider.")
        self.providers = list(providers)
        self.name = self.providers[0].name
        self.offline = self.providers[0].offline
        self.inline = all(provider.inline for provider in self.providers)

    def complete(self, request: LLMRequest) -> LLMResponse:
        last_error: TransientLLMError | None = None
        for index, provider in enumerate(self.providers):
            try:
                response = provider.complete(request if index == 0 else replace(request, model=""))
            except TransientLLMError as exc:
                exc.provider = exc.provider or provider.name
                last_error = exc
                continue
            response.provider = response.provider or provider.name
            return response
        raise last_error
