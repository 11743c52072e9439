"""`RedisBackend`: every memory kind's store over one Redis or Valkey client (standalone or Cluster), each
namespace under its own hash tag (`brain.keys`)."""

from __future__ import annotations

import asyncio

from redis.asyncio.cluster import RedisCluster

from brain.backends.redis.api_keys import RedisApiKeyStore
from brain.backends.redis.archive import UserArchive
from brain.backends.redis.archive_store import ArchiveStore, store_for
from brain.backends.redis.block_sessions import BlockScripts, RedisBlockSession
from brain.backends.redis.client import RedisClient
from brain.backends.redis.conversation import RedisMemoryStore
from brain.backends.redis.core_blocks import RedisCoreBlockStore
from brain.backends.redis.facts import RedisFactStore
from brain.backends.redis.fence import Fencing, RedisErasureStore
from brain.backends.redis.graph import RedisGraphStore
from brain.backends.redis.index import IndexScripts, RedisIndexStore
from brain.backends.redis.queue import RedisFactQueue
from brain.backends.redis.usage import RedisUsageStore
from brain.errors import InputError, StoreError
from brain.keys import key_family, namespace_base, user_patterns
from brain.search.filters import text
from brain.settings import Settings

__all__ = ["RedisBackend"]


_CHAT_KINDS = ("recall", "blocks")
"""Namespaces owned by one chat (`brain.keys.key_family`), besides its conversation keys."""


class RedisBackend:
    """A `Backend` over an injected client (whoever made the client closes it). Cheap to build; scripts are
    registered once, vector snapshots kept per process (`brain.backends.redis.vectors`)."""

    def __init__(
        self,
        client: RedisClient,
        *,
        prefix: str = "brain",
        name: str = "redis",
        ttl_seconds: int | None = None,
        max_message_bytes: int = 1_048_576,
        erase_fence_seconds: int = 604_800,
        wait_replicas: int = 0,
        wait_timeout_ms: int = 1_000,
        queue_max_len: int = 10_000,
        dead_letters_max: int = 1_000,
        audit_max_events: int = 10_000,
        archive_store: ArchiveStore | None = None,
    ) -> None:
        self.client, self.prefix, self.name = client, prefix, name
        self.fencing = fencing = Fencing(
            client, prefix, wait_replicas=wait_replicas, wait_timeout_ms=wait_timeout_ms
        )
        self.erasure = RedisErasureStore(client, prefix=prefix, fence_seconds=erase_fence_seconds)
        self.queue = RedisFactQueue(
            client, prefix=prefix, fencing=fencing, max_len=queue_max_len, dead_letters_max=dead_letters_max
        )
        self.conversations = RedisMemoryStore(
            client,
            prefix=prefix,
            ttl_seconds=ttl_seconds,
            max_message_bytes=max_message_bytes,
            fencing=fencing,
            erasure=self.erasure,
            queue=self.queue,
        )
        self.core = RedisCoreBlockStore(client, prefix=prefix, fencing=fencing)
        self.facts = RedisFactStore(client, prefix=prefix, fencing=fencing, audit_max_events=audit_max_events)
        self.graph = RedisGraphStore(client, prefix=prefix, fencing=fencing)
        self.api_keys = RedisApiKeyStore(client, prefix=prefix)
        self.usage = RedisUsageStore(client, prefix=prefix, fencing=fencing)
        self.archive = UserArchive(
            client, prefix=prefix, store=archive_store, cluster=isinstance(client, RedisCluster)
        )
        self._index_scripts = IndexScripts(client)
        self._block_scripts = BlockScripts(client)

    @classmethod
    def for_settings(cls, client: RedisClient, settings: Settings, *, name: str = "redis") -> RedisBackend:
        """The backend as `settings` configure it (key prefix, chat expiry, message size, bounds)."""
        """The backend as `settings` configure it (key prefix, chat expiry, message size, cold archive)."""
        return cls(
            client,
            prefix=settings.redis.key_prefix,
            name=name,
            ttl_seconds=settings.memory.ttl_seconds,
            max_message_bytes=settings.memory.max_message_bytes,
            erase_fence_seconds=settings.memory.erase_fence_seconds,
            wait_replicas=settings.redis.wait_replicas,
            wait_timeout_ms=settings.redis.wait_timeout_ms,
            queue_max_len=settings.memory.facts.queue_max_len,
            dead_letters_max=settings.memory.facts.dead_letters_max,
            audit_max_events=settings.memory.facts.audit_max_events,
            archive_store=store_for(settings),
        )

    def index(self, base: str) -> RedisIndexStore:
        """A namespace's index; one of a chat (its recall memory, its block memory's) expires with the
        chat's keys (`ttl_seconds` after its last write)."""
        chat = key_family(base).split(".")[0] in _CHAT_KINDS
        ttl = self.conversations.ttl if chat else 0
        return RedisIndexStore(
            self.client, base, scripts=self._index_scripts, fencing=self.fencing, ttl_seconds=ttl
        )

    def block_session(self, user_id: str | bytes, chat_id: str | bytes) -> RedisBlockSession:
        return RedisBlockSession(
            self.client,
            user_id,
            chat_id,
            prefix=self.prefix,
            scripts=self._block_scripts,
            fencing=self.fencing,
            ttl_seconds=self.conversations.ttl,
        )

    async def ping(self) -> None:
        """The store answers; on a Cluster, every slot has a primary (not while one fails over)."""
        await self.client.ping()
        if isinstance(self.client, RedisCluster):
            state = (await self.client.cluster_info()).get("cluster_state")
            if state != "ok":
                raise StoreError(f"the Cluster's state is {state!r}: a primary is down or failing over")

    async def user_leftovers(self, user_id: str | bytes) -> list[str]:
        """Every key of `user_id` (a full SCAN per pattern)."""
        found: set[str] = set()
        for pattern in user_patterns(self.prefix, user_id):
            found.update([text(key) async for key in self.client.scan_iter(match=pattern, count=1_000)])
        return sorted(found)

    async def compact(self) -> bool:
        """BGREWRITEAOF on a standalone server, then wait for it (a rewrite already running is waited for
        and followed by a new one). On Cluster, `InputError`: rewrite each node's file with its own tools."""
        if isinstance(self.client, RedisCluster):
            raise InputError("on a Cluster, run BGREWRITEAOF on every node (redis-cli --cluster call)")
        if not int((await self.client.info("persistence")).get("aof_enabled", 0)):
            return False
        await self._rewritten()
        try:
            await self.client.bgrewriteaof()
        except StoreError:  # one was running already: wait for it, then ours
            await self._rewritten()
            await self.client.bgrewriteaof()
        await self._rewritten()
        return True

    async def _rewritten(self) -> None:
        while True:
            info = await self.client.info("persistence")
            if not int(info.get("aof_rewrite_in_progress", 0)) and not int(
                info.get("aof_rewrite_scheduled", 0)
            ):
                return
            await asyncio.sleep(0.05)

    async def purge(self, names: list[str]) -> int:
        try:  # one key at a time: on Cluster the keys of one user live in several slots
            return sum([int(await self.client.delete(name)) for name in names])
        finally:
            self._index_scripts.vectors.discard({namespace_base(n) for n in names if "{" in n and "}" in n})
