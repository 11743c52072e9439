"""A Redis Cluster's own faults (issue 33), on six real redis-server nodes (three primaries, a replica each,
cluster-node-timeout 1 s).

Under load, a primary killed with SIGKILL must cost no more than its replica's promotion: errors stop within
2 s of it, every error a caller sees is a `StoreError`, no acknowledged turn is lost, and a turn retried
with its message id is never stored twice. Before the fix a process could stay degraded for as long as the
load went on: redis-py's asyncio cluster client recovers from CLUSTERDOWN, from every fifth MOVED and from a
pipeline's failure by closing every connection of every node (under other tasks' commands: `ConnectionError`,
`AttributeError: 'NoneType' object has no attribute 'writelines'`, scripts run again) and unsetting its
default node (commands begun before the next refresh went to random primaries, whose MOVED replies called it
again). The tests below drive those paths one at a time, then the failover as a whole.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio.cluster import ClusterNode
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ClusterDownError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from brain import RedisConnection, Settings
from brain.backends.redis.client import WaitingCluster, connect
from brain.backends.redis.cluster_pool import Resender, current_try, idempotent
from brain.errors import StoreError
from brain.settings import RedisSettings
from brain.storage.conversation import Conversation
from brain.testing import ScriptedCall, ScriptedLLM
from roles import Assistant
from tests.support.cluster import LocalCluster, cluster_tools_missing, failover_under_load
from tests.support.runtime import make_runtime

pytestmark = [
    pytest.mark.skipif(cluster_tools_missing() is not None, reason=str(cluster_tools_missing())),
    pytest.mark.serial,  # recovery within 2 s of a promotion after cluster-node-timeout 1 s
]

RECOVERY_S = 2.0

# INCR, then keep the node busy for ARGV[1] µs: a write in flight long enough to break, or to time out.
SPIN = """
redis.call('INCR', KEYS[1])
local t = redis.call('TIME')
local start = t[1] * 1000000 + t[2]
while true do
  t = redis.call('TIME')
  if t[1] * 1000000 + t[2] - start > tonumber(ARGV[1]) then break end
end
return 1
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    with LocalCluster(tmp_path_factory.mktemp("failover"), primaries=3, replicas=1) as running:
        yield running


def cluster_client(cluster: LocalCluster, **settings: Any) -> WaitingCluster:
    client = connect(cluster.url, RedisSettings.model_validate(settings), cluster=True)
    assert isinstance(client, WaitingCluster)
    return client


def key_on(client: WaitingCluster, node: ClusterNode, prefix: str = "k") -> str:
    """A key whose slot `node` serves."""
    return next(f"{prefix}{i}" for i in range(100_000) if client.get_node_from_key(f"{prefix}{i}") == node)


async def test_redis_py_closing_to_recover_leaves_other_commands_alone(cluster: LocalCluster) -> None:
    """redis-py calls `aclose()` itself on every fifth MOVED; with no retries to hide it, nothing another
    task has in flight breaks (a script is not run twice), the default node stays, and the commands that
    follow go to their slot's node (no MOVED: the loop of the degraded mode cannot start)."""
    client = cluster_client(cluster, retries=0)
    spin: asyncio.Task[Any] | None = None
    try:
        await client.initialize()
        a, b, c = client.get_primaries()
        counter = key_on(client, a, "counter")
        spin = asyncio.create_task(client.execute_command("EVAL", SPIN, 1, counter, "300000"))
        await asyncio.sleep(0.05)
        elsewhere = key_on(client, c)
        for _ in range(client.reinitialize_steps):  # MOVED each time: the last one makes redis-py aclose()
            await client.execute_command("GET", elsewhere, target_nodes=b)
        assert client.get_default_node() is not None
        keys = [key_on(client, node, f"x{i}-") for i in range(10) for node in (b, c)]
        assert await asyncio.gather(*(client.get(k) for k in keys)) == [None] * len(keys)
        assert client.reinitialize_counter == 0  # none was sent to a node that does not serve its slot
        assert await spin == 1
        assert await client.get(counter) == b"1"
    finally:
        if spin is not None:
            await asyncio.gather(spin, return_exceptions=True)
        await client.aclose()


async def test_closing_idle_connections_breaks_no_command(cluster: LocalCluster) -> None:
    """On a connection error redis-py closes the node's idle connections; commands that take one of them
    meanwhile neither fail nor need a retry (redis-py's own close left them to write on a closing socket:
    "Connection lost", or `None.writelines`)."""
    client = cluster_client(cluster, retries=0)
    try:
        await client.initialize()
        node = client.get_primaries()[0]
        key = key_on(client, node)
        for _ in range(10):
            await asyncio.gather(*(client.execute_command("PING", target_nodes=node) for _ in range(10)))
            closing = asyncio.create_task(node.disconnect_free_connections())
            await asyncio.sleep(0)  # the close begins
            assert await asyncio.gather(*(client.get(key) for _ in range(10))) == [None] * 10
            await closing
    finally:
        await client.aclose()


async def test_a_write_whose_outcome_is_unknown_is_not_sent_again(cluster: LocalCluster) -> None:
    """A script that timed out after it was sent may have run: it fails (`StoreError`) and is not sent
    again (redis-py would have sent it `retries` more times, running it up to four times)."""
    client = cluster_client(cluster, socket_timeout=0.25)
    try:
        await client.initialize()
        counter = key_on(client, client.get_primaries()[0], "once")
        with pytest.raises(StoreError, match="Timeout"):
            await client.execute_command("EVAL", SPIN, 1, counter, "800000")
        await asyncio.sleep(0.8)  # the node is done
        assert await client.get(counter) == b"1"
    finally:
        await client.aclose()


class _Flaky:
    """A try that fails `times` times with `error` (sent or not, as the connection would mark it)."""

    def __init__(self, error: Exception, times: int, sent: bool) -> None:
        self.error, self.left, self.sent, self.calls = error, times, sent, 0

    async def __call__(self) -> str:
        self.calls += 1
        attempt = current_try()
        assert attempt is not None
        attempt.sent = self.sent
        if self.left:
            self.left -= 1
            raise self.error
        return "ok"


async def _noop(error: Exception) -> None:
    return None


@pytest.mark.parametrize(
    ("error", "sent", "command", "retried"),
    [
        (RedisConnectionError("refused"), False, ("EVALSHA", "sha", 1, "k"), True),  # never sent
        (ClusterDownError("CLUSTERDOWN"), True, ("EVALSHA", "sha", 1, "k"), True),  # refused unrun
        (RedisConnectionError("closed"), True, ("EVALSHA", "sha", 1, "k"), False),  # outcome unknown
        (RedisTimeoutError("timeout"), True, ("XADD", "s", "*", "f", "v"), False),
        (RedisConnectionError("closed"), True, ("HGET", "h", "f"), True),  # a read: may run twice
    ],
)
async def test_which_failures_are_tried_again(
    error: Exception, sent: bool, command: tuple[Any, ...], retried: bool
) -> None:
    resender = Resender(Retry(NoBackoff(), 3), deadline_s=5.0)
    once = _Flaky(error, times=2, sent=sent)
    if retried:
        assert await resender.run(once, [command], _noop) == "ok"
        assert once.calls == 3
    else:
        with pytest.raises(type(error)):
            await resender.run(once, [command], _noop)
        assert once.calls == 1


async def test_an_idempotent_write_is_tried_again_and_the_deadline_holds() -> None:
    with idempotent():
        once = _Flaky(RedisConnectionError("closed"), times=1, sent=True)
        assert await Resender(Retry(NoBackoff(), 3), 5.0).run(once, [("EVALSHA", "sha", 0)], _noop) == "ok"
    once = _Flaky(RedisConnectionError("refused"), times=5, sent=False)
    with pytest.raises(RedisConnectionError):
        await Resender(Retry(NoBackoff(), 10), deadline_s=0.0).run(once, [("GET", "k")], _noop)
    assert once.calls == 1


def answer(call: ScriptedCall) -> str:
    return "Pack a raincoat."


async def test_a_primary_killed_under_load_costs_no_more_than_the_promotion(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    settings = Settings.model_validate(
        {"home": str(tmp_path), "redis": {"url": cluster.url, "cluster": True}}
    )
    with_ids = "message_id" in inspect.signature(Assistant.chat).parameters
    victim = next(p for p in cluster.primaries() if p.port != cluster.nodes[0].port)  # not the seed
    try:
        async with await RedisConnection.open(settings) as connection:
            runtime = make_runtime(ScriptedLLM([answer] * 1_000_000), client=connection.client)
            assistant = Assistant(runtime)

            async def chat(user: str, chat_id: str, text: str, message_id: str | None) -> str:
                if with_ids:
                    return await assistant.chat(user, chat_id, text, message_id=message_id)
                return await assistant.chat(user, chat_id, text)

            async def stored(user: str, chat_id: str) -> list[str]:
                turns = await runtime.store.read_turns(Conversation(user, chat_id), 1, 100_000)
                return [t.message.content for t in turns if t.message.role == "user"]

            trial = await failover_under_load(
                cluster, victim, chat, stored, users=24, before=1.0, after=3.0, message_ids=with_ids
            )
    finally:
        await asyncio.to_thread(cluster.restart, victim)

    report = (
        f"promotion {trial.promotion_s:.2f} s after the kill; errors (per 100 ms, from the kill): "
        f"{trial.error_spans()}; {dict(trial.errors)}\n" + "\n".join(trial.traces.values())
    )
    assert trial.acked > 200, report  # there was load before, during and after
    assert trial.rate(trial.promoted_at + RECOVERY_S, trial.load_until) > 0, report
    assert not trial.raw, report  # every failure a caller saw was a StoreError
    assert trial.lost == 0, report
    assert trial.gave_up == 0, report
    if with_ids:
        assert trial.duplicates == 0, report
    assert trial.recovery_s <= RECOVERY_S, report


async def test_a_cluster_is_not_ready_while_a_primary_fails_over_and_ready_after(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    from brain.backends.redis import RedisBackend

    settings = Settings.model_validate(
        {"home": str(tmp_path), "redis": {"url": cluster.url, "cluster": True}}
    )
    victim = next(p for p in cluster.primaries() if p.port != cluster.nodes[0].port)
    replicas = cluster.replicas_of(victim)
    try:
        async with await RedisConnection.open(settings) as connection:
            backend = RedisBackend.for_settings(connection.client, settings)
            await backend.ping()
            cluster.kill(victim)
            for _ in range(60):  # cluster-node-timeout (1 s) and a little: the state turns to fail
                try:
                    await backend.ping()
                except StoreError as exc:
                    down = str(exc)
                    break
                await asyncio.sleep(0.1)
            else:
                raise AssertionError("the Cluster never said it was failing over")
            await asyncio.to_thread(cluster.wait_promoted, replicas)
            for _ in range(100):
                try:
                    await backend.ping()
                    break
                except StoreError:
                    await asyncio.sleep(0.1)
            await backend.ping()  # ready again after the promotion
    finally:
        await asyncio.to_thread(cluster.restart, victim)
    assert "failing over" in down
