"""`POST /v1/chat` streamed, served lean: the hot route of `brain serve` without FastAPI's per-request
dependency solving and without a task group per stream.

`LeanChat` is a route ahead of the FastAPI ones. It takes a request whose body is JSON (`Content-Type:
application/json`) and a valid `ChatRequest` that streams (`stream: true`, not `oversize: "archive"`),
authenticates it as `guard.authenticate` does and answers it with the same bytes and headers as the
FastAPI route (`routes.chat`). Every other request of the path (a body that fails to parse or validate,
another content type, a reply that does not stream) goes to the FastAPI route with its body replayed, so
its answers, 422s included, stay FastAPI's own. Errors before the first byte reach the app's exception
handlers, as the route's do. The tenant's memory is brought back from the cold archive by the turn itself
(`TurnEngine`), not by a separate round trip first. A client that disconnects mid-stream cancels the turn,
as Starlette's `StreamingResponse` does.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator
from json.encoder import encode_basestring
from typing import Any
from urllib.parse import parse_qsl

from starlette.routing import BaseRoute, Match, NoMatchFound
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from brain.errors import BrainError
from brain.wire import ChatRequest
from roles.failures import answer
from roles.http.guard import authenticate
from roles.service import MemoryService
from roles.service import Scope as Tenant

__all__ = ["HEADERS", "LeanChat", "delta_frame", "sse", "sse_events", "turn_events"]

PATH = "/v1/chat"
# What `StreamingResponse(media_type="text/event-stream", headers={"Cache-Control": "no-store"})` sends.
HEADERS = [(b"cache-control", b"no-store"), (b"content-type", b"text/event-stream; charset=utf-8")]
_FALLBACK = "brain.chat.fallback"  # set in a scope handed on to the FastAPI route
_LAST = (b"event: done\n", b"event: error\n")  # what `sse_events` ends with


def sse(event: str, data: dict[str, Any]) -> bytes:
    """One server-sent event of JSON `data`. Pure."""
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def delta_frame(text: str) -> bytes:
    """`sse("delta", {"text": text})`, without the generic encoder. Pure."""
    return f'event: delta\ndata: {{"text": {encode_basestring(text)}}}\n\n'.encode()


async def sse_events(
    first: str | None, pieces: AsyncGenerator[str, None], chat_id: str
) -> AsyncGenerator[bytes, None]:
    """A turn's events: `delta`s, then `done` (the whole answer), or `error` when it fails mid-answer;
    `pieces` is closed in the end."""
    said = [first] if first is not None else []
    try:
        if first is not None:
            yield delta_frame(first)
        async for piece in pieces:
            said.append(piece)
            yield delta_frame(piece)
    except BrainError as exc:
        yield sse("error", answer(exc)[1])
        return
    finally:
        await pieces.aclose()
    yield sse("done", {"chat_id": chat_id, "text": "".join(said)})


async def turn_events(
    service: MemoryService, tenant: Tenant, request: ChatRequest
) -> AsyncGenerator[bytes, None]:
    """A streamed turn's events (`sse_events`), once its first piece is there: a failure before it is
    raised here (an HTTP error, the question left pending), after it an `error` event."""
    pieces = service.converse(tenant, request.chat_id, request.text, request.message_id)
    try:
        first = await anext(pieces, None)
    except BaseException:
        await pieces.aclose()
        raise
    return sse_events(first, pieces, request.chat_id)


class LeanChat(BaseRoute):
    """The route of a streamed `POST /v1/chat`; hands any other such request to `router` (the app's)."""

    path = PATH  # documented by the FastAPI route it stands in front of

    def __init__(self, router: ASGIApp) -> None:
        self.router = router

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if (
            scope["type"] == "http"
            and scope["method"] == "POST"
            and _route_path(scope) == PATH
            and _FALLBACK not in scope
        ):
            return Match.FULL, {}
        return Match.NONE, {}

    def url_path_for(self, name: str, /, **path_params: Any) -> Any:
        raise NoMatchFound(name, path_params)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        received: list[Message] = []
        body = await _body(receive, received)
        request = _streamed_chat(scope, body) if body is not None else None
        if request is None:
            await self.router({**scope, _FALLBACK: True}, _replay(received, receive), send)
            return
        state = scope["app"].state
        tenant, _ = await authenticate(
            state.keys,
            state.serve,
            _header(scope, b"authorization"),
            {name for name, _ in parse_qsl(scope.get("query_string", b"").decode("latin-1"), True)},
            (scope.get("client") or ("",))[0] or "",
        )
        await _stream(await turn_events(state.service, tenant, request), receive, send)


async def _body(receive: Receive, received: list[Message]) -> bytes | None:
    """The request's body, every message kept in `received`; None when the client left first."""
    chunks = []
    while True:
        message = await receive()
        received.append(message)
        if message["type"] != "http.request":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


def _streamed_chat(scope: Scope, body: bytes) -> ChatRequest | None:
    """The request when this route serves it: a JSON body, a valid `ChatRequest`, a streamed answer."""
    kind = (_header(scope, b"content-type") or "").lower()
    if not body or not (kind == "application/json" or kind.startswith("application/json;")):
        return None
    try:  # what fails here, the FastAPI route answers (422, 400) as it always has
        request = ChatRequest.model_validate(json.loads(body))
    except Exception:
        return None
    return request if request.stream and request.oversize != "archive" else None


async def _stream(frames: AsyncGenerator[bytes, None], receive: Receive, send: Send) -> None:
    """Send `frames` as the response; a disconnect meanwhile cancels it (the turn with it)."""
    task = asyncio.current_task()
    assert task is not None
    done = gone = False

    async def listen() -> None:
        nonlocal gone
        while (await receive())["type"] != "http.disconnect":
            pass
        if not done:
            gone = True
            task.cancel()

    listener = asyncio.ensure_future(listen())
    try:
        await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
        last = b""
        async for frame in frames:
            if frame.startswith(_LAST):  # `done` or `error` ends the events: sent with the body's end
                last = frame
                break
            await send({"type": "http.response.body", "body": frame, "more_body": True})
        done = True
        await send({"type": "http.response.body", "body": last, "more_body": False})
    except asyncio.CancelledError:
        if not gone or task.uncancel() > 0:
            raise
    finally:
        done = True
        listener.cancel()
        await frames.aclose()


def _replay(received: list[Message], receive: Receive) -> Receive:
    """`receive` as if nothing had been read: the messages in `received` first."""
    pending = list(received)

    async def replayed() -> Message:
        return pending.pop(0) if pending else await receive()

    return replayed


def _header(scope: Scope, name: bytes) -> str | None:
    """The first header `name` (lower case), as Starlette's `Request.headers` reads it."""
    for key, value in scope.get("headers", ()):
        if key == name:
            return str(value.decode("latin-1"))
    return None


def _route_path(scope: Scope) -> str:
    path: str = scope["path"]
    root = scope.get("root_path", "")
    if root and path.startswith(root) and path != root and path[len(root)] == "/":
        return path[len(root) :]
    return path
