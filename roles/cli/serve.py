"""`brain serve` and `brain mcp`: memory as a service (its keys: `roles.cli.keys`)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import sys
from collections.abc import Callable, Iterator

from brain import telemetry
from brain.backends.redis import RedisConnection
from brain.settings import Settings
from roles.assistant import Assistant
from roles.service import MemoryService, Scope

__all__ = [
    "announce",
    "check_store",
    "listening_socket",
    "mcp_command",
    "serve_command",
    "serve_on",
]


def listening_socket(host: str, port: int, *, shared_port: bool = False) -> tuple[socket.socket, str]:
    """A socket listening on `host`:`port` (0: any free port) and its URL. `shared_port`: SO_REUSEPORT, so
    that several sockets listen on one port and the kernel spreads connections across them."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on the connections a TCP socket accepts, and only then;
    # with Nagle on, a small keep-alive answer waits ~40 ms for the client's delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if shared_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    sock.listen(2048)
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    return sock, f"http://{shown}:{sock.getsockname()[1]}"


def announce(url: str, workers: int) -> None:
    """The line `brain serve` starts with (its URL first: scripts read it)."""
    processes = f", {workers} worker processes" if workers > 1 else ""
    print(
        f"brain serve: {url} (API {url}/v1, docs {url}/docs, MCP {url}/mcp, inspector {url}/ui{processes})",
        flush=True,
    )


async def check_store(settings: Settings) -> None:
    """A store that does not answer: one line and exit 2 (`StoreError`), not a traceback per process."""
    if settings.redis.url is not None:
        async with await RedisConnection.open(settings):
            pass


async def serve_command(settings: Settings, host: str | None, port: int | None) -> int:
    """`brain serve` in this process: one worker."""
    from roles.http.server import settle_heap

    telemetry.configure(settings.telemetry)
    await check_store(settings)
    sock, url = listening_socket(host or settings.serve.host, settings.serve.port if port is None else port)
    announce(url, 1)
    try:
        started = await serve_on(settings, sock, settle_heap)
    finally:
        sock.close()
    print("brain serve: stopped", file=sys.stderr)
    return 0 if started else 1


async def serve_on(
    settings: Settings, sock: socket.socket, started: Callable[[], None] | None = None
) -> bool:
    """Serve the app on `sock` until SIGINT or SIGTERM (graceful: requests in flight finish); whether the
    server started. `started` is called once it serves (the app's startup done)."""
    import uvicorn

    from roles.http import create_app
    from roles.http.server import import_sdk, server_config

    import_sdk()
    app = create_app(settings)

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if self.started and started is not None:
                started()

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            """Ctrl-C or SIGTERM stops serving gracefully, and the command ends normally (exit 0)."""
            loop = asyncio.get_running_loop()
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(signum, lambda: setattr(self, "should_exit", True))
            try:
                yield
            finally:
                for signum in (signal.SIGINT, signal.SIGTERM):
                    loop.remove_signal_handler(signum)

    server = Server(server_config(app, settings.serve))
    await server.serve(sockets=[sock])
    return bool(server.started)


async def mcp_command(settings: Settings, user: str | None, agent: str | None) -> int:
    """An MCP server over stdio for one tenant: the configured user (and agent)."""
    from roles.mcp_server import build_mcp

    telemetry.configure(settings.telemetry)
    scope = Scope(user=user or settings.serve.mcp_user, agent=agent or settings.serve.mcp_agent, actor="mcp")
    # an editor starts this with every window: the embedded model, if it answers, starts at its first call
    async with Assistant.from_settings(settings, defer_model=True) as assistant:
        server = build_mcp(MemoryService(assistant), lambda: scope, default_chat=settings.serve.mcp_chat)
        await server.run_stdio_async()
    return 0
