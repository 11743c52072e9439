"""An index written by an older analysis (brain-assistant up to 0.9) is rebuilt before it is used: old
postings gone, every document findable under the new analysis, once, whoever gets there first."""

from __future__ import annotations

import asyncio
import logging

import pytest
import redis.asyncio as aioredis

from brain.backends.redis import rebuild as rebuild_module
from brain.backends.redis.index import RedisIndexStore, layout_version
from brain.errors import StoreError
from brain.keys import recall_base
from brain.progress import PROGRESS_LOGGER, ProgressEvent
from brain.search.analyses import terms_v1
from brain.search.analysis import ANALYSIS, DATED
from brain.search.fields import DATE_WEIGHT, role_term
from brain.search.index import IndexedDoc
from brain.search.storage import DocumentIndex
from tests.support.stores import redis_index

OLD = [
    IndexedDoc(id="t1", text="Ann: 我喜欢喝咖啡，住在北京", ts=1_644_253_200, tags=("user",)),
    IndexedDoc(id="t2", text="Bot: the café opens in May", ts=1_644_253_260, tags=("assistant",)),
    IndexedDoc(id="t3", text="Ann: we watched movies", ts=1_644_253_320, tags=("user",)),
]


async def write_v1(client: aioredis.Redis, base: str) -> set[str]:
    """The layout version 0.9 wrote (no analysis recorded); returns its posting keys."""
    keys = set()
    total = 0
    for doc in OLD:
        counts = terms_v1(doc.text)
        total += sum(counts.values())
        await client.hset(f"{base}:docs", doc.id, doc.model_dump_json())
        await client.hset(f"{base}:len", doc.id, sum(counts.values()))
        await client.zadd(f"{base}:time", {doc.id: doc.ts})
        for term, tf in counts.items():
            await client.zadd(f"{base}:post:{term}", {doc.id: tf})
            keys.add(f"{base}:post:{term}")
        for tag in doc.tags:
            await client.sadd(f"{base}:tag:{tag}", doc.id)
    await client.hset(f"{base}:stats", mapping={"n": len(OLD), "total": total})
    return keys


async def test_an_old_index_is_rebuilt_on_first_use(redis_client: aioredis.Redis) -> None:
    base = recall_base("brain", "ann", "old-chat")
    old_keys = await write_v1(redis_client, base)
    assert f"{base}:post:我喜欢喝咖啡" in old_keys  # one term per clause: what analysis 1 did to Chinese
    index = redis_index(redis_client, base, dated=True)
    hits, total = await index.search("咖啡")
    assert [h.doc.id for h in hits] == ["t1"] and total == 1
    assert await redis_client.hget(f"{base}:stats", "v") == layout_version(index.analysis).encode()
    assert not await redis_client.exists(f"{base}:post:我喜欢喝咖啡") and not await redis_client.exists(
        f"{base}:len"
    )
    hits, _ = await index.search("cafe May 2022", tags=["assistant"])
    assert [h.doc.id for h in hits] == ["t2"]
    hits, _ = await index.search("movie on 7 February 2022")
    assert hits[0].doc.id == "t3"  # dated now, and stemmed by Snowball
    assert await index.delete("t3") and await index.count() == 2
    assert await index.rebuild() == 0  # already current
    assert await index.drop() == 2
    assert await redis_client.keys(f"{base}*") == []


async def test_processes_racing_to_rebuild_do_it_once(redis_client: aioredis.Redis) -> None:
    base = recall_base("brain", "ann", "raced")
    await write_v1(redis_client, base)
    indexes = [redis_index(redis_client, base, dated=True) for _ in range(4)]
    results = await asyncio.gather(*(i.rebuild() for i in indexes))
    assert sorted(results) == [0, 0, 0, 3]
    searches = await asyncio.gather(*(i.search("咖啡") for i in indexes))
    assert all([h.doc.id for h in hits] == ["t1"] for hits, _ in searches)
    assert int(await redis_client.hget(f"{base}:stats", "n") or 0) == 3


async def test_an_index_from_a_newer_version_is_left_alone(redis_client: aioredis.Redis) -> None:
    base = recall_base("brain", "ann", "newer")
    index = redis_index(redis_client, base, dated=True)
    await index.add(OLD[0])
    await redis_client.hset(f"{base}:stats", "v", "99")
    with pytest.raises(StoreError, match="does not know"):
        await index.search("咖啡")
    assert await redis_client.hget(f"{base}:stats", "v") == b"99"


async def test_a_rebuild_on_first_use_logs_its_counts(
    redis_client: aioredis.Redis, caplog: pytest.LogCaptureFixture
) -> None:
    base = recall_base("brain", "ann", "logged")
    await write_v1(redis_client, base)
    index = redis_index(redis_client, base, dated=True)
    caplog.set_level(logging.INFO, logger=PROGRESS_LOGGER)
    hits, _ = await index.search("咖啡")  # nobody asked for progress: the library logs it
    assert [h.doc.id for h in hits] == ["t1"]
    messages = [r.getMessage() for r in caplog.records if r.name == PROGRESS_LOGGER]
    task = f"re-analysing {base} (1 -> {index.analysis})"
    assert messages[0] == f"{task}: 0/3 documents (0%)"
    assert messages[-1].startswith(f"{task}: 3/3 documents done in ") and len(messages) == 2
    assert all(r.levelno == logging.INFO for r in caplog.records if r.name == PROGRESS_LOGGER)


async def test_an_asked_rebuild_tells_its_progress_chunk_by_chunk(
    redis_client: aioredis.Redis, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    base = recall_base("brain", "ann", "told")
    await write_v1(redis_client, base)
    monkeypatch.setattr(rebuild_module, "CHUNK", 2)
    index = redis_index(redis_client, base, dated=True)
    seen: list[ProgressEvent] = []
    caplog.set_level(logging.INFO, logger=PROGRESS_LOGGER)
    assert await index.rebuild(progress=seen.append) == 3
    assert [(e.done, e.total, e.unit) for e in seen] == [
        (0, 3, "documents"),
        (2, 3, "documents"),
        (3, 3, "documents"),
    ]
    assert seen[0].task == f"re-analysing {base} (1 -> {index.analysis})"
    assert not [r for r in caplog.records if r.name == PROGRESS_LOGGER]  # told, not logged
    seen.clear()
    assert await index.rebuild(progress=seen.append) == 0 and seen == []  # current: nothing to tell


async def test_an_index_of_analysis_2_is_rebuilt_with_characters(
    redis_client: aioredis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Analysis "2" had jieba's words only: 猫 could not find 猫咪. Rebuilt, it can, and nothing is left of
    the old postings but what the new analysis also has."""
    base = recall_base("brain", "ann", "v2")
    docs = [
        IndexedDoc(id="t1", text="Ann: 我家的猫咪很可爱", ts=1_644_253_200),
        IndexedDoc(id="t2", text="Bob: 我喜欢喝绿茶", ts=1_644_253_260),
    ]
    with monkeypatch.context() as patch:
        patch.setattr(DocumentIndex, "analysis", property(lambda _: "2d"))  # as version 0.2 named it
        old = redis_index(redis_client, base, dated=True)
        await old.add_many(docs)
        assert old.analysis == "2d" and (await old.search("猫"))[1] == 0
    assert await redis_client.hget(f"{base}:stats", "v") == b"2d/p4"
    index = redis_index(redis_client, base, dated=True)
    hits, total = await index.search("猫")
    assert [h.doc.id for h in hits] == ["t1"] and total == 1
    assert await redis_client.hget(f"{base}:stats", "v") == f"{ANALYSIS}w/p4".encode()
    assert isinstance(index.store, RedisIndexStore) and (await index.store.postings("茶"))["t2"] == 1
    assert [h.doc.id for h in (await index.search("绿茶"))[0]] == ["t2"]
    assert await index.drop() == 2 and await redis_client.keys(f"{base}*") == []


async def test_an_index_of_analysis_3_is_rebuilt_with_irregular_verbs(
    redis_client: aioredis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Analysis "3" kept "bought" apart from "buy"; rebuilt under the current one, a question in the
    present finds the turn told in the past, and the turn telling a time carries `DATED`."""
    base = recall_base("brain", "ann", "v3")
    docs = [
        IndexedDoc(id="t1", text="Ann: I bought a kayak yesterday", ts=1_644_253_200),
        IndexedDoc(id="t2", text="Bob: I buy bread", ts=1_644_253_260),
    ]
    with monkeypatch.context() as patch:
        patch.setattr(DocumentIndex, "analysis", property(lambda _: "3d"))
        old = redis_index(redis_client, base, dated=True)
        await old.add_many(docs)
        assert [h.doc.id for h in (await old.search("buy"))[0]] == ["t2"]
    index = redis_index(redis_client, base, dated=True)
    hits, _ = await index.search("Did Ann buy a kayak?")
    assert [h.doc.id for h in hits] == ["t1", "t2"]
    assert await redis_client.hget(f"{base}:stats", "v") == f"{ANALYSIS}w/p4".encode()
    assert isinstance(index.store, RedisIndexStore) and set(await index.store.postings(DATED)) == {"t1"}
    assert await index.drop() == 2 and await redis_client.keys(f"{base}*") == []


async def test_a_recall_index_of_analysis_4d_is_rebuilt_with_fields(
    redis_client: aioredis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Analysis "4d" had the day heading the text; rebuilt as an index of turns, the day's words count
    `DATE_WEIGHT` times, each turn has its role's term, and a question in the first person prefers the
    user's turn where the words alone tie."""
    base = recall_base("brain", "ann", "v4")
    docs = [
        IndexedDoc(id="t1", text="Assistant: tulips by the fence", tags=("assistant",), ts=1_644_253_200),
        IndexedDoc(id="t2", text="Ann: tulips by the fence", tags=("user",), ts=1_644_253_260),
    ]
    with monkeypatch.context() as patch:
        patch.setattr(DocumentIndex, "analysis", property(lambda _: "4d"))
        old = redis_index(redis_client, base, dated=True, turns=True)
        await old.add_many(docs)
        assert [h.doc.id for h in (await old.search("What did I plant by the fence?"))[0]] == ["t1", "t2"]
    index = redis_index(redis_client, base, dated=True, turns=True)
    assert index.analysis == f"{ANALYSIS}wt"
    hits, _ = await index.search("What did I plant by the fence?")
    assert [h.doc.id for h in hits] == ["t2", "t1"]
    assert await redis_client.hget(f"{base}:stats", "v") == f"{ANALYSIS}wt/p4".encode()
    assert isinstance(index.store, RedisIndexStore)
    assert await index.store.postings("2022") == {"t1": DATE_WEIGHT, "t2": DATE_WEIGHT}
    assert await index.store.postings(role_term("user")) == {"t2": 1}
    assert await index.store.postings("ann") == {"t2": 1}
    assert await index.drop() == 2 and await redis_client.keys(f"{base}*") == []
