"""Each user's fact audit stream is capped (`memory.facts.audit_max_events`, XADD MAXLEN ~ in the write's
own script): it stops growing, and a rollback of a change whose event was trimmed says so. Real Redis and
Valkey."""

from __future__ import annotations

import pytest
import redis.asyncio as aioredis

from brain.backends.redis import RedisBackend
from brain.errors import InputError, NotFoundError
from brain.keys import facts_base
from brain.memory.facts import AuditEvent, Fact, trimmed_event
from brain.memory.tiers import Tiers

NODE = 100  # stream-node-max-entries by default: MAXLEN ~ trims whole nodes


async def test_the_audit_stream_stops_growing_and_a_trimmed_event_cannot_be_rolled_back(
    redis_client: aioredis.Redis,
) -> None:
    tiers = Tiers(RedisBackend(redis_client, prefix="ac", audit_max_events=NODE))
    await tiers.facts.add("ann", Fact(text="Ann's fact number 0"))
    [first] = await tiers.facts.history("ann")
    for n in range(1, 3 * NODE + 50):
        await tiers.facts.add("ann", Fact(text=f"Ann's fact number {n}"))
    await tiers.facts.add("bob", Fact(text="Bob keeps his own trail"))
    kept = await redis_client.xlen(f"{facts_base('ac', 'ann')}:audit")
    assert NODE <= kept < 2 * NODE  # without the cap: 350
    assert len(await tiers.facts.all("ann")) == 3 * NODE + 50  # the facts stay, only events go
    with pytest.raises(InputError, match="trimmed, and a change whose event was trimmed cannot be rolled"):
        await tiers.facts.rollback("ann", first.id)
    with pytest.raises(NotFoundError, match="older than every event the audit trail keeps"):
        await tiers.rollback("ann", first.id)
    with pytest.raises(NotFoundError, match="there is no memory event"):
        await tiers.rollback("ann", "99999999999999-0")
    last = (await tiers.facts.history("ann"))[-1]
    assert (await tiers.rollback("ann", last.id)).id == last.id  # a kept event still rolls back
    assert len(await tiers.facts.history("bob")) == 1


def test_an_event_older_than_the_oldest_kept_is_a_trimmed_one() -> None:
    kept = [AuditEvent(id="1700000000000-3", at=1.7e9, fact_id="f", event="ADD")]
    assert "trimmed" in (trimmed_event("1700000000000-2", kept) or "")
    assert "trimmed" in (trimmed_event("1600000000000-9", kept) or "")
    assert trimmed_event("1700000000000-4", kept) is None  # newer: unknown, not trimmed
    assert trimmed_event("1700000000000-3", kept) is None
    assert trimmed_event("not-an-id", kept) is None and trimmed_event("1-0", []) is None
