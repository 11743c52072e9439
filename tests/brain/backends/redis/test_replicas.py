"""`redis.wait_replicas`: a write is acknowledged only once replicas have it (WAIT on its own connection)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from brain.backends.redis import RedisBackend
from brain.backends.redis.client import TranslatingRedis
from brain.errors import StoreError
from brain.message import Message
from brain.storage.conversation import Conversation, WriteBatch
from tests.support.servers import RedisServerProcess

pytestmark = pytest.mark.serial  # how long a write waits, within bounds

CONV = Conversation("ann", "c1")


@pytest.fixture
def primary_and_replica(tmp_path: Path) -> Iterator[tuple[RedisServerProcess, RedisServerProcess]]:
    primary = RedisServerProcess(tmp_path / "primary", appendonly=False)
    primary.start()
    replica = RedisServerProcess(
        tmp_path / "replica", appendonly=False, extra=("--replicaof", "127.0.0.1", str(primary.port))
    )
    replica.start()
    try:
        in_sync(replica)
        yield primary, replica
    finally:
        replica.stop()
        primary.stop()


def in_sync(replica: RedisServerProcess) -> None:
    for _ in range(200):
        with redis.Redis(port=replica.port) as client:
            if client.info("replication").get("master_link_status") == "up":
                return
        time.sleep(0.05)
    raise AssertionError("the replica did not sync")


def _batch(*ids: str) -> WriteBatch:
    return WriteBatch(turns=tuple((Message(id=i, content=f"turn {i}"), 3) for i in ids))


async def test_a_write_waits_for_its_replica_and_fails_when_none_confirms(
    primary_and_replica: tuple[RedisServerProcess, RedisServerProcess],
) -> None:
    primary, replica = primary_and_replica
    client = TranslatingRedis.from_url(primary.url)
    backend = RedisBackend(client, wait_replicas=1, wait_timeout_ms=300)
    try:
        result = await backend.conversations.write(CONV, _batch("m1", "m2"))
        assert result.seqs == (1, 2)
        mirror = RedisBackend(TranslatingRedis.from_url(replica.url))
        assert [t.message.id for t in await mirror.conversations.read_turns(CONV, 1, 10)] == ["m1", "m2"]
        await mirror.client.aclose()
        replica.stop()
        started = time.perf_counter()
        with pytest.raises(StoreError, match="reached 0 of the 1 replicas"):
            await backend.conversations.write(CONV, _batch("m3"))
        assert 0.25 < time.perf_counter() - started < 3
        replica.start()  # back, and in sync again: the retry with the same id adds no second turn
        in_sync(replica)
        again = await backend.conversations.write(CONV, _batch("m3"))
        assert again.added == 0 and again.seqs == (3,)
    finally:
        await client.aclose()


async def test_without_wait_replicas_no_wait_is_sent(
    primary_and_replica: tuple[RedisServerProcess, RedisServerProcess],
) -> None:
    primary, replica = primary_and_replica
    replica.stop()
    client = TranslatingRedis.from_url(primary.url)
    try:
        started = time.perf_counter()
        await RedisBackend(client, wait_replicas=0).conversations.write(CONV, _batch("m1"))
        assert time.perf_counter() - started < 0.25  # no replica, no wait
    finally:
        await client.aclose()
