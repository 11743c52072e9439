"""What `benchmarks/serve.py` runs: processes, readiness, keyed clients chatting over HTTP, and the CPU a
process tree spent (read from /proc: the server and every worker it started)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import multiprocessing
import multiprocessing.queues
import os
import re
import signal
import statistics
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx2

__all__ = ["MARKER", "cpu_seconds", "load", "process", "ready", "servers"]

MARKER = re.compile(r"<U\d+>")
_TICK = os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def process(
    args: list[str], env: dict[str, str], capture: bool = False, cwd: str | None = None
) -> Iterator[subprocess.Popen[str]]:
    child = subprocess.Popen(
        args,
        env=env,
        cwd=cwd,
        text=True,
        stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield child
    finally:
        child.send_signal(signal.SIGINT)
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()


def cpu_seconds(root: int) -> float:
    """User + system CPU seconds of `root` and all its live descendants."""
    parents: dict[int, int] = {}
    spent: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
        spent[int(entry.name)] = (int(fields[11]) + int(fields[12])) / _TICK
    tree, frontier = {root}, [root]
    while frontier:
        pid = frontier.pop()
        for child, parent in parents.items():
            if parent == pid and child not in tree:
                tree.add(child)
                frontier.append(child)
    return sum(spent.get(pid, 0.0) for pid in tree)


async def ready(url: str, path: str = "/readyz") -> None:
    async with httpx2.AsyncClient(timeout=5) as http:
        for _ in range(600):
            with contextlib.suppress(httpx2.TransportError):
                if (await http.get(url + path)).status_code < 500:
                    return
            await asyncio.sleep(0.05)
    raise SystemExit(f"{url} never got ready")


@contextlib.asynccontextmanager
async def servers(
    commands: list[list[str]], env: dict[str, str], cwd: str | None = None
) -> AsyncIterator[tuple[list[str], list[int]]]:
    """Start each command (a `brain serve` printing its URL first); yields (urls, pids) once all answer."""
    with contextlib.ExitStack() as stack:
        urls, pids = [], []
        for command in commands:
            child = stack.enter_context(process(command, env, capture=True, cwd=cwd))
            assert child.stdout is not None
            urls.append(child.stdout.readline().split()[2])
            pids.append(child.pid)
        for url in urls:
            await ready(url)
        yield urls, pids


async def load(
    urls: list[str],
    pids: list[int],
    secrets: list[str],
    turns: int,
    chat: str,
    shards: int = 1,
    redis_pid: int | None = None,
    model_pids: tuple[int, ...] = (),
) -> dict[str, float]:
    """Every client says `turns` turns at once (alternating between `urls`); then every chat is read back.
    The clients run in `shards` processes of their own (a many-core load needs more than one client
    process), all starting together. Counted: turns/s, p50/p99, errors, answers or stored turns with another
    client's marker, missing turns, the servers' CPU per turn, and the CPU shares (100 = one core) of Redis
    (given its pid), the model's processes (given theirs) and the clients: where a many-core machine's
    cores went."""
    context = multiprocessing.get_context("spawn")
    shards = max(1, min(shards, len(secrets)))
    start, stop = context.Barrier(shards + 1), context.Barrier(shards + 1)
    results: multiprocessing.queues.Queue[_Shard] = context.Queue()
    bounds = [len(secrets) * k // shards for k in range(shards + 1)]
    children = [
        context.Process(
            target=_shard,
            args=(
                _Work(urls, secrets[bounds[k] : bounds[k + 1]], bounds[k], turns, chat),
                start,
                stop,
                results,
            ),
        )
        for k in range(shards)
    ]
    for child in children:
        child.start()
    try:
        await asyncio.to_thread(start.wait, 600)  # every client warmed up
        watched = {
            "servers": pids,
            "redis": [redis_pid] if redis_pid else [],
            "model": list(model_pids),
            "clients": [child.pid for child in children if child.pid],
        }
        before = {name: sum(map(cpu_seconds, group)) for name, group in watched.items()}
        started = time.perf_counter()
        await asyncio.to_thread(stop.wait, 1800)  # every turn said
        elapsed = time.perf_counter() - started
        spent = {name: sum(map(cpu_seconds, group)) - before[name] for name, group in watched.items()}
        parts = [await asyncio.to_thread(results.get, True, 600) for _ in children]
    finally:
        for child in children:
            child.join(timeout=30)
            if child.is_alive():
                child.kill()
    latencies = sorted(latency for part in parts for latency in part.latencies)
    return {
        "turns_per_s": len(latencies) / elapsed,
        "p50_ms": statistics.median(latencies) * 1000 if latencies else 0.0,
        "p99_ms": latencies[int(len(latencies) * 0.99)] * 1000 if latencies else 0.0,
        "errors": sum(part.errors for part in parts),
        "cross_tenant": sum(part.foreign for part in parts),
        "cpu_ms_per_turn": spent["servers"] * 1000 / max(len(latencies), 1),
        "redis_cpu_pct": spent["redis"] * 100 / elapsed,
        "model_cpu_pct": spent["model"] * 100 / elapsed,
        "clients_cpu_pct": spent["clients"] * 100 / elapsed,
    }


@dataclasses.dataclass
class _Shard:
    latencies: list[float]
    errors: int  # failed turns and turns missing when read back
    foreign: int


@dataclasses.dataclass(frozen=True)
class _Work:
    """One client process's part: clients `offset`, `offset + 1`, ... (their markers)."""

    urls: list[str]
    secrets: list[str]
    offset: int
    turns: int
    chat: str


def _shard(
    work: _Work,
    start: threading.Barrier,
    stop: threading.Barrier,
    results: multiprocessing.queues.Queue[_Shard],
) -> None:
    """One client process: its clients' turns between the barriers. A failing shard breaks the barriers,
    so the run stops at once instead of waiting out their timeouts."""
    try:
        results.put(asyncio.run(_clients(work, start, stop)))
    except BaseException:
        start.abort()
        stop.abort()
        raise


async def _clients(work: _Work, start: threading.Barrier, stop: threading.Barrier) -> _Shard:
    urls, secrets, offset, turns, chat = work.urls, work.secrets, work.offset, work.turns, work.chat
    import aiohttp  # here: a command that only starts processes (benchmarks/cold_start.py) runs without it

    shard = _Shard([], 0, 0)
    # aiohttp: ~0.4 ms of client CPU per streamed turn where httpx2 took ~1.5, so that the clients are not
    # what a many-core run measures.
    connector = aiohttp.TCPConnector(limit=len(secrets) * len(urls))  # a connection per client and server
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as http:

        async def one(k: int) -> None:
            u = offset + k
            headers = {"Authorization": f"Bearer {secrets[k]}"}
            for t in range(turns):
                url = urls[(u + t) % len(urls)]
                body = {"chat_id": chat, "text": f"<U{u}> turn {t}: what should I pack for Oslo in May?"}
                started = time.perf_counter()
                try:
                    async with http.post(f"{url}/v1/chat", json=body, headers=headers) as response:
                        raw = (await response.read()).decode()
                    if response.status != 200 or "event: done" not in raw:
                        shard.errors += 1
                        continue
                except (aiohttp.ClientError, TimeoutError):
                    shard.errors += 1
                    continue
                shard.latencies.append(time.perf_counter() - started)
                shard.foreign += bool(set(MARKER.findall(raw)) - {f"<U{u}>"})

        async def warm(k: int, url: str) -> None:  # every client's connection, and the servers' pools
            headers = {"Authorization": f"Bearer {secrets[k]}"}
            body = {"chat_id": f"{chat}-warm", "text": f"<U{offset + k}> hello", "stream": False}
            async with http.post(f"{url}/v1/chat", json=body, headers=headers) as response:
                await response.read()

        # to every server a client will talk to: warmed to one only, a client alternating between two servers
        # opened its second connection within the measured load, 500 clients at once (a p99 of 3 to 6 s)
        for url in urls:
            await asyncio.gather(*(warm(k, url) for k in range(len(secrets))))
        await asyncio.to_thread(start.wait, 600)
        await asyncio.gather(*(one(k) for k in range(len(secrets))))
        await asyncio.to_thread(stop.wait, 1800)
        for k, secret in enumerate(secrets):  # read every chat back, from the first server
            async with http.get(
                f"{urls[0]}/v1/chats/{chat}",
                params={"last": "1000"},
                headers={"Authorization": f"Bearer {secret}"},
            ) as view:
                turns_back = (await view.json())["turns"] if view.status == 200 else []
            shard.errors += max(2 * turns - len(turns_back), 0)
            mine = {f"<U{offset + k}>"}
            shard.foreign += sum(bool(set(MARKER.findall(t["content"])) - mine) for t in turns_back)
    return shard
