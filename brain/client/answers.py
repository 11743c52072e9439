"""What both clients do with an HTTP answer: the call's value, or the `ApiError` for its status (raised
from httpx2's own error); and the bearer key, sent on every request without sitting in any header map."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, NoReturn, TypeVar

import httpx2
from pydantic import SecretStr, ValidationError

from brain.client.call import Call, decode
from brain.client.errors import ApiConnectionError, ApiError, api_error

__all__ = ["Bearer", "answer", "failed", "unreachable"]

T = TypeVar("T")


class Bearer(httpx2.Auth):
    """`Authorization: Bearer <key>` on each request; the key stays a `SecretStr` until then."""

    def __init__(self, key: SecretStr) -> None:
        self._key = key

    def auth_flow(self, request: httpx2.Request) -> Generator[httpx2.Request, httpx2.Response, None]:
        request.headers["Authorization"] = f"Bearer {self._key.get_secret_value()}"
        yield request


def answer(call: Call[T], response: httpx2.Response) -> T:
    """The value `call` asked for, from its read `response`; its `ApiError` when refused or failed."""
    if not (200 <= response.status_code < 300 or response.status_code in call.also_ok):
        failed(response)
    try:
        return decode(call, response.content)
    except ValidationError as exc:
        raise ApiError(
            f"{call.method} {call.route}: an answer this client cannot read ({exc.error_count()} errors)",
            status=response.status_code,
        ) from exc


def failed(response: httpx2.Response) -> NoReturn:
    """Raise the `ApiError` for a read answer that is not a success."""
    error = api_error(response.status_code, response.content, response.headers)
    try:
        response.raise_for_status()
    except httpx2.HTTPStatusError as exc:
        raise error from exc
    raise error  # a status httpx2 does not call an error (1xx, 3xx): not an answer either


def unreachable(call: Call[Any], exc: httpx2.HTTPError) -> ApiConnectionError:
    """The error for `call` getting no answer (raise it from `exc`)."""
    return ApiConnectionError(f"{call.method} {call.path}: no answer: {type(exc).__name__}: {exc}")
