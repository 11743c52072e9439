"""What an endpoint says when a prompt is longer than the model's context window, and what the endpoint
says that window is. Pure.

OpenAI (and Groq, DeepSeek, ...) answer 400 with `code: context_length_exceeded`; llama.cpp with `type:
exceed_context_size_error` and `n_ctx`; vLLM, Mistral, Anthropic, Gemini, TGI and others only say so in
words ("This model's maximum context length is 8192 tokens", "prompt is too long", "exceeds the context
window", TGI's 422 "`inputs` tokens + `max_new_tokens` must be <= 4096"). A rate limit that counts tokens
(429, "tokens per minute") is not one of these.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["context_limit", "has_overflow_code", "is_context_overflow"]

_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error", "context_window_exceeded"})

_WORDS = re.compile(
    r"context[ _](?:length|window|size)"
    r"|prompt is too long"
    r"|input (?:is )?too (?:long|large)"
    r"|maximum number of tokens allowed"
    r"|reduce the length of the messages"
    r"|max_new_tokens`? must be <=",
    re.IGNORECASE,
)
_NOT = re.compile(r"rate limit|per minute|per day|\bTPM\b|\bRPM\b|quota", re.IGNORECASE)

_LIMIT = (
    re.compile(r"maximum context length is (\d+)", re.IGNORECASE),  # OpenAI, vLLM, DeepSeek
    re.compile(r"(\d+) maximum context length", re.IGNORECASE),  # Mistral
    re.compile(r"context (?:length|window|size) (?:of|is) (\d+)", re.IGNORECASE),
    re.compile(r"> (\d+) maximum", re.IGNORECASE),  # Anthropic: "... 210000 tokens > 200000 maximum"
    re.compile(r"maximum number of tokens allowed \((\d+)\)", re.IGNORECASE),  # Gemini
    re.compile(r"must be <= (\d+)", re.IGNORECASE),  # TGI
)


def _error(body: Any) -> dict[str, Any]:
    """The error object of an error body (`{"error": {...}}`, or the object itself)."""
    if isinstance(body, dict):
        inner = body.get("error")
        return inner if isinstance(inner, dict) else body
    return {}


def has_overflow_code(body: Any) -> bool:
    """Whether an error body says "context window exceeded" as a code (OpenAI's `code`, llama.cpp's
    `type`), not only in words."""
    error = _error(body)
    return any(str(error.get(key, "")).lower() in _CODES for key in ("code", "type"))


def is_context_overflow(status: int, body: Any, message: str) -> bool:
    """Whether an HTTP error (`status`, the decoded `body`, the client's `message`) says the prompt does not
    fit the model's context window: a 4xx other than 429 with one of the codes or wordings above."""
    if not 400 <= status < 500 or status == 429:
        return False
    if has_overflow_code(body):
        return True
    error = _error(body)
    text = f"{error.get('message', '')} {message}"
    return bool(_WORDS.search(text)) and not _NOT.search(text)


def context_limit(body: Any, message: str) -> int | None:
    """The context window in tokens an overflow error names (llama.cpp's `n_ctx`, or a number in its
    words), or None when it names none."""
    error = _error(body)
    n_ctx = error.get("n_ctx")
    if isinstance(n_ctx, int) and not isinstance(n_ctx, bool) and n_ctx > 0:
        return n_ctx
    text = f"{error.get('message', '')} {message}".replace(",", "")
    for pattern in _LIMIT:
        match = pattern.search(text)
        if match:
            return int(match.group(1))
    return None
