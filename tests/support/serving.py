"""Serving the real app in-process: uvicorn on a loopback port, for real HTTP and MCP clients."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import uvicorn

from brain.runtime import Runtime
from brain.settings import ServeSettings
from roles.assistant import Assistant
from roles.fact_worker import running
from roles.http.server import server_config


@contextlib.asynccontextmanager
async def serving(app: Any, serve: ServeSettings | None = None, *, root_path: str = "") -> AsyncIterator[str]:
    """Serve `app` (its lifespan too) as `brain serve` does (`serve`'s deadlines) on a free loopback port,
    behind a proxy's `root_path` when given; the base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    config = server_config(app, serve or ServeSettings())
    config.root_path = root_path
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            task.result()
            raise RuntimeError("the server stopped before it started")
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        await task
        sock.close()


def assistant_of(runtime: Runtime) -> Any:
    """An `open_assistant` for `create_app`: the runtime's assistant with its in-process fact worker."""

    @contextlib.asynccontextmanager
    async def opened() -> AsyncIterator[Assistant]:
        async with running(runtime):
            yield Assistant.for_runtime(runtime)

    return opened


async def wait_ready(url: str, tries: int = 400) -> None:
    """Wait until the server at `url` says it is ready (`/readyz` 200), 50 ms between tries."""
    async with httpx2.AsyncClient(timeout=5) as http:
        for _ in range(tries):
            with contextlib.suppress(httpx2.TransportError):
                if (await http.get(f"{url}/readyz")).status_code == 200:
                    return
            await asyncio.sleep(0.05)
    raise AssertionError(f"{url} never got ready")


def to_a_fresh_window(window_seconds: int = 60) -> float:
    """The seconds to wait before counting requests against a rate limit: rate limits count in fixed
    windows of wall-clock time, so when the current one ends within a few seconds, until the next begins
    (a test crossing the end saw its counts start again); else none."""
    left = window_seconds - time.time() % window_seconds
    return left + 0.05 if left < min(10.0, window_seconds / 2) else 0.0
