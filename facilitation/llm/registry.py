"""Provider lookup and fallback chains, from configuration."""
from django.conf import settings

from facilitation.llm.base import Provider

PROVIDERS = ("rehearsal", "anthropic", "openai", "scripted")


def get_provider(name: str) -> Provider:
    if name == "rehearsal":
        from facilitation.llm.rehearsal import RehearsalProvider

        return RehearsalProvider(pace=settings.CONVENE.get("REHEARSAL_PACE", 0.0))
    if name == "scripted":
        from facilitation.llm.scripted import ScriptedProvider

        return ScriptedProvider.from_settings()
    if name == "anthropic":
        from facilitation.llm.anthropic_provider import AnthropicProvider

        return AnthropicProvider.from_settings()
    if name == "openai":
        from facilitation.llm.openai_provider import OpenAIProvider

        return OpenAIProvider.from_settings()
    raise ValueError(f"Unknown LLM provider {name!r}; choose one of {', '.join(PROVIDERS)}.")


def provider_for(name: str = "") -> Provider:
    """The provider an agent should use: its own choice, else the default, with the configured fallbacks."""
    primary = name or settings.CONVENE["DEFAULT_PROVIDER"]
    fallbacks = [p for p in settings.CONVENE["FALLBACK_PROVIDERS"] if p and p != primary]
    if not fallbacks:
        return get_provider(primary)
    from facilitation.llm.chain import FallbackChain

    return FallbackChain([get_provider(primary), *(get_provider(p) for p in fallbacks)])
