"""`brain serve`: the HTTP API (FastAPI), its MCP endpoint (`/mcp`) and the memory inspector (`/ui`).

Every `/v1` route is scoped by the request's API key (`guard.authenticate`); routes live in `routes.py`.
Several servers may run on one Redis: they share nothing but Redis (keys, rate counts, memory, locks by
chat are per process, and a chat's turns are idempotent appends), and MCP runs stateless, so any server
answers any request.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from importlib.resources import files
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.telemetry import TelemetryConfig
from starlette.routing import Route

from brain import __version__
from brain.errors import BrainError, InputError
from brain.settings import Settings
from brain.wire import Health, Readiness
from roles.assistant import Assistant
from roles.failures import answer, invalid_fields
from roles.http.chat_stream import LeanChat
from roles.http.docs import install_docs
from roles.http.front import BrainAPI
from roles.http.guard import CURRENT_SCOPE, BodyLimit, Refusal, mcp_guard
from roles.http.routes import router
from roles.http.stats import stats_router
from roles.mcp_server import build_mcp
from roles.service import MemoryService, Scope

__all__ = ["create_app"]

_DESCRIPTION = """Every `/v1` route takes its tenant from the bearer API key (`brain keys create`).
A Python client with these routes typed is `brain.client` (`AsyncBrainClient`, `BrainClient`).

Times in answers are ISO 8601 strings in UTC (`2026-05-01T09:30:00Z`; the graph's relations: UTC days,
`2026-05-01`). Changed in issue 25: facts (`valid_at`, `invalid_at`, `created_at`, `expired_at`), audit
events (`at`) and dead letters (`at`) were Unix seconds (numbers) before; a client that wants those parses
the string (Python: `datetime.fromisoformat(value).timestamp()`; JavaScript: `Date.parse(value) / 1000`)."""


def _mcp_scope() -> Scope:
    scope = CURRENT_SCOPE.get()
    if scope is None:  # only reachable if the MCP app were served without its guard
        raise InputError("no API key scope for this request")
    return scope


def create_app(
    settings: Settings,
    open_assistant: Callable[[], AbstractAsyncContextManager[Assistant]] | None = None,
) -> BrainAPI:
    """The ASGI app. `open_assistant` gives the assistant to serve (default: one owning its own Redis
    connection and LLM clients, built from `settings`, with its in-process fact worker)."""
    opener = open_assistant or (lambda: Assistant.from_settings(settings))
    holder: dict[str, Any] = {}

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with opener() as assistant:
            service = MemoryService(assistant)
            keys = service.tiers.backend.api_keys
            mcp = build_mcp(service, _mcp_scope, default_chat=settings.serve.mcp_chat)
            mcp.streamable_http_app(
                streamable_http_path="/mcp", stateless_http=True, json_response=True, host=settings.serve.host
            )
            holder["mcp"] = mcp_guard(_asgi(mcp), keys, settings.serve)
            app.state.service, app.state.keys, app.state.serve = service, keys, settings.serve
            async with mcp.session_manager.run():
                yield

    # telemetry off: FastAPI's own spans and metrics too (no span is ever made; it also skips a look at the
    # global providers on every request)
    off: TelemetryConfig | None = None
    if not settings.telemetry.enabled:
        off = {"tracing": False, "metrics": False, "logs": False}
    app = BrainAPI(
        telemetry=off,
        title="brain-assistant",
        version=__version__,
        summary="Memory for LLM assistants, per tenant: chat, facts over time, history, export, erasure.",
        description=_DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    install_docs(app)

    app.router.routes.insert(0, LeanChat(app.router))  # a streamed POST /v1/chat; the rest to `chat`
    app.router.routes.append(Route("/mcp", endpoint=_Late(holder), methods=["GET", "POST", "DELETE"]))
    app.include_router(router)
    app.include_router(stats_router)

    @app.exception_handler(Refusal)
    async def refused(_: Request, exc: Refusal) -> JSONResponse:
        return exc.response()

    @app.exception_handler(BrainError)
    @app.exception_handler(Exception)
    async def failed(_: Request, exc: Exception) -> JSONResponse:
        status, body = answer(exc)
        return JSONResponse(body, status_code=status)

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": invalid_fields(exc.errors())}, status_code=422)

    @app.get("/healthz", tags=["health"])
    async def health() -> Health:
        """The process is up."""
        return Health(status="ok", version=__version__)

    @app.get("/readyz", tags=["health"], response_model=Readiness, responses={503: {"model": Readiness}})
    async def ready(request: Request) -> JSONResponse:
        """The store answers: this server can serve."""
        try:
            await request.app.state.service.tiers.backend.ping()
        except BrainError as exc:
            return JSONResponse({"status": "unavailable", "detail": type(exc).__name__}, status_code=503)
        return JSONResponse({"status": "ready"})

    @app.get("/ui", response_class=HTMLResponse, include_in_schema=False)
    async def inspector() -> HTMLResponse:
        page = files("roles.http").joinpath("inspector.html").read_text(encoding="utf-8")
        return HTMLResponse(page, headers={"Cache-Control": "no-store"})

    app.add_middleware(BodyLimit, limit=settings.serve.max_body_bytes)
    if off is not None:  # with telemetry, the streamed chat's spans come from the whole stack
        app.serve_lean()
    return app


class _Late:
    """The MCP endpoint, built when the app starts (it needs the running assistant)."""

    def __init__(self, holder: dict[str, Any]) -> None:
        self.holder = holder

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.holder["mcp"](scope, receive, send)


def _asgi(mcp: Any) -> Any:
    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp

    return StreamableHTTPASGIApp(mcp.session_manager)
