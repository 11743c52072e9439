"""The packed index (varint postings, ids packed by bucket) answers exactly as the in-memory index does
through a long random life of adds and deletes: uuid and other ids, term frequencies over 1 and capped,
tags, times, per-term limits, pages."""

from __future__ import annotations

import random
import uuid

import redis.asyncio as aioredis

from brain.backends.memory import MemoryBackend
from brain.backends.redis import RedisBackend
from brain.backends.redis.index import RedisIndexStore, unpack_postings
from brain.keys import archival_base
from brain.storage.index import IndexedDoc, IndexEntry, IndexStore

VERSION = "packed-test"
WORDS = [f"w{i}" for i in range(40)]


def _entry(rng: random.Random, doc_id: str, n: int) -> IndexEntry:
    counts: dict[str, int] = {}
    for word in rng.sample(WORDS, rng.randint(1, 8)):
        counts[word] = rng.choice([1, 1, 1, 2, 3, 300])
    tags = tuple(rng.sample(["user", "assistant", "=user.city"], rng.randint(0, 2)))
    doc = IndexedDoc(id=doc_id, text="x", tags=tags, ts=1_000.0 + n)
    return IndexEntry(doc=doc, counts=counts)


async def _rank(store: IndexStore, terms: dict[str, float], **options: object) -> object:
    given = {"tags": (), "start": None, "end": None, "offset": 0, "limit": 15, "analysis": VERSION}
    return await store.rank(terms, **(given | {"per_term": 1_000, "k1": 1.2, "b": 0.75} | options))  # type: ignore[arg-type]


async def test_packed_index_answers_as_the_memory_index(redis_client: aioredis.Redis) -> None:
    rng = random.Random(30)
    base = archival_base("packed", "ann")
    redis_store = RedisBackend(redis_client, prefix="packed").index(base)
    memory_store = MemoryBackend(prefix="packed").index(base)
    live: list[str] = []
    for n in range(600):
        if live and rng.random() < 0.3:
            doc_id = live.pop(rng.randrange(len(live)))
            [doc] = await redis_store.docs([doc_id])
            terms = [t for t in WORDS if doc_id in (await redis_store.postings(t))]
            for store in (redis_store, memory_store):
                assert await store.delete(doc_id, terms, doc.tags, VERSION) == 1
            continue
        doc_id = uuid.UUID(int=rng.getrandbits(128)).hex if rng.random() < 0.7 else f"note {n} ü"
        entry = _entry(rng, doc_id, n)
        assert await redis_store.add([entry], VERSION) == await memory_store.add([entry], VERSION) == [1]
        assert await redis_store.add([entry], VERSION) == [0]  # the id is there: nothing changes
        live.append(doc_id)
    assert sorted(d.id for d in await redis_store.all_docs()) == sorted(live)
    asked = [*live[:5], "missing"]
    assert await redis_store.docs(asked) == await memory_store.docs(asked)
    for _ in range(60):
        terms = {w: rng.choice([1.0, 0.5, 2.0]) for w in rng.sample(WORDS, rng.randint(1, 4))}
        options: dict[str, object] = {
            "per_term": rng.choice([1_000, 5, 1, 0, -3]),
            "offset": rng.choice([0, 0, 3]),
            "tags": rng.choice([(), ("user",), ("assistant", "=user.city")]),
            "start": rng.choice([None, 1_100.0]),
            "end": rng.choice([None, 1_400.0]),
        }
        assert await _rank(redis_store, terms, **options) == await _rank(memory_store, terms, **options)
    for tags, start in [(["user"], None), ([], 1_200.0), (["=user.city"], 1_050.0)]:
        assert await redis_store.allowed(tags, start, None) == await memory_store.allowed(tags, start, None)
    assert await redis_store.by_time(1_100.0, 1_500.0) == await memory_store.by_time(1_100.0, 1_500.0)


async def test_postings_cost_bytes_not_members(redis_client: aioredis.Redis) -> None:
    """A term in every one of 2,000 documents costs about a byte per document; ids of uuids 20 bytes."""
    store = RedisBackend(redis_client, prefix="bytes").index(archival_base("bytes", "ann"))
    assert isinstance(store, RedisIndexStore)
    entries = [
        IndexEntry(doc=IndexedDoc(id=uuid.uuid4().hex, text="tea", ts=float(i)), counts={"tea": 1 + i % 2})
        for i in range(2_000)
    ]
    await store.add(entries, VERSION)
    packed = await redis_client.hget(f"{store.base}:post", "tea")
    assert packed is not None and len(packed) <= 8 + 2_000 * 2  # a gap of 1, and the tf when it is 2
    assert [tf for _, tf in unpack_postings(packed)][:4] == [1, 2, 1, 2]
    ids = await redis_client.hgetall(f"{store.base}:num")
    assert len(ids) <= 256 and sum(len(v) for v in ids.values()) == 2_000 * 20
    assert all(field[:1] == b"\xff" and len(field) == 3 for field in ids)  # no UTF-8 id is a bucket
