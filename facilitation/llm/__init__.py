from facilitation.llm.base import LLMError, LLMRequest, LLMResponse, Provider, TerminalLLMError, TransientLLMError
from facilitation.llm.registry import get_provider, provider_for

__all__ = ["LLMError", "LLMRequest", "LLMResponse", "Provider", "TerminalLLMError", "TransientLLMError", "get_provider", "provider_for"]
