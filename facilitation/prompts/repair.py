"""Asking the facilitator once more when its decision could not be used."""
from dataclasses import replace

from facilitation.llm import LLMRequest


def repair_request(request: LLMRequest, answer: str, error: str) -> LLMRequest:
    """The same request, followed by the invalid answer and what was wrong with it."""
    messages = list(request.messages) + [
        {"role": "assistant", "content": (answer or "").strip()[:4000] or "(no answer)"},
        {"role": "user", "content": f"That decision cannot be used: {error} Answer again with one corrected decision, "
                                    "in the format described above, and nothing else."},
    ]
    return replace(request, messages=messages)
