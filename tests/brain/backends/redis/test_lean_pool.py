"""The lean command path (`brain.backends.redis.lean_pool`) and `LeanConnection.pack_command`: the same bytes
and the same outcomes as redis-py's own way, on a real server."""

from __future__ import annotations

import asyncio
import enum
from typing import Any

import pytest
from redis.asyncio.connection import Connection
from redis.exceptions import DataError

from brain import StoreError
from brain.backends.redis import client as client_module
from brain.backends.redis import lean_pool
from brain.backends.redis.client import FairBlockingPool, connect
from brain.backends.redis.lean_send import LeanConnection
from brain.settings import RedisSettings


class _Level(enum.IntEnum):
    HIGH = 3


PACKED = [
    ("GET", "k"),
    ("CONFIG GET", "maxmemory"),  # the command name's words are sent apart
    ("CONFIG\tGET", "maxmemory"),  # on any white space, as redis-py cuts them
    (b"HGET", b"h", b"f"),
    (b"SCRIPT LOAD", "return 1"),
    ("EVALSHA", "ab" * 20, 2, b"k1", "k2", 1.5, 7, "ü" * 3),
    ("EVALSHA", "s", 0, -3, 2**70, -1e308, 1e308, 0.1, float("inf"), ""),  # numbers as redis-py writes them
    ("SET", "k", b"v" * 5_999),
    ("SET", "k", b"v" * 6_001),  # past redis-py's cut-off: in pieces, as it sends them
    ("SET", "k", "x" * 3_000, "y" * 3_000),
    ("SET", "k", memoryview(b"abc")),
    ("SET", "k", -0.0, float("nan"), "中文 ü", b"\x00\xff"),
    ("SET", "k", _Level.HIGH),  # an int of a subclass: as redis-py writes it (its repr), not as hiredis would
]


def test_text_utf8_cannot_carry_is_refused_as_redis_py_refuses_it() -> None:
    with pytest.raises(UnicodeEncodeError):
        LeanConnection().pack_command("SET", "k", "x\ud800")
    with pytest.raises(UnicodeEncodeError):
        Connection().pack_command("SET", "k", "x\ud800")


@pytest.mark.parametrize("args", PACKED)
def test_packed_bytes_are_redis_pys(args: tuple[object, ...]) -> None:
    lean, plain = LeanConnection(), Connection()
    assert b"".join(map(bytes, lean.pack_command(*args))) == b"".join(map(bytes, plain.pack_command(*args)))


@pytest.mark.parametrize("args", [("SET", "k", True), ("SET", "k", None), ("SET", "k", object())])
def test_what_redis_py_refuses_is_refused(args: tuple[object, ...]) -> None:
    with pytest.raises(DataError):
        LeanConnection().pack_command(*args)


async def test_commands_go_the_lean_way_and_every_connection_comes_back(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = connect(redis_url, RedisSettings(url=redis_url, max_connections=4))
    pool = client.connection_pool
    assert isinstance(pool, FairBlockingPool) and not lean_pool.observed()
    leaned: list[object] = []

    async def counted(*args: Any) -> Any:
        leaned.append(args[1][0])
        return await lean_pool.lean_execute(*args)

    monkeypatch.setattr(client_module, "lean_execute", counted)
    try:
        counts = await asyncio.gather(*(client.incr("leanpool:n") for _ in range(50)))  # 4 at a time
        assert sorted(counts) == list(range(1, 51))
        assert leaned == ["INCRBY"] * 50
        assert not pool._in_use_connections and len(pool._available_connections) == 4
        assert not pool._turns.locked()
        with pytest.raises(StoreError, match="Redis HGET failed"):  # a wrong type: translated, as ever
            await client.hget("leanpool:n", "f")
        assert not pool._in_use_connections and not pool._turns.locked()
    finally:
        await client.delete("leanpool:n")
        await client.aclose()
