"""Fact memory's ids packed in Redis (issue 30): record fields, the content-hash index, audit `fact_id`s and
batches 16 bytes an id instead of 32 hex digits, records under one-letter names; what the previous version
wrote (hex everywhere, full names, JSON batches) reads, changes and erases the same."""

from __future__ import annotations

import json
import uuid

import redis.asyncio as aioredis

from brain.backends.redis import RedisBackend
from brain.backends.redis.fact_packing import id_fields, pack_id, pack_ids, pick, unpack_id, unpack_ids
from brain.keys import facts_base
from brain.memory.facts import Fact, fact_hash
from brain.memory.tiers import Tiers
from brain.storage.facts import AuditEntry


def test_hex_ids_pack_to_17_bytes_and_others_stay() -> None:
    hex_id = uuid.uuid4().hex
    assert pack_id(hex_id) == b"\x01" + bytes.fromhex(hex_id) and unpack_id(pack_id(hex_id)) == hex_id
    for other in ("f1", hex_id.upper(), "中文", hex_id[:31]):
        assert pack_id(other) == other.encode() and unpack_id(pack_id(other)) == other
    assert unpack_id(hex_id.encode()) == hex_id  # an older entry
    assert id_fields([hex_id, "f1"]) == [pack_id(hex_id), hex_id.encode(), b"f1", b"f1"]
    assert pick([None, b"old", b"new", b"older", None, None]) == [b"old", b"new", None]


def test_batches_pack_when_every_id_is_hex() -> None:
    ids = [uuid.uuid4().hex for _ in range(3)]
    assert len(pack_ids(ids)) == 1 + 16 * 3 and unpack_ids(pack_ids(ids)) == ids
    assert unpack_ids(pack_ids([])) == [] and unpack_ids(pack_ids(["f1", ids[0]])) == ["f1", ids[0]]
    assert unpack_ids(json.dumps(ids).encode()) == ids  # an older record


async def test_new_records_are_packed(redis_client: aioredis.Redis) -> None:
    tiers = Tiers(RedisBackend(redis_client, prefix="p"))
    base = facts_base("p", "cy")
    fact, _ = await tiers.facts.add("cy", Fact(text="Cy rows", category="hobby", key="cy.sport"), actor="w")
    record = json.loads(await redis_client.hget(f"{base}:facts", pack_id(fact.id)))
    assert record == {"t": "Cy rows", "c": "hobby", "a": fact.created_at, "h": fact.hash, "k": "cy.sport"}
    assert await redis_client.hgetall(f"{base}:hash") == {pack_id(fact.hash): pack_id(fact.id)}
    [(_, event)] = await redis_client.xrange(f"{base}:audit")
    assert event[b"fact_id"] == pack_id(fact.id)
    await tiers.facts.set_batch_facts("cy", fact_hash("turns"), [fact.id])
    assert await redis_client.hgetall(f"{base}:batches") == {pack_id(fact_hash("turns")): pack_ids([fact.id])}
    assert await tiers.facts.batch_facts("cy", fact_hash("turns")) == [fact.id]


async def test_hex_records_of_the_last_version_read_change_and_erase(redis_client: aioredis.Redis) -> None:
    """A fact, its hash entry, its audit event and a batch, raw as the previous version wrote them (hex)."""
    backend = RedisBackend(redis_client, prefix="o")
    tiers, base = Tiers(backend), facts_base("o", "di")
    old = Fact(text="Di lives in Rome", category="place", hash=fact_hash("Di lives in Rome"), key="di.city")
    record = old.model_dump(mode="json", exclude_defaults=True, exclude={"id", "source_turns"})
    record["hash"] = old.hash
    await redis_client.hset(f"{base}:facts", old.id, json.dumps(record))
    await redis_client.hset(f"{base}:hash", old.hash, old.id)
    await redis_client.hset(f"{base}:batches", fact_hash("turns"), json.dumps([old.id]))
    await redis_client.xadd(f"{base}:audit", {"fact_id": old.id, "event": "ADD", "actor": "w", "new_is": "f"})
    store = backend.facts
    assert await store.all("di") == [old] and await store.get_many("di", [old.id]) == [old]
    assert await store.by_hash("di", [old.hash]) == {old.hash: old.id}
    assert await store.batch_facts("di", fact_hash("turns")) == [old.id]
    [event] = await store.history("di")
    assert (event.fact_id, event.new_text) == (old.id, old.text)
    again, new = await tiers.facts.add("di", Fact(text="Di lives in Rome."), actor="w")
    assert (again.id, new) == (old.id, False)  # the hex hash entry still finds it
    assert await store.retire("di", old.id, 1.0, AuditEntry(event="DELETE", actor="me"))
    assert await redis_client.hlen(f"{base}:hash") == 0 and await store.by_hash("di", [old.hash]) == {}
    assert await store.restore("di", old.id, AuditEntry(event="ROLLBACK", actor="me")) == 1
    assert await redis_client.hgetall(f"{base}:hash") == {pack_id(old.hash): pack_id(old.id)}
    assert [e.fact_id for e in await store.history("di")] == [old.id] * 3
    assert await store.erase("di", [old.id]) == 1
    assert await store.all("di") == [] and await store.history("di") == []
    assert await redis_client.exists(f"{base}:facts", f"{base}:hash") == 0
