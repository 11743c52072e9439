"""Fact records cost what they should (issue 30): a batch's turn ids stored once and named by reference,
no default fields, audit texts marked instead of repeated; what older versions wrote reads the same, and an
erasure takes the sources nothing names any more."""

from __future__ import annotations

import json
import random
import uuid

import pytest
import redis.asyncio as aioredis

from brain.backends.redis import RedisBackend
from brain.backends.redis.fact_records import decode_sources, encode_sources
from brain.keys import facts_base
from brain.memory.facts import Fact
from brain.memory.tiers import Tiers
from brain.storage.facts import AuditEntry

WORDS = (
    "user lives works likes drinks coffee tea Lyon Oslo nurse teacher every morning near the river".split()
)


def test_sources_are_packed_when_hex_and_content_addressed() -> None:
    ids = tuple(uuid.uuid4().hex for _ in range(20))
    ref, value = encode_sources(ids)
    assert len(ref) == 12 and len(value) == 1 + 16 * 20 and decode_sources(value) == ids
    assert encode_sources(list(ids))[0] == ref and encode_sources(ids[:19])[0] != ref
    mixed = ("t1", ids[0], "中文")
    assert decode_sources(encode_sources(mixed)[1]) == mixed


async def test_old_records_read_the_same_and_merge_and_erase(redis_client: aioredis.Redis) -> None:
    """A fact, its merged provenance and its audit event as the previous version wrote them, raw."""
    backend = RedisBackend(redis_client, prefix="o")
    store, base = backend.facts, facts_base("o", "ann")
    old = Fact(
        text="Ann lives in Lyon", category="place", source_turns=("t1", "t2"), hash="h1", key="ann.city"
    )
    await redis_client.hset(f"{base}:facts", old.id, old.model_dump_json())
    await redis_client.hset(f"{base}:hash", "h1", old.id)
    await redis_client.hset(f"{base}:prov", old.id, json.dumps(["t3"]))
    await redis_client.xadd(
        f"{base}:audit",
        {"fact_id": old.id, "old_text": "", "event": "ADD", "actor": "w", "source_turns": '["t1", "t2"]',
         "new_text": old.text},
    )  # fmt: skip
    expected = old.model_copy(update={"source_turns": ("t1", "t2", "t3")})
    assert await store.all("ann") == [expected] and await store.get_many("ann", [old.id]) == [expected]
    [event] = await store.history("ann")
    assert (event.event, event.fact_id, event.new_text, event.old_text, event.source_turns) == (
        "ADD", old.id, old.text, "", ("t1", "t2")
    )  # fmt: skip
    batch = tuple(uuid.uuid4().hex for _ in range(3))
    merge = AuditEntry(event="MERGE", actor="w", source_turns=("t2", *batch), new_text="Ann is in Lyon")
    assert await store.merge("ann", old.id, "h2", merge)
    [merged] = await store.get_many("ann", [old.id])
    assert merged.source_turns == ("t1", "t2", "t3", *batch)
    assert (await store.history("ann"))[-1].source_turns == ("t2", *batch)
    assert await store.erase("ann", [old.id]) == 1
    assert await store.history("ann") == [] and await redis_client.exists(f"{base}:src", f"{base}:prov") == 0


async def test_a_batch_is_stored_once_and_its_events_read_in_full(redis_client: aioredis.Redis) -> None:
    tiers = Tiers(RedisBackend(redis_client, prefix="n"))
    base = facts_base("n", "bo")
    source = tuple(uuid.uuid4().hex for _ in range(20))
    one, _ = await tiers.facts.add("bo", Fact(text="Bo drinks tea", source_turns=source), actor="w")
    two, _ = await tiers.facts.add("bo", Fact(text="Bo lives in Oslo", source_turns=source), actor="w")
    three, _ = await tiers.facts.add(
        "bo", Fact(text="Bo lives in Bergen", source_turns=source), actor="w", replaces=two.id
    )
    assert await redis_client.hlen(f"{base}:src") == 1
    record = json.loads(await redis_client.hget(f"{base}:facts", b"\x01" + bytes.fromhex(one.id)))
    assert set(record) == {"t", "a", "h", "s"} and record["t"] == "Bo drinks tea"
    events = await tiers.facts.history("bo")
    assert [(e.event, e.new_text, e.old_text, e.old_fact_id, e.source_turns) for e in events] == [
        ("ADD", "Bo drinks tea", "", "", source),
        ("ADD", "Bo lives in Oslo", "", "", source),
        ("UPDATE", "Bo lives in Bergen", "Bo lives in Oslo", two.id, source),
    ]
    raw = (await redis_client.xrange(f"{base}:audit"))[-1][1]
    assert b"new_text" not in raw and b"old_text" not in raw and b"source_turns" not in raw
    await tiers.facts.rollback("bo", events[-1].id, actor="me")
    assert [(e.event, e.new_text, e.old_text) for e in (await tiers.facts.history("bo"))[-2:]] == [
        ("ROLLBACK", "", "Bo lives in Bergen"),
        ("ROLLBACK", "Bo lives in Oslo", ""),
    ]
    assert [f.source_turns for f in await tiers.facts.all("bo", current_only=False)] == [source] * 3
    await tiers.facts.erase("bo", [one.id, two.id])
    assert await redis_client.hlen(f"{base}:src") == 1  # the third fact still names it
    await tiers.facts.erase("bo", [three.id])
    assert await redis_client.exists(f"{base}:src") == 0


@pytest.mark.parametrize("per_batch", [1, 3])
async def test_a_fact_with_its_audit_event_costs_at_most_a_kilobyte(
    redis_client: aioredis.Redis, per_batch: int
) -> None:
    """~130 bytes of text, extracted from a batch of 20 turns: the fact's record, its share of the batch's
    source and its audit event (its search entry aside: the index's own)."""
    tiers = Tiers(RedisBackend(redis_client, prefix="b"))
    rng = random.Random(1)
    count = 0
    for batch in range(60 // per_batch):
        source = tuple(uuid.uuid4().hex for _ in range(20))
        for n in range(per_batch):
            words = " ".join(rng.choice(WORDS) for _ in range(40))[:125]
            fact = Fact(text=words, category="personal", key=f"user.k{batch}_{n}", value=words[:20],
                        valid_at=1.7e9 + batch, source_turns=source)  # fmt: skip
            count += (await tiers.facts.add("u", fact, actor="worker", reason="batch"))[1]
    base = facts_base("b", "u")
    own = ("facts", "state", "hash", "gen", "src", "prov", "audit")
    total = sum([await redis_client.memory_usage(f"{base}:{part}", samples=0) or 0 for part in own])
    assert count == 60 and total / count <= (1_000 if per_batch == 1 else 750), total / count
