"""Writes acknowledged by replicas (`redis.wait_replicas`): a write script and `WAIT n timeout` in one
pipeline, so both go over the same connection (WAIT counts the writes of its own connection) to the same
node (on Cluster: the node of the script's first key). A write the replicas did not confirm in time is a
`StoreError`: it is on the primary, but a failover could lose it; a caller retries with the same message id
(writes are idempotent by id)."""

from __future__ import annotations

from typing import Any

from redis.asyncio.cluster import RedisCluster
from redis.exceptions import NoScriptError

from brain.backends.redis.client import RedisClient
from brain.errors import StoreError

__all__ = ["acknowledged"]


async def acknowledged(
    client: RedisClient, script: Any, keys: list[str], args: list[Any], replicas: int, timeout_ms: int
) -> Any:
    """`script(keys, args)`'s result once `replicas` replicas have the write; `StoreError` when fewer did
    within `timeout_ms`. `script` is a `TracedScript` (or a redis-py `Script`) registered on `client`."""
    for loaded in (False, True):
        pipe = client.pipeline(transaction=False)
        if isinstance(client, RedisCluster):  # its pipeline blocks `evalsha()`, not the command itself
            node = client.get_node_from_key(keys[0])
            pipe.execute_command("EVALSHA", _inner(script).sha, len(keys), *keys, *args, target_nodes=node)
            pipe.execute_command("WAIT", replicas, timeout_ms, target_nodes=node)
        else:
            await script(keys=keys, args=args, client=pipe)
            pipe.execute_command("WAIT", replicas, timeout_ms)
        try:
            result, confirmed = await pipe.execute()
        except NoScriptError:  # a cluster pipeline does not load scripts itself (a new or promoted node)
            if loaded:
                raise
            await client.script_load(_inner(script).script)
            continue
        if int(confirmed) < replicas:
            raise StoreError(
                f"a write reached {int(confirmed)} of the {replicas} replicas redis.wait_replicas asks for "
                f"within {timeout_ms} ms (it is on the primary; retrying it with the same id is safe)"
            )
        return result
    raise AssertionError("unreachable")


def _inner(script: Any) -> Any:
    """The redis-py `Script` (its `sha` and `script` text) behind a `TracedScript`."""
    return getattr(script, "_script", script)
