"""A chat's expiry reaches every namespace it owns (its recall index, its block memory), and an expired
chat leaves no key and nothing searchable; the user's own namespaces are not the chat's to expire."""

from __future__ import annotations

import asyncio

import redis.asyncio as aioredis

from brain import MemorySettings
from brain.backends.redis import RedisBackend
from brain.keys import archival_base, chat_bases, recall_base
from brain.llm.protocol import ChatMessage
from brain.search.filters import text
from brain.search.storage import DocumentIndex
from brain.settings import FactSettings
from brain.storage.blocks import Record
from brain.storage.index import IndexedDoc
from brain.testing import ScriptedLLM, tool_calls
from roles.tiered import TieredAssistant
from tests.support.runtime import make_runtime


async def _ttls(client: aioredis.Redis, pattern: str) -> dict[str, int]:
    return {text(k): await client.ttl(k) async for k in client.scan_iter(match=pattern)}


async def test_every_key_of_a_chat_namespace_expires_with_the_chat(redis_client: aioredis.Redis) -> None:
    backend = RedisBackend(redis_client, prefix="ret", ttl_seconds=500)
    recall = backend.index(recall_base("ret", "ann", "c1"))
    doc = IndexedDoc(id="t1", text="Ann: the ferry leaves at nine", tags=("user",), ts=1_700_000_000)
    entry = IndexedDoc(id="t2", text="Bot: noted", tags=("assistant",), ts=1_700_000_060)
    index = DocumentIndex(recall, dated=True)
    await index.add_many([doc])
    await index.set_source("turns", {"upto": 1})
    await index.add_many([entry], [[0.5, 0.5]])
    ttls = await _ttls(redis_client, f"{recall.base}:*")
    parts = {"docs", "num", "post", "lens", "ts", "stats"}
    assert parts <= {k.rsplit(":", 1)[-1] for k in ttls}
    assert {"sources", "vec", "vseq"} <= {k.rsplit(":", 1)[-1] for k in ttls}
    assert all(490 < t <= 500 for t in ttls.values()), ttls
    archival = DocumentIndex(backend.index(archival_base("ret", "ann")), dated=True)
    await archival.add_many([doc])
    assert set((await _ttls(redis_client, f"{archival.base}:*")).values()) == {-1}  # the user's, kept
    session = backend.block_session("ann", "c1")
    await session.append([Record(id="r1", message=ChatMessage(role="user", content="hello"), tokens=1)])
    await session.set_state("blocks", {"k": 1})
    blocks = await _ttls(redis_client, f"{session.base}:*")
    assert len(blocks) == 2 and all(490 < t <= 500 for t in blocks.values())


async def test_an_expired_tiered_chat_leaves_no_key(redis_client: aioredis.Redis) -> None:
    llm = ScriptedLLM([tool_calls(("send_message", {"message": f"Noted {i}."})) for i in range(3)])
    settings = MemorySettings(ttl_seconds=1, facts=FactSettings(enabled=False))
    agent = TieredAssistant(make_runtime(llm, client=redis_client, memory_settings=settings, prefix="exp"))
    for i in range(3):
        await agent.chat("ann", "c1", f"The ferry to Vaxholm leaves at nine, day {i}.")
    recall = agent.runtime.tiers.recall("ann", "c1")
    assert (await recall.search("ferry"))[1] == 3
    chat_keys = [p + ":*" for p in chat_bases("exp", "ann", "c1")]
    for pattern in chat_keys[:2]:  # the conversation and its recall index
        assert [k async for k in redis_client.scan_iter(match=pattern)]
    await asyncio.sleep(2.2)
    for pattern in chat_keys:
        assert [k async for k in redis_client.scan_iter(match=pattern)] == [], pattern
    assert (await recall.search("ferry"))[1] == 0
