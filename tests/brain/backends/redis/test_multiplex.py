"""Script calls sharing one pipelined connection (`brain.backends.redis.multiplex`), on real servers: the
replies go to their callers, errors to theirs alone, and a lost connection, a server that stops answering
and a cancelled caller end as a pooled call's would."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
import redis

from brain import StoreError
from brain.backends.redis.client import TranslatingRedis, connect
from brain.backends.redis.multiplex import Multiplexer
from brain.settings import RedisSettings

ECHO = "return {KEYS[1], ARGV[1]}"
INCR = "return redis.call('INCR', KEYS[1])"
FAIL = "return redis.error_reply('BRAIN_NOPE ' .. ARGV[1])"


def _client(url: str, **settings: Any) -> TranslatingRedis:
    client = connect(url, RedisSettings(url=url, **settings))
    assert isinstance(client, TranslatingRedis) and isinstance(client.multiplexer, Multiplexer)
    return client


async def _writes(client: TranslatingRedis) -> list[int]:
    """Counts the writes the shared connection makes (each a batch of calls)."""
    await client.eval("return 1", 0)  # opens it
    link = client.multiplexer._link  # type: ignore[union-attr]
    assert link is not None
    sizes: list[int] = []
    write = link.writer.write

    def counted(data: bytes) -> None:
        sizes.append(data.count(b"\r\n$7\r\nEVALSHA\r\n"))
        write(data)

    link.writer.write = counted  # type: ignore[method-assign]
    return sizes


def _pool(client: TranslatingRedis) -> tuple[int, int]:
    """The pool's connections: (idle, in use). The shared connection is not one of them."""
    pool: Any = client.connection_pool
    return len(pool._available_connections), len(pool._in_use_connections)


async def test_many_callers_share_one_connection_in_few_writes(redis_url: str) -> None:
    client = _client(redis_url, max_connections=4)
    try:
        echo = client.register_script(ECHO)
        await echo(keys=["warm"], args=["0"])  # loaded once
        writes = await _writes(client)
        pooled, _ = _pool(client)  # SCRIPT LOAD's
        got = await asyncio.gather(*(echo(keys=[f"k{i}"], args=[str(i)]) for i in range(300)))
        assert got == [[f"k{i}".encode(), str(i).encode()] for i in range(300)]
        assert sum(writes) == 300 and len(writes) < 10  # batched, not one write per call
        assert _pool(client) == (pooled, 0)
        assert await client.hget("k1", "f") is None  # other commands keep the pool
    finally:
        await client.aclose()


async def test_gets_share_the_connection_and_a_wrong_type_fails_its_caller_alone(redis_url: str) -> None:
    client = _client(redis_url, max_connections=4)
    try:
        incr = client.register_script(INCR)
        await incr(keys=["warm"])  # loaded once
        await client.hset("a-hash", "f", "v")
        writes = await _writes(client)
        pooled, _ = _pool(client)
        calls = [client.get("a-hash") if i % 5 == 0 else incr(keys=[f"n{i % 3}"]) for i in range(60)]
        calls += [client.get(f"n{i}") for i in range(3)]  # after every INCR of one pass, in order
        got = await asyncio.gather(*calls, return_exceptions=True)
        assert all(isinstance(r, StoreError) and "WRONGTYPE" in str(r) for r in got[:60:5])
        assert got[-3:] == [b"16", b"16", b"16"]
        assert sum(writes) == 48 and len(writes) < 5  # the scripts batched with the GETs
        assert _pool(client) == (pooled, 0)
    finally:
        await client.aclose()


async def test_an_error_reply_reaches_its_caller_alone(redis_url: str) -> None:
    client = _client(redis_url)
    try:
        echo, fail = client.register_script(ECHO), client.register_script(FAIL)
        calls = [
            fail(keys=["x"], args=[str(i)]) if i % 3 == 0 else echo(keys=["x"], args=[str(i)])
            for i in range(30)
        ]
        got = await asyncio.gather(*calls, return_exceptions=True)
        for i, reply in enumerate(got):
            if i % 3 == 0:
                assert isinstance(reply, StoreError) and str(reply) == f"BRAIN_NOPE {i}"
            else:
                assert reply == [b"x", str(i).encode()]
        with redis.Redis.from_url(redis_url) as admin:
            admin.script_flush()  # NOSCRIPT: loaded again and called again, as redis-py does
        assert await echo(keys=["y"], args=["1"]) == [b"y", b"1"]
    finally:
        await client.aclose()


async def test_a_killed_connection_is_replaced_and_calls_are_tried_again(redis_url: str) -> None:
    client = _client(redis_url, retries=3)
    try:
        incr = client.register_script(INCR)
        await incr(keys=["mux:n"])
        first = client.multiplexer._link  # type: ignore[union-attr]
        with redis.Redis.from_url(redis_url) as admin:
            admin.client_kill_filter(_type="normal", skipme=True)  # every client connection but this one
        counts = await asyncio.gather(*(incr(keys=["mux:n"]) for _ in range(20)))
        assert client.multiplexer._link is not first  # type: ignore[union-attr]
        assert len(set(counts)) == 20 and max(counts) >= 21
    finally:
        await client.aclose()


@pytest.mark.serial
async def test_a_server_that_stops_answering_times_out(redis_url: str) -> None:
    client = _client(redis_url, socket_timeout=0.3, retries=0)
    echo = client.register_script(ECHO)
    await echo(keys=["k"], args=["1"])
    busy = threading.Thread(
        target=_hold_server, args=(redis_url, 1.2), daemon=True
    )  # a script that runs 1.2 s: the server answers nobody meanwhile
    try:
        busy.start()
        await asyncio.sleep(0.1)
        started = time.monotonic()
        with pytest.raises(StoreError, match="Timeout reading from"):
            await echo(keys=["k"], args=["2"])
        assert 0.25 < time.monotonic() - started < 1.0
        busy.join()
        assert await echo(keys=["k"], args=["3"]) == [b"k", b"3"]  # on a new connection
    finally:
        busy.join()
        await client.aclose()


def _hold_server(url: str, seconds: float) -> None:
    spin = (
        "local t = redis.call('TIME') local s = t[1] + t[2] / 1e6 while true do "
        "t = redis.call('TIME') if t[1] + t[2] / 1e6 - s > tonumber(ARGV[1]) then return 1 end end"
    )
    with redis.Redis.from_url(url, socket_timeout=10) as other:
        other.eval(spin, 0, seconds)


async def test_a_caller_cancelled_before_the_write_sends_nothing(redis_url: str) -> None:
    client = _client(redis_url)
    try:
        incr = client.register_script(INCR)
        await incr(keys=["mux:c"])
        link = client.multiplexer._link  # type: ignore[union-attr]
        early = asyncio.create_task(incr(keys=["mux:c"]))
        await asyncio.sleep(0)  # queued, not written yet
        early.cancel()
        late = asyncio.create_task(incr(keys=["mux:c"]))
        await asyncio.sleep(0.01)  # written, maybe answered
        late.cancel()
        assert await incr(keys=["mux:c"]) == 3  # the early one never ran; the late one did
        assert client.multiplexer._link is link  # type: ignore[union-attr]
        assert early.cancelled()
    finally:
        await client.aclose()


async def test_closing_the_client_fails_what_waits_and_ends_the_reader(redis_url: str) -> None:
    client = _client(redis_url)
    await client.eval("return 1", 0)
    link = client.multiplexer._link  # type: ignore[union-attr]
    assert link is not None and link.task is not None
    await client.aclose()
    assert link.task.done() and link.broken


async def test_large_replies_arrive_whole_among_small_ones(redis_url: str) -> None:
    client = _client(redis_url)
    try:
        big, echo = (
            client.register_script("return string.rep(ARGV[1], 3000000)"),
            client.register_script(ECHO),
        )
        calls = [
            big(args=[str(i % 10)]) if i % 7 == 0 else echo(keys=["k"], args=[str(i)]) for i in range(50)
        ]
        got = await asyncio.gather(*calls)
        for i, reply in enumerate(got):
            assert reply == (str(i % 10).encode() * 3_000_000 if i % 7 == 0 else [b"k", str(i).encode()])
    finally:
        await client.aclose()


async def test_a_dead_server_is_tried_as_often_as_the_policy_says(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.support.servers import free_port

    url = f"redis://127.0.0.1:{free_port()}/0"  # nobody listens
    client = _client(url, retries=2, connect_timeout=0.5)
    opened: list[int] = []
    open_link = Multiplexer._open

    async def counted(self: Multiplexer) -> Any:
        opened.append(1)
        return await open_link(self)

    monkeypatch.setattr(Multiplexer, "_open", counted)
    try:
        with pytest.raises(StoreError, match="Redis EVAL failed: ConnectionError"):
            await client.eval("return 1", 0)
        assert len(opened) == 3  # the first try and two more, as a pooled command
    finally:
        await client.aclose()
