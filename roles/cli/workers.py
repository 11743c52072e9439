"""`brain serve --workers N`: N processes serving one port.

The parent binds the port, starts N workers (each a whole `brain serve`: its own event loop, Redis
connections, LLM clients and fact worker) on that one socket, and supervises them: a worker that fails is
replaced; Ctrl-C or SIGTERM stops them all gracefully (requests in flight finish). Workers share nothing but
Redis, like servers on one Redis do: API keys and their revocation, rate limits, memory and locks hold
across them.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import signal
import socket
import sys
import time
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from types import FrameType

from brain import telemetry
from brain.llm.local import uses_local_model
from brain.settings import Settings

__all__ = ["MAX_AUTO_WORKERS", "serve_workers", "worker_count"]

MAX_AUTO_WORKERS = 8
_GRACE = 20.0  # seconds workers get to finish their requests once told to stop


def worker_count(settings: Settings, requested: int | None, cores: int | None = None) -> int:
    """How many processes serve: `requested` (`--workers`), else `serve.workers`; 0 means one per core, at
    most 8, except with the embedded model (one: each worker would load its own copy). Pure."""
    count = requested if requested is not None else settings.serve.workers
    if count > 0:
        return count
    if uses_local_model(settings):
        return 1
    return max(1, min(cores if cores is not None else _usable_cores(), MAX_AUTO_WORKERS))


def _usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, e.g. a container's cpuset), else all."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def serve_workers(settings: Settings, host: str | None, port: int | None, count: int) -> int:
    """Serve with `count` worker processes until Ctrl-C or SIGTERM; 0 when they stopped as asked, 1 when
    workers kept failing."""
    from roles.cli.serve import announce, check_store

    asyncio.run(check_store(settings))
    sockets = _sockets(host or settings.serve.host, settings.serve.port if port is None else port, count)
    url = sockets[0][1]
    context = multiprocessing.get_context("spawn")
    stopping = False

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    def start(i: int) -> tuple[BaseProcess, Connection]:
        sock = sockets[i % len(sockets)][0]
        reader, writer = context.Pipe(duplex=False)
        worker = context.Process(
            target=_worker, args=(settings, sock, writer), name=f"brain-serve-worker-{i}"
        )
        worker.start()
        writer.close()
        return worker, reader

    previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    workers: list[BaseProcess] = []
    failures: list[float] = []
    failed = False
    try:
        started = [start(i) for i in range(count)]
        workers = [worker for worker, _ in started]
        if not _all_ready(started):
            print("brain serve: a worker failed to start; stopping", file=sys.stderr)
            return 1
        announce(url, count)  # serving from here on: scripts may read the URL and ask at once
        while not stopping:
            wait([w.sentinel for w in workers], timeout=0.5)
            for i, worker in enumerate(workers):
                if worker.exitcode is None or stopping:
                    continue
                if worker.exitcode == 0:  # a worker stops cleanly only when told to (a signal to the group)
                    stopping = True
                    break
                now = time.monotonic()
                failures = [t for t in failures if t > now - 60] + [now]
                if len(failures) > 3 * count:
                    print("brain serve: workers keep failing; stopping", file=sys.stderr)
                    stopping = failed = True
                    break
                print(
                    f"brain serve: worker {worker.pid} exited ({worker.exitcode}); starting another",
                    file=sys.stderr,
                )
                workers[i], reader = start(i)
                reader.close()
    finally:
        _stop_all(workers)
        for sock, _ in sockets:
            sock.close()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        print("brain serve: stopped", file=sys.stderr)
    return 1 if failed else 0


def _all_ready(started: list[tuple[BaseProcess, Connection]], timeout: float = 300.0) -> bool:
    """Whether every worker said it serves (within `timeout`), before any of them exited."""
    waiting = {reader: worker for worker, reader in started}
    deadline = time.monotonic() + timeout
    while waiting and time.monotonic() < deadline:
        for ready in wait([*waiting, *(w.sentinel for w in waiting.values())], timeout=1.0):
            if isinstance(ready, Connection) and ready in waiting:
                try:
                    ready.recv_bytes()
                except EOFError:  # the worker exited without serving
                    return False
                waiting.pop(ready)
                ready.close()
            elif any(w.sentinel == ready for w in waiting.values()):
                return False
    return not waiting


def _sockets(host: str, port: int, count: int) -> list[tuple[socket.socket, str]]:
    """One listening socket per worker on one port (SO_REUSEPORT: the kernel spreads connections evenly,
    where workers sharing one socket take whatever each wakes up for first); one shared socket where the
    platform has no SO_REUSEPORT. A replacement worker takes over its predecessor's socket."""
    from roles.cli.serve import listening_socket

    if not hasattr(socket, "SO_REUSEPORT"):
        return [listening_socket(host, port)]
    first = listening_socket(host, port, shared_port=True)
    bound = first[0].getsockname()[1]
    return [first, *(listening_socket(host, bound, shared_port=True) for _ in range(count - 1))]


def _stop_all(workers: list[BaseProcess]) -> None:
    for worker in workers:
        if worker.pid is not None and worker.exitcode is None:
            os.kill(worker.pid, signal.SIGTERM)
    deadline = time.monotonic() + _GRACE
    for worker in workers:
        worker.join(max(deadline - time.monotonic(), 0.1))
        if worker.exitcode is None:
            worker.kill()
            worker.join(5)


def _worker(settings: Settings, sock: socket.socket, ready: Connection) -> None:
    """One worker: `brain serve` on the parent's socket (a process of its own, spawned); says on `ready`
    when it serves."""
    from roles.cli.serve import serve_on
    from roles.http.server import run_served, settle_heap

    def serving() -> None:
        settle_heap()
        with contextlib.suppress(OSError):
            ready.send_bytes(b"1")
            ready.close()

    telemetry.configure(settings.telemetry)
    started = run_served(serve_on(settings, sock, serving))
    sys.exit(0 if started else 1)
