"""`brain serve --workers N`: N processes on one port, spread by the kernel, supervised; one rate limit and
one revocation across them (they share nothing but Redis)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import pytest
import redis

from brain.settings import Settings
from roles.cli.workers import MAX_AUTO_WORKERS, worker_count
from tests.support.openai_server import ScriptedOpenAIServer
from tests.support.serving import to_a_fresh_window, wait_ready

BRAIN = str(Path(sys.executable).parent / "brain")


def test_a_serving_process_imports_the_sdk_before_it_serves() -> None:
    """A chat imports no `openai` (`brain.llm.endpoint`); a server imports it at start (`serve_on`), not
    on the event loop at an endpoint's first error. In a fresh interpreter: the server module does not,
    `import_sdk` does."""
    code = (
        "import sys; from roles.http.server import import_sdk; before = 'openai' in sys.modules; "
        "import_sdk(); print(before, 'openai' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.split() == ["False", "True"]


def test_worker_count() -> None:
    settings = Settings.model_validate({"llm": {"base_url": "http://127.0.0.1:9/v1"}})
    assert worker_count(settings, 3) == 3
    assert worker_count(settings, None, cores=4) == 4  # serve.workers 0: one per core
    assert worker_count(settings, 0, cores=64) == MAX_AUTO_WORKERS
    pinned = settings.model_copy(update={"serve": settings.serve.model_copy(update={"workers": 2})})
    assert worker_count(pinned, None, cores=16) == 2


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue
            cmdline = (entry / "cmdline").read_bytes() if int(stat[1]) == pid else b""
            if b"multiprocessing.spawn" in cmdline and b"resource_tracker" not in cmdline:
                found.append(int(entry.name))
    return sorted(found)


def _connections(pid: int, port: int) -> int:
    """Established connections `pid` holds on local `port`."""
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if int(fields[1].split(":")[1], 16) == port and fields[3] == "01":
            inodes.add(fields[9])
    held = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        held += target.startswith("socket:[") and target[8:-1] in inodes
    return held


async def _forty_at_once(
    url: str, headers: dict[str, str], workers: list[int], port: int
) -> tuple[list[int], list[int]]:
    """40 requests on 40 connections at once (kept open): their statuses, and the connections each worker
    holds."""
    limits = httpx2.Limits(max_connections=40, max_keepalive_connections=40)
    async with httpx2.AsyncClient(headers=headers, timeout=30, limits=limits) as http:
        answers = await asyncio.gather(*(http.get(f"{url}/v1/me") for _ in range(40)))
        return sorted(a.status_code for a in answers), [_connections(pid, port) for pid in workers]


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads /proc")
def test_workers_share_a_port_a_rate_limit_and_revocation(
    redis_server_url: str, openai_server: ScriptedOpenAIServer
) -> None:
    with redis.Redis.from_url(redis_server_url) as client:
        client.flushdb()
    env = {
        **os.environ,
        "OPENAI_BASE_URL": openai_server.url,
        "OPENAI_API_KEY": "sk-test",
        "BRAIN_REDIS_URL": redis_server_url,
    }
    settings = ("--set", "serve.rate_limit=30", "--set", "memory.facts.in_process_worker=false")
    created = subprocess.run(
        [BRAIN, "keys", "create", "--user", "ann", *settings],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    secret = created.stdout.strip()
    server = subprocess.Popen(
        [BRAIN, "serve", "--port", "0", "--workers", "2", *settings],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        assert "2 worker processes" in line, line
        url = line.split()[2]
        port = int(url.rsplit(":", 1)[1])
        asyncio.run(wait_ready(url))
        workers = _children(server.pid)
        assert len(workers) == 2, workers
        headers = {"Authorization": f"Bearer {secret}"}
        time.sleep(to_a_fresh_window())  # the forty requests count in one rate window
        statuses, held = asyncio.run(_forty_at_once(url, headers, workers, port))
        assert statuses == [200] * 30 + [429] * 10  # one rate limit for all workers
        assert all(held) and sum(held) >= 40, held  # the kernel spread the connections over both
        os.kill(workers[0], signal.SIGKILL)  # a worker that dies is replaced; the port keeps answering
        for _ in range(200):
            replaced = _children(server.pid)
            if len(replaced) == 2 and workers[0] not in replaced:
                break
            time.sleep(0.1)
        assert len(replaced) == 2 and workers[1] in replaced and workers[0] not in replaced, replaced
        asyncio.run(wait_ready(url))
        key_id = secret.split("_")[1]
        revoked = subprocess.run(
            [BRAIN, "keys", "revoke", key_id], capture_output=True, text=True, env=env, timeout=60
        )
        assert revoked.returncode == 0, revoked.stderr
        with httpx2.Client(headers=headers, timeout=30) as http:
            assert {http.get(f"{url}/v1/me").status_code for _ in range(20)} == {401}
    finally:
        server.send_signal(signal.SIGINT)
        _, errors = server.communicate(timeout=60)
    assert server.returncode == 0 and "brain serve: stopped" in errors, errors
    assert "starting another" in errors and "Traceback" not in errors.split("starting another")[1], errors
    assert _children(server.pid) == []


def test_a_serving_process_settles_its_heap_and_a_library_process_does_not() -> None:
    code = (
        "import gc, json; import roles.http.server as s; before = gc.get_threshold(); s.settle_heap(); "
        "print(json.dumps([before, gc.get_threshold(), gc.get_freeze_count()]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, after, frozen = json.loads(done.stdout)
    assert before[0] == 700  # importing the server changes nothing: only a serving process settles
    assert after == [200_000, *before[1:]] and frozen > 10_000
