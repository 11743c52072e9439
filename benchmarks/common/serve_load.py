"""What `benchmarks/serve.py` runs: processes, readiness, keyed clients chatting over HTTP, and the CPU a
process tree spent (read from /proc: the server and every worker it started)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import statistics
import subprocess
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
    urls: list[str], pids: list[int], secrets: list[str], turns: int, chat: str
) -> dict[str, float]:
    """Every client says `turns` turns at once (alternating between `urls`); then every chat is read back.
    Counted: turns/s, p50/p99, errors, answers or stored turns with another client's marker, missing
    turns, and the servers' CPU per turn."""
    latencies: list[float] = []
    errors = foreign = 0
    limits = httpx2.Limits(max_connections=len(secrets), max_keepalive_connections=len(secrets))

    async with httpx2.AsyncClient(timeout=120, limits=limits) as http:

        async def one(u: int) -> None:
            nonlocal errors, foreign
            headers = {"Authorization": f"Bearer {secrets[u]}"}
            for t in range(turns):
                url = urls[(u + t) % len(urls)]
                body = {"chat_id": chat, "text": f"<U{u}> turn {t}: what should I pack for Oslo in May?"}
                started = time.perf_counter()
                try:
                    async with http.stream("POST", f"{url}/v1/chat", json=body, headers=headers) as response:
                        raw = (await response.aread()).decode()
                    if response.status_code != 200 or "event: done" not in raw:
                        errors += 1
                        continue
                except httpx2.HTTPError:
                    errors += 1
                    continue
                latencies.append(time.perf_counter() - started)
                foreign += bool(set(MARKER.findall(raw)) - {f"<U{u}>"})

        async def warm(u: int) -> None:  # every client's connection, and the servers' pools
            headers = {"Authorization": f"Bearer {secrets[u]}"}
            body = {"chat_id": f"{chat}-warm", "text": f"<U{u}> hello", "stream": False}
            await http.post(f"{urls[u % len(urls)]}/v1/chat", json=body, headers=headers)

        await asyncio.gather(*(warm(u) for u in range(len(secrets))))
        cpu_before = sum(cpu_seconds(pid) for pid in pids)
        started = time.perf_counter()
        await asyncio.gather(*(one(u) for u in range(len(secrets))))
        elapsed = time.perf_counter() - started
        cpu = sum(cpu_seconds(pid) for pid in pids) - cpu_before
        missing = 0
        for u, secret in enumerate(secrets):  # read every chat back, from the first server
            view = await http.get(
                f"{urls[0]}/v1/chats/{chat}",
                params={"last": 1000},
                headers={"Authorization": f"Bearer {secret}"},
            )
            turns_back = view.json()["turns"] if view.status_code == 200 else []
            missing += max(2 * turns - len(turns_back), 0)
            foreign += sum(bool(set(MARKER.findall(t["content"])) - {f"<U{u}>"}) for t in turns_back)
    latencies.sort()
    return {
        "turns_per_s": len(latencies) / elapsed,
        "p50_ms": statistics.median(latencies) * 1000 if latencies else 0.0,
        "p99_ms": latencies[int(len(latencies) * 0.99)] * 1000 if latencies else 0.0,
        "errors": errors + missing,
        "cross_tenant": foreign,
        "cpu_ms_per_turn": cpu * 1000 / max(len(latencies), 1),
    }
