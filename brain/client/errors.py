"""What a `brain.client` call raises: an `ApiError` per kind of refusal, each a `BrainError` (and, where
one fits, the library's own error for the same thing: `ApiNotFoundError` is a `NotFoundError`, so code
written against the library catches the same error from the service)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from brain.errors import BrainError, InputError, NotFoundError, TooLargeError

__all__ = [
    "ApiAuthError",
    "ApiConflictError",
    "ApiConnectionError",
    "ApiError",
    "ApiInputError",
    "ApiNotFoundError",
    "ApiRateLimitError",
    "ApiServerError",
    "ApiStreamError",
    "ApiTooLargeError",
    "api_error",
]


class ApiError(BrainError):
    """The service refused or failed a request: its HTTP `status` (0: no answer), its `detail` (what it
    said), its `request_id` (a 5xx: the id its log keeps the details under), and the whole `body`."""

    def __init__(
        self,
        message: str,
        *,
        status: int = 0,
        detail: Any = None,
        request_id: str | None = None,
        body: Any = None,
    ) -> None:
        super().__init__(message)
        self.status, self.detail, self.request_id, self.body = status, detail, request_id, body


class ApiConnectionError(ApiError):
    """No answer: the service could not be reached, or did not answer in time, or the connection broke."""


class ApiAuthError(ApiError):
    """401: no key, or an unknown or revoked one; 403: the key may not do this (e.g. an agent key asking
    for user-wide statistics)."""


class ApiInputError(ApiError, InputError):
    """400 or 422: the request is unusable as sent; 422's `detail` lists the fields (`loc`, `msg`)."""


class ApiNotFoundError(ApiError, NotFoundError):
    """404: the id names nothing the key reaches."""


class ApiConflictError(ApiError):
    """409: another writer came first, or the memory was erased meanwhile; read again, then retry."""


class ApiTooLargeError(ApiError, TooLargeError):
    """413: the body is over the server's limit, or the message over the model's window (send it with
    `oversize="archive"` to keep it in archival memory)."""


class ApiRateLimitError(ApiError):
    """429: the key's rate limit (or too many failed authentications): `retry_after` seconds to wait."""

    def __init__(self, message: str, *, retry_after: float | None = None, **fields: Any) -> None:
        super().__init__(message, **fields)
        self.retry_after = retry_after


class ApiServerError(ApiError):
    """5xx: the service failed (502/504: the model; 503: its store); worth trying again later."""


class ApiStreamError(ApiServerError):
    """A streamed answer ended with an `error` event: the model failed mid-answer (nothing was stored)."""


_KINDS: tuple[tuple[range | tuple[int, ...], type[ApiError]], ...] = (
    ((401, 403), ApiAuthError),
    ((400, 422), ApiInputError),
    ((404,), ApiNotFoundError),
    ((409,), ApiConflictError),
    ((413,), ApiTooLargeError),
    (range(500, 600), ApiServerError),
)


def api_error(status: int, content: bytes, headers: Mapping[str, str]) -> ApiError:
    """The error for an answer with `status` (4xx or 5xx), its body and headers. Pure."""
    try:
        body: Any = json.loads(content) if content else None
    except ValueError:
        body = content.decode("utf-8", "replace")
    detail = body.get("detail") if isinstance(body, dict) else body
    request_id = body.get("request_id") if isinstance(body, dict) else None
    said = detail if isinstance(detail, str) else json.dumps(detail, ensure_ascii=False)
    message = f"HTTP {status}: {said}"
    if status == 429:
        return ApiRateLimitError(
            message,
            retry_after=_seconds(headers.get("retry-after")),
            status=status,
            detail=detail,
            request_id=request_id,
            body=body,
        )
    kind = next((k for statuses, k in _KINDS if status in statuses), ApiError)
    return kind(message, status=status, detail=detail, request_id=request_id, body=body)


def _seconds(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None
