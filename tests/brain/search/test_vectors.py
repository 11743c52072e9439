"""Vector search from per-process snapshots: exact (the same top 10 as a brute-force scan), in step with
writes made through another process's snapshots, filtered by tags and dates."""

from __future__ import annotations

import numpy as np
import redis.asyncio as aioredis

from brain.keys import archival_base
from brain.search.index import IndexedDoc
from brain.search.vectors import Snapshot
from tests.support.stores import redis_index


def test_snapshot_nearest_is_exact() -> None:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(3_000, 32)).astype(np.float32)
    snap = Snapshot().extended([(f"d{i}", v.tobytes()) for i, v in enumerate(vectors)], 3_000)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    for query in rng.normal(size=(20, 32)):
        expected = np.argsort(-(unit @ (query / np.linalg.norm(query))))[:10]
        assert [i for i, _ in snap.nearest(query.tolist(), 10)] == [f"d{j}" for j in expected]
    allowed = {f"d{i}" for i in range(0, 3_000, 3)}
    assert all(i in allowed for i, _ in snap.nearest(vectors[1].tolist(), 10, allowed))
    assert snap.nearest([1.0, 2.0], 10) == []  # another dimension: nothing comparable


async def test_two_processes_see_each_others_writes(redis_client: aioredis.Redis) -> None:
    base = archival_base("brain", "vec-shared")
    one = redis_index(redis_client, base)
    two = redis_index(redis_client, base)  # its own snapshots
    await one.add_many(
        [IndexedDoc(id="a", text="alpha", ts=100, tags=("x",)), IndexedDoc(id="b", text="beta", ts=200)],
        [[1.0, 0.0], [0.0, 1.0]],
    )
    assert [h.doc.id for h in await two.vector_search([1.0, 0.1])] == ["a", "b"]
    await one.add(IndexedDoc(id="c", text="gamma", ts=300), [0.9, 0.1])  # fetched by sequence, not reloaded
    assert [h.doc.id for h in await two.vector_search([1.0, 0.1], limit=2)] == ["c", "a"]
    assert await one.delete("c")
    assert [h.doc.id for h in await two.vector_search([1.0, 0.1])] == ["a", "b"]  # a removal reloads
    assert [h.doc.id for h in await two.vector_search([1.0, 0.1], tags=["x"])] == ["a"]
    assert [h.doc.id for h in await two.vector_search([1.0, 0.1], start=150, end=250)] == ["b"]
    await two.drop()
    assert await one.vector_search([1.0, 0.0]) == []


async def test_a_namespace_dropped_and_written_again_is_not_served_from_an_old_snapshot(
    redis_client: aioredis.Redis,
) -> None:
    base = archival_base("brain", "vec-again")
    index = redis_index(redis_client, base)
    docs = [IndexedDoc(id="a", text="alpha", ts=100), IndexedDoc(id="b", text="beta", ts=200)]
    await index.add_many(docs, [[1.0, 0.0], [0.0, 1.0]])
    assert [h.doc.id for h in await index.vector_search([1.0, 0.0])] == ["a", "b"]  # now a snapshot
    await index.drop()  # erased: the counters start again from nothing
    await index.add_many(docs, [[0.0, 1.0], [1.0, 0.0]])  # as many vectors as before, the other way round
    assert [h.doc.id for h in await index.vector_search([1.0, 0.0])] == ["b", "a"]


async def test_vectors_written_before_the_sequence_existed_are_found(redis_client: aioredis.Redis) -> None:
    base = archival_base("brain", "vec-old")
    index = redis_index(redis_client, base)
    await index.add(IndexedDoc(id="old", text="old", ts=1), [0.0, 1.0])
    await redis_client.delete(f"{base}:vseq")  # as 0.9 left it: vectors without a sequence
    await redis_client.hdel(f"{base}:stats", "vseq")
    fresh = redis_index(redis_client, base)
    assert [h.doc.id for h in await fresh.vector_search([0.0, 1.0])] == ["old"]
    await index.add(IndexedDoc(id="new", text="new", ts=2), [0.1, 1.0])
    assert [h.doc.id for h in await fresh.vector_search([0.1, 1.0])] == ["new", "old"]
