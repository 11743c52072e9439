"""What memory costs in Redis, per key family (`brain.keys.key_family`): keys and bytes (`MEMORY USAGE key
SAMPLES 0`, which reads every element) for one user or for the whole deployment (its key prefix), with the
fact queue's counters (`storage_report`). A full scan: for operators and audits, not hot paths."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from brain.backends.redis.backend import RedisBackend
from brain.backends.redis.queue_records import QueueCounters
from brain.keys import key_family
from brain.search.filters import text

__all__ = ["FamilyCost", "StorageReport", "storage_costs", "storage_report"]

_CHUNK = 500


class FamilyCost(BaseModel):
    """The keys of one family and the bytes they use."""

    model_config = ConfigDict(frozen=True)

    family: str
    keys: int
    bytes: int


class StorageReport(BaseModel):
    """What memory costs: per family (most bytes first) and in all, and the deployment's fact queue (its
    counters are the deployment's even in a user's report: the queue is shared)."""

    model_config = ConfigDict(frozen=True)

    families: tuple[FamilyCost, ...]
    keys: int
    bytes: int
    queue: QueueCounters


async def storage_report(backend: RedisBackend, user_id: str | bytes | None = None) -> StorageReport:
    """`storage_costs` with totals and the fact queue's counters."""
    costs = await storage_costs(backend, user_id)
    return StorageReport(
        families=tuple(costs),
        keys=sum(c.keys for c in costs),
        bytes=sum(c.bytes for c in costs),
        queue=await backend.queue.counters(),
    )


async def storage_costs(backend: RedisBackend, user_id: str | bytes | None = None) -> list[FamilyCost]:
    """Keys and bytes per family, most bytes first: of `user_id` (every key of theirs, as erasure finds
    them), or of every key under the backend's prefix."""
    if user_id is not None:
        names = await backend.user_leftovers(user_id)
    else:
        client = backend.client
        names = sorted({text(k) async for k in client.scan_iter(match=f"{backend.prefix}:*", count=1_000)})
    sizes = await _sizes(backend, names)
    costs: dict[str, list[int]] = {}
    for name, size in zip(names, sizes, strict=True):
        family = costs.setdefault(key_family(name), [0, 0])
        family[0] += 1
        family[1] += size
    return sorted(
        (FamilyCost(family=f, keys=k, bytes=b) for f, (k, b) in costs.items()),
        key=lambda c: (-c.bytes, c.family),
    )


async def _sizes(backend: RedisBackend, names: Sequence[str]) -> list[int]:
    sizes: list[int] = []
    for start in range(0, len(names), _CHUNK):
        pipe = backend.client.pipeline(transaction=False)
        for name in names[start : start + _CHUNK]:
            pipe.execute_command("MEMORY", "USAGE", name, "SAMPLES", "0")
        sizes += [int(size or 0) for size in await pipe.execute()]  # a key gone meanwhile: 0
    return sizes
