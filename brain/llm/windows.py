"""What an OpenAI-compatible endpoint's model list (`GET /models`) says of a model's context window. Pure.

OpenAI lists no windows; vLLM gives each model its `max_model_len`, OpenRouter and Together a
`context_length`, LM Studio a `max_context_length`. llama.cpp's `n_ctx_train` is the window the model was
trained for, not the one the server gives it, and is not read.
"""

from __future__ import annotations

from typing import Any

__all__ = ["listed_context_window"]

_KEYS = ("max_model_len", "context_length", "context_window", "max_context_length")


def listed_context_window(data: Any, model: str) -> int | None:
    """The context window in tokens that a `/models` reply (`{"data": [...]}`, or the list itself) gives
    the entry whose `id` is `model` (exactly, else ignoring case), or None when it lists none."""
    entries = data.get("data") if isinstance(data, dict) else data
    if not isinstance(entries, list):
        return None
    models = [e for e in entries if isinstance(e, dict) and isinstance(e.get("id"), str)]
    entry = next((e for e in models if e["id"] == model), None) or next(
        (e for e in models if e["id"].casefold() == model.casefold()), None
    )
    if entry is None:
        return None
    for key in _KEYS:
        value = entry.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 512:
            return value
    return None
