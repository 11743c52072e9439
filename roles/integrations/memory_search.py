"""The memory search the adapters share: a user's archival memory, hybrid when an embedding model is
configured (lexical otherwise), as plain hits."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from brain.errors import ConfigError
from brain.memory.tiers import Tiers
from brain.runtime import Runtime
from brain.search.index import Hit

__all__ = ["MemoryHit", "search_archival", "tiers_of"]


class MemoryHit(BaseModel):
    """One passage found: its id, text, score, time (seconds since the epoch) and metadata."""

    model_config = ConfigDict(frozen=True)

    id: str
    text: str
    score: float
    ts: float
    metadata: dict[str, object] = {}


def tiers_of(runtime: Runtime) -> Tiers:
    """The runtime's memory tiers; `ConfigError` for a runtime without a Redis backend."""
    if runtime.tiers is None:
        raise ConfigError("this adapter needs memory in Redis: open the runtime with a backend")
    return runtime.tiers


def _hit(hit: Hit) -> MemoryHit:
    doc = hit.doc
    return MemoryHit(id=doc.id, text=doc.text, score=hit.score, ts=doc.ts, metadata=dict(doc.metadata))


async def search_archival(tiers: Tiers, user_id: str | bytes, query: str, limit: int) -> list[MemoryHit]:
    """The best `limit` passages of `user_id`'s archival memory for `query`, best first (brought back from
    the cold archive first). `InputError` for a query with nothing to search for; `StoreError` when the
    store cannot answer."""
    await tiers.present(user_id)
    vector = await tiers.vector(query)
    hits, _ = await tiers.archival(user_id).search(query, limit=limit, vector=vector)
    return [_hit(h) for h in hits]
