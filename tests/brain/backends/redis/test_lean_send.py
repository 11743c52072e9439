"""`LeanConnection` on a real server: the standalone client's TCP connections write without a task per
command, and a write that cannot leave is still bounded by `redis.socket_timeout`."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest

from brain import StoreError
from brain.backends.redis.client import connect
from brain.backends.redis.lean_send import LeanConnection
from brain.settings import RedisSettings
from tests.support.servers import RedisServerProcess


async def test_plain_tcp_pools_use_it_and_round_trip(redis_url: str) -> None:
    client = connect(redis_url, RedisSettings(url=redis_url))
    try:
        assert client.connection_pool.connection_class is LeanConnection  # type: ignore[union-attr]
        await client.set("lean:k", b"\x00" * 300_000)  # bigger than one write of the socket
        assert await client.get("lean:k") == b"\x00" * 300_000
        counts = await asyncio.gather(*(client.incr("lean:n") for _ in range(200)))  # many connections
        assert sorted(counts) == list(range(1, 201))
    finally:
        await client.delete("lean:k", "lean:n")
        await client.aclose()


def test_tls_and_unix_socket_pools_keep_their_own_class() -> None:
    for url in ("rediss://127.0.0.1:6390/0", "unix:///tmp/brain-lean.sock"):
        client = connect(url, RedisSettings(url=url))
        assert client.connection_pool.connection_class is not LeanConnection  # type: ignore[union-attr]


@pytest.mark.serial
async def test_a_write_that_cannot_leave_times_out(tmp_path: Path) -> None:
    server = RedisServerProcess(tmp_path / "data", appendonly=False)
    server.start()
    client = connect(server.url, RedisSettings(url=server.url, socket_timeout=0.5, retries=0))
    assert server.process is not None
    try:
        await client.ping()
        os.kill(server.process.pid, signal.SIGSTOP)  # the server reads nothing: socket buffers fill up
        started = time.monotonic()
        with pytest.raises(StoreError, match="Timeout"):
            await client.set("lean:big", b"x" * 64_000_000)
        assert 0.4 < time.monotonic() - started < 5
    finally:
        os.kill(server.process.pid, signal.SIGCONT)
        await client.aclose()
        server.stop()
