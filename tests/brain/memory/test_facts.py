"""Fact memory on real Redis and Valkey: dedupe by content, supersede instead of delete, audit, rollback."""

from __future__ import annotations

import time

import pytest
import redis.asyncio as aioredis

from brain.errors import ConflictError, InputError
from brain.memory.facts import Fact, fact_hash
from tests.support.stores import redis_tiers


def test_hash_ignores_case_spacing_and_end_punctuation() -> None:
    assert fact_hash("Loves  Chinese food.") == fact_hash("loves chinese food")
    assert fact_hash("喜欢中国菜。") == fact_hash("喜欢中国菜")
    assert fact_hash("Loves Chinese food") != fact_hash("Hates Chinese food")


async def test_exact_duplicates_are_stored_once(redis_client: aioredis.Redis) -> None:
    store = redis_tiers(redis_client).facts
    first, new = await store.add("ann", Fact(text="Is vegetarian", source_turns=("t1",)))
    again, new_again = await store.add("ann", Fact(text="is vegetarian.", source_turns=("t9",)))
    assert new and not new_again and again.id == first.id
    assert [f.text for f in await store.all("ann")] == ["Is vegetarian"]
    assert len(await store.history("ann")) == 1  # no change, no event


async def test_update_supersedes_and_keeps_the_old_fact(redis_client: aioredis.Redis) -> None:
    store = redis_tiers(redis_client).facts
    old, _ = await store.add("ann", Fact(text="I love Chinese food", category="preferences"))
    new, _ = await store.add("ann", Fact(text="I hate Chinese food", category="preferences"), replaces=old.id)
    current = await store.all("ann")
    assert [f.text for f in current] == ["I hate Chinese food"]
    retired = await store.get("ann", old.id)
    assert retired is not None and not retired.current and retired.superseded_by == new.id
    assert (
        retired.invalid_at is not None
        and retired.true_at(old.created_at)
        and not retired.true_at(time.time())
    )
    assert [f.text for f in await store.search("ann", "Chinese food")] == ["I hate Chinese food"]
    as_before = await store.search("ann", "Chinese food", as_of=old.created_at)
    assert [f.text for f in as_before] == ["I love Chinese food"]
    events = await store.history("ann", old.id)
    assert [(e.event, e.old_text, e.new_text) for e in events] == [
        ("ADD", "", "I love Chinese food"),
        ("UPDATE", "I love Chinese food", "I hate Chinese food"),
    ]


async def test_rollback_restores_and_is_audited(redis_client: aioredis.Redis) -> None:
    store = redis_tiers(redis_client).facts
    old, _ = await store.add("bo", Fact(text="Lives in Oslo"))
    new, _ = await store.add("bo", Fact(text="Lives in Bergen"), replaces=old.id, actor="extractor")
    update = (await store.history("bo", new.id))[-1]
    undone = await store.rollback("bo", update.id, actor="admin")
    assert [e.undoes for e in undone] == [update.id, update.id]
    assert [f.text for f in await store.all("bo")] == ["Lives in Oslo"]
    with pytest.raises(ConflictError):
        await store.rollback("bo", undone[0].id)
    assert await store.retire("bo", old.id, reason="moved away") and not await store.retire("bo", old.id)
    deleted = (await store.history("bo", old.id))[-1]
    assert deleted.event == "DELETE" and deleted.reason == "moved away"
    await store.rollback("bo", deleted.id)
    assert [f.text for f in await store.all("bo")] == ["Lives in Oslo"]
    assert len(await store.all("bo", current_only=False)) == 2  # nothing was ever hard-deleted


async def test_unknown_ids_and_tenants(redis_client: aioredis.Redis) -> None:
    store = redis_tiers(redis_client).facts
    with pytest.raises(InputError):
        await store.retire("ann", "no-such-id")
    with pytest.raises(InputError):
        await store.add("ann", Fact(text="x"), replaces="no-such-id")
    await store.add("ann", Fact(text="Ann's bank is Nordea"))
    assert await store.search("ann:x", "bank") == [] and await store.all("ann:x") == []
