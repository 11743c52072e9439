"""The error hierarchy. Every error the library raises on purpose is a `BrainError`."""

from __future__ import annotations

__all__ = [
    "BrainError",
    "ConfigError",
    "ConflictError",
    "ContextOverflowError",
    "ErasedError",
    "InputError",
    "LLMError",
    "LLMTimeoutError",
    "MalformedReplyError",
    "NotFoundError",
    "StaleIndexError",
    "StoreError",
    "TooLargeError",
    "UnreachableError",
]


class BrainError(Exception):
    """Base of every error raised by brain-assistant."""


class ConfigError(BrainError):
    """Settings could not be loaded or are invalid; the message says where and what to do."""


class LLMError(BrainError):
    """An LLM call failed after its retries, or its reply was empty or malformed."""


class LLMTimeoutError(LLMError):
    """The model did not answer within its deadline (`llm.timeout`, `llm.first_token_timeout`,
    `llm.chunk_timeout`); nothing of the reply was kept."""


class ContextOverflowError(LLMError):
    """The endpoint refused the prompt as longer than the model's context window (OpenAI's
    `context_length_exceeded`, or a message saying so). The same prompt fails the same way again, so it is
    never retried as it is: a turn summarizes its chat and asks once more. `limit`: the window in tokens
    when the endpoint named it, else None."""

    def __init__(self, message: str, *, limit: int | None = None) -> None:
        super().__init__(message)
        self.limit = limit


class MalformedReplyError(LLMError):
    """The model answered, but not with what was asked: no JSON (or not the shape asked for) where JSON
    was asked for, no tool call where one was required, an empty reply. Asking again with the same input
    may well fail the same way, so a fact batch counts these toward `memory.facts.max_attempts`; a failure
    to get an answer at all (unreachable endpoint, HTTP error, timeout) is a plain `LLMError` and is
    retried for as long as it lasts."""


class StoreError(BrainError):
    """Redis could not be reached, a write was not confirmed, or stored data is unreadable."""


class InputError(BrainError, ValueError):
    """An argument is unusable (empty or hostile id, oversized message, wrong type); nothing was written."""


class ConflictError(StoreError):
    """Another writer changed the conversation first (e.g. committed a summary); reload and retry."""


class NotFoundError(InputError):
    """The id names nothing in the caller's own memory (another tenant's ids are not found either)."""


class ErasedError(StoreError):
    """The memory this work was for was erased after the work began: nothing of it was written (a write
    carrying an older erasure ticket is dropped atomically by the store)."""


class ArchivedError(StoreError):
    """The user's memory is in the cold archive (a load asked to refuse it wrote nothing): bring it back
    (`Tiers.present`) and load again."""


class UnreachableError(StoreError):
    """The store did not answer at all (down, wrong address, refused): nothing can be served until it does."""


class StaleIndexError(StoreError):
    """A write to a search index namespace whose postings another analysis made: nothing was written;
    rebuild the namespace (`DocumentIndex.rebuild`) and write again."""


class TooLargeError(InputError):
    """The input cannot fit where it must go (a message beyond the model's context window); nothing was
    stored or sent."""
