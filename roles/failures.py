"""What a failed request is told, over HTTP (a status and a body) or MCP (a tool error's text). A 4xx
says what the caller can fix (the error's own message, which names fields, never internals). A 5xx says a
generic reason and a request id; the details (hosts, commands, a model endpoint's words) go to the log
under that id, not to whoever sent the request. Never the caller's input, never a lone surrogate."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Sequence
from typing import Any

from brain.errors import (
    BrainError,
    ConflictError,
    ErasedError,
    InputError,
    LLMError,
    LLMTimeoutError,
    NotFoundError,
    StoreError,
    TooLargeError,
)
from brain.jsontext import without_surrogates

__all__ = ["answer", "invalid_fields", "status_of"]

_log = logging.getLogger("brain.http")

_STATUS: tuple[tuple[type[BrainError], int], ...] = (
    (NotFoundError, 404),
    (TooLargeError, 413),
    (InputError, 400),
    (ErasedError, 409),
    (ConflictError, 409),
    (StoreError, 503),
    (LLMTimeoutError, 504),
    (LLMError, 502),
)

_REASONS = {
    502: "the language model failed to answer",
    503: "memory storage is unavailable; try again shortly",
    504: "the language model did not answer in time",
}


def status_of(exc: BaseException) -> int:
    """The HTTP status of an error (500: not one of ours). Pure."""
    return next((status for kind, status in _STATUS if isinstance(exc, kind)), 500)


def answer(exc: BaseException) -> tuple[int, dict[str, str]]:
    """The status and body for `exc`; a 5xx is logged with its details under the request id it names."""
    status = status_of(exc)
    if status < 500:
        return status, {"detail": without_surrogates(str(exc))}
    request_id = secrets.token_hex(8)
    _log.warning("request %s failed (%d): %s: %s", request_id, status, type(exc).__name__, exc)
    reason = _REASONS.get(status, "internal error")
    return status, {"detail": f"{reason} (request {request_id})", "request_id": request_id}


def invalid_fields(errors: Sequence[Any]) -> list[dict[str, Any]]:
    """What a 422 says of each invalid field: where (`loc`), what is wrong (`msg`, `type`). Never the input
    itself (an error body must not echo what a client sent) and never a lone surrogate, which no UTF-8
    response can carry. Pure."""
    return [
        {
            "loc": [p if isinstance(p, int) else without_surrogates(str(p)) for p in error.get("loc", ())],
            "msg": without_surrogates(str(error.get("msg", ""))),
            "type": str(error.get("type", "")),
        }
        for error in errors
    ]
