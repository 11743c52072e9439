"""Stores over a test's Redis client: the tiers, one index namespace, a backend."""

from __future__ import annotations

from typing import Any

from brain.backends.redis import RedisBackend, RedisClient
from brain.memory.tiers import Tiers
from brain.search.index import SearchIndex

__all__ = ["redis_index", "redis_tiers"]


def redis_tiers(client: RedisClient, *, prefix: str = "brain", **options: Any) -> Tiers:
    """The memory tiers over `client` (facts, graph, core blocks, procedures, indexes)."""
    return Tiers(RedisBackend(client, prefix=prefix), **options)


def redis_index(client: RedisClient, base: str, **options: Any) -> SearchIndex:
    """The search index of namespace `base` over `client`, with its own scripts and vector snapshots (as
    another process would have)."""
    return SearchIndex(RedisBackend(client).index(base), **options)
