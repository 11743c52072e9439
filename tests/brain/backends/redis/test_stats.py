"""What memory costs, per key family: a user's keys and bytes, and the deployment's."""

from __future__ import annotations

import redis.asyncio as aioredis

from brain.backends.redis import RedisBackend
from brain.backends.redis.stats import storage_costs
from brain.keys import archival_base, conversation_keys, facts_base, key_family, recall_base
from brain.memory.facts import Fact
from brain.message import Message
from brain.storage.conversation import Conversation, WriteBatch
from tests.support.stores import redis_tiers


def test_every_key_has_its_family() -> None:
    facts = facts_base("p", "ann")
    assert key_family(conversation_keys("p", "ann", "c").meta) == "conversation"
    assert key_family(f"{recall_base('p', 'ann', 'c')}:post:oslo") == "recall.postings"
    assert key_family(f"{recall_base('p', 'ann', 'c')}:vec") == "recall.vectors"
    assert key_family(f"{archival_base('p', 'ann')}:docs") == "archival.documents"
    assert key_family(f"{facts}:facts") == "facts" and key_family(f"{facts}:audit") == "facts.audit"
    assert key_family(f"{facts}:docs") == "facts.documents" and key_family(f"{facts}:g:ent") == "graph"
    assert key_family("p:{queue}:facts") == "queue" and key_family("plain") == "other"
    assert key_family(f"{facts}:fence") == "fences"


async def test_a_users_costs_and_the_deployments(redis_client: aioredis.Redis) -> None:
    backend = RedisBackend(redis_client, prefix="st")
    tiers = redis_tiers(redis_client, prefix="st")
    for user in ("ann", "bob"):
        await tiers.facts.add(user, Fact(text=f"{user} lives in Oslo and drinks green tea every morning"))
        turns = (Message(content="I live in Oslo"), 5), (Message(role="assistant", content="Noted."), 2)
        await tiers.backend.conversations.write(Conversation(user, "c"), WriteBatch(turns=turns))
    ann = {c.family: c for c in await storage_costs(backend, "ann")}
    assert {"facts", "facts.audit", "facts.documents", "facts.postings", "conversation"} <= set(ann)
    assert all(c.keys > 0 and c.bytes > 0 for c in ann.values())
    everyone = {c.family: c for c in await storage_costs(backend)}
    assert everyone["facts"].keys == 2 * ann["facts"].keys  # ann's and bob's, nothing of another prefix
    assert everyone["conversation"].bytes > ann["conversation"].bytes
