"""What stands in front of every request: the body size limit, the API key and its rate limit.

The tenant of a request is the one its key reaches, nothing else: a request that tries to name a user or
an agent in its query string is refused (and bodies forbid unknown fields), so no argument can redirect it.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
from typing import Any
from urllib.parse import parse_qsl

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from brain import telemetry
from brain.settings import ServeSettings
from brain.storage.keys import ApiKey, ApiKeyStore
from roles import service

__all__ = ["CURRENT_SCOPE", "BodyLimit", "Refusal", "authenticate", "mcp_guard"]

# The scope of the request being served: set by `mcp_guard` for the MCP tools of that request.
CURRENT_SCOPE: contextvars.ContextVar[service.Scope | None] = contextvars.ContextVar(
    "brain_scope", default=None
)

_BEARER = {"WWW-Authenticate": "Bearer"}
_TENANT_PARAMETERS = ("user", "user_id", "agent", "agent_id", "tenant")


class Refusal(Exception):
    """A request refused before it reaches memory: an HTTP status, a message, headers."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}

    def response(self) -> JSONResponse:
        """The answer to the refused request (an ASGI app too, for the guards below the routes)."""
        return JSONResponse({"detail": self.message}, status_code=self.status, headers=self.headers)


async def authenticate(
    keys: ApiKeyStore, settings: ServeSettings, authorization: str | None, query: Any, client: str = ""
) -> tuple[service.Scope, ApiKey]:
    """The scope a request's bearer key reaches, after its rate limit. `Refusal` otherwise; past
    `serve.auth_failure_limit` failed authentications from one `client` address in a window, 429."""
    for name in _TENANT_PARAMETERS:
        if name in query:
            raise Refusal(400, f"the query names {name!r}: the tenant comes from the API key alone")
    scheme, _, secret = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not secret.strip():
        await _failed(keys, settings, client)
        raise Refusal(
            401, "an API key is needed: Authorization: Bearer <key>", {"WWW-Authenticate": "Bearer"}
        )
    key, verdict = await keys.verify_counted(
        secret.strip(), settings.rate_limit, settings.rate_window_seconds
    )
    if key is None:
        await _failed(keys, settings, client)
        raise Refusal(401, "unknown or revoked API key", _BEARER)
    if verdict is not None and not verdict.allowed:
        telemetry.count_error("rate_limit")
        raise Refusal(
            429,
            f"rate limit: {settings.rate_limit} requests per {settings.rate_window_seconds} s per key",
            {"Retry-After": str(verdict.retry_after)},
        )
    return service.Scope(user=key.user, agent=key.agent, actor=f"key:{key.id}"), key


async def _failed(keys: ApiKeyStore, settings: ServeSettings, client: str) -> None:
    """Count a failed authentication of `client` (an address); 429 once it passes the limit."""
    if not settings.auth_failure_limit or not client:
        return
    counter = "a" + hashlib.sha256(client.encode("utf-8", "replace")).hexdigest()[:15]
    verdict = await keys.hit(counter, settings.auth_failure_limit, settings.rate_window_seconds)
    if not verdict.allowed:
        telemetry.count_error("auth_failures")
        raise Refusal(
            429,
            f"too many failed authentications from this address: at most {settings.auth_failure_limit} "
            f"per {settings.rate_window_seconds} s",
            {"Retry-After": str(verdict.retry_after)},
        )


class _TooLarge(Exception):
    pass


class BodyLimit:
    """Refuses (413) a request whose body is over `limit` bytes, declared or as it arrives."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = None
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                declared = value  # the last one, as a dict of the headers has it
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self.refusal().response()(scope, receive, send)
            return
        seen = 0
        started = refused = False

        async def counted() -> Message:
            nonlocal seen, refused
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    if not started and not refused:  # answer now: the app may catch what is raised
                        refused = True
                        await self.refusal().response()(scope, receive, send)
                    raise _TooLarge
            return message

        async def sending(message: Message) -> None:
            nonlocal started
            if refused:
                return  # the app answering its failed read: the refusal was sent already
            started = started or message["type"] == "http.response.start"
            await send(message)

        with contextlib.suppress(_TooLarge):
            await self.app(scope, counted, sending)

    def refusal(self) -> Refusal:
        return Refusal(413, f"the request body is over serve.max_body_bytes = {self.limit:,} bytes")


def mcp_guard(app: ASGIApp, keys: ApiKeyStore, settings: ServeSettings) -> ASGIApp:
    """The MCP endpoint behind the same keys and limits; its tools see the key's scope (`CURRENT_SCOPE`)."""

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", ())}
        query = _query_names(scope.get("query_string", b""))
        try:
            client = (scope.get("client") or ("",))[0] or ""
            tenant, _ = await authenticate(keys, settings, headers.get("authorization"), query, client)
        except Refusal as refusal:
            await refusal.response()(scope, receive, send)
            return
        token = CURRENT_SCOPE.set(tenant)
        try:
            await app(scope, receive, send)
        finally:
            CURRENT_SCOPE.reset(token)

    return guarded


def _query_names(raw: bytes) -> set[str]:
    return {name for name, _ in parse_qsl(raw.decode("latin-1"), keep_blank_values=True)}
