"""`BrainAPI`: the FastAPI app of `brain serve`, whose streamed `POST /v1/chat` (`LeanChat`) skips the
layers of the middleware stack it does not use.

A request passes eleven ASGI layers before it reaches a route (FastAPI's and Starlette's entry points,
telemetry of exceptions, FastAPI's body limit, an exit stack for uploaded files, the router's walk of its
routes), and every one is a coroutine of its own; on the hot route they cost ~4% of a served turn's
instructions (`benchmarks/serve_instructions.py`). `BrainAPI` hands a request that `LeanChat` serves to the
layers that act on it, built from the app's own parts as FastAPI builds its stack: Starlette's
`ServerErrorMiddleware` with the app's handler of `Exception`, the app's own middleware (the body limit),
Starlette's `ExceptionMiddleware` with the app's other handlers, then `LeanChat`. What `LeanChat` hands on
(a body it does not serve) goes through the whole stack, as every other request does. With telemetry on,
every request takes the whole stack (its spans and exception events come from the layers skipped here).
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from starlette.middleware.errors import ServerErrorMiddleware
from starlette.middleware.exceptions import ExceptionMiddleware
from starlette.routing import Match
from starlette.types import ASGIApp, Receive, Scope, Send

from roles.http.chat_stream import LeanChat

__all__ = ["BrainAPI"]


class BrainAPI(FastAPI):
    """FastAPI, with the streamed chat served through the few layers it needs (see the module). Call
    `serve_lean()` once the app's handlers and middleware are added."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.lean: LeanChat | None = None  # None: every request takes the whole stack
        self._lean_stack: ASGIApp | None = None

    def serve_lean(self) -> None:
        """Serve a streamed `POST /v1/chat` ahead of the stack; what it does not serve goes through it."""
        self.lean = LeanChat(self._stacked)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        lean = self.lean
        if lean is None or lean.matches(scope)[0] is not Match.FULL:
            await super().__call__(scope, receive, send)
            return
        stack = self._lean_stack
        if stack is None:
            stack = self._lean_stack = self._build_lean_stack(lean)
        scope["app"] = self
        await stack(scope, receive, send)

    async def _stacked(self, scope: Scope, receive: Receive, send: Send) -> None:
        await super().__call__(scope, receive, send)

    def _build_lean_stack(self, lean: LeanChat) -> ASGIApp:
        """The layers of FastAPI's stack that act on the streamed chat, with the same handlers."""
        error_handler = None
        handlers: dict[Any, Any] = {}
        for key, value in self.exception_handlers.items():  # split as `build_middleware_stack` splits them
            if key in (500, Exception):
                error_handler = value
            else:
                handlers[key] = value
        app: ASGIApp = ExceptionMiddleware(lean.handle, handlers=handlers, debug=self.debug)
        for cls, args, kwargs in reversed(self.user_middleware):
            app = cls(app, *args, **kwargs)
        return ServerErrorMiddleware(app, handler=error_handler, debug=self.debug)
