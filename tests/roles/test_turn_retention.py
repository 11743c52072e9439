"""Retention (`memory.retention`): the oldest turns of a chat lose their raw text once the summary and the
facts hold them; the chat still loads and answers, its summary and facts are intact, recall finds no
dropped turn, the chat costs fewer bytes, and a second run changes nothing. Real Redis."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import redis.asyncio as aioredis

from brain import MemorySettings
from brain.backends.memory import MemoryBackend
from brain.backends.redis import RedisBackend
from brain.backends.redis.stats import storage_costs
from brain.memory.facts import Fact
from brain.memory.retention import apply_retention, older_prefix, retain_limit
from brain.memory.tiers import Tiers
from brain.message import Message
from brain.runtime import Runtime
from brain.settings import FactSettings, RetentionSettings
from brain.storage.conversation import Conversation, Turn, WriteBatch
from brain.testing import ScriptedLLM, tool_calls
from roles.cli.retention import retain
from roles.tiered import TieredAssistant
from tests.support.runtime import make_runtime

DAY = 86_400.0
FILLER = (
    "We talked about the weather in Oslo again: grey mornings, a little sun after lunch, rain most "
    "evenings, and whether the ferry to Nesodden runs on time when the fjord is windy."
)  # a chat turn's typical length (~200 bytes)


def word(i: int) -> str:
    """A word only turn `i` says (letters: the index's analysis keeps it whole)."""
    letters = ""
    while True:
        i, d = divmod(i, 26)
        letters = chr(97 + d) + letters
        if i == 0:
            return "qz" + letters


def chat_turns(n: int, *, old: int = 0, now: float) -> list[Message]:
    """`n` turns; the first `old` written 30 days before `now`, the rest an hour before it."""
    return [
        Message(
            id=f"t{i:04d}",
            role="user" if i % 2 else "assistant",
            content=f"Turn {i} mentions {word(i)}. " + FILLER,
            created_at=datetime.fromtimestamp(now - (30 * DAY if i <= old else 3_600) + i, UTC),
        )
        for i in range(1, n + 1)
    ]


def runtime(llm: ScriptedLLM, client: aioredis.Redis, policy: RetentionSettings) -> Runtime:
    settings = MemorySettings(
        rewrite_followups=False,
        window_max_turns=200,
        retention=policy,
        facts=FactSettings(in_process_worker=False),
    )
    return make_runtime(llm, client=client, memory_settings=settings, prefix="keep")


async def seed(rt: Runtime, conv: Conversation, n: int, summary: int, facts: int, *, old: int = 0) -> None:
    """A chat of `n` turns summarized up to `summary`, its facts extracted up to `facts`, two facts held."""
    tiers = rt.tiers
    assert tiers is not None
    sent = chat_turns(n, old=old, now=time.time())
    for start in range(0, n, 100):
        await rt.store.write(conv, WriteBatch(turns=tuple((m, 5) for m in sent[start : start + 100])))
    await rt.store.commit_summary(
        conv, summary="Ann talked about Oslo's weather.", upto=summary, expected_upto=0, tokens=5 * summary
    )
    await tiers.facts.set_progress(conv.user_id, conv.chat_id, facts)
    await tiers.facts.add(conv.user_id, Fact(text="Ann lives in Oslo"))
    await tiers.facts.add(conv.user_id, Fact(text="Ann likes rain"))


async def recalled(rt: Runtime, conv: Conversation, i: int) -> list[str]:
    assert rt.tiers is not None
    hits, _ = await rt.tiers.recall(conv.user_id, conv.chat_id).search(word(i), limit=5)
    return [h.doc.id for h in hits]


async def chat_bytes(rt: Runtime) -> int:
    assert isinstance(rt.backend, RedisBackend)
    return sum(c.bytes for c in await storage_costs(rt.backend, "ann"))


def test_the_policys_limits_are_pure() -> None:
    assert retain_limit(300, 250, 200, 50) == 200
    assert retain_limit(300, 250, None, 50) == 250  # fact memory off: the summary alone
    assert retain_limit(300, 250, 280, 100) == 200
    assert retain_limit(30, 20, 20, 50) == 0
    now = 1_000_000.0
    turns = [
        Turn(i, 1, Message(content="x", created_at=datetime.fromtimestamp(t, UTC)))
        for i, t in enumerate([now - 9, now - 8, now - 1, now - 7], 1)
    ]
    assert older_prefix(turns, now - 5) == 2  # turn 4 is old too, but a newer turn comes first
    assert older_prefix(turns, now - 10) == 0


async def test_a_long_chat_keeps_its_newest_turns_verbatim(redis_client: aioredis.Redis) -> None:
    llm = ScriptedLLM([])
    rt = runtime(llm, redis_client, RetentionSettings(keep_turns=50))
    agent, conv = TieredAssistant(rt), Conversation("ann", "c")
    await seed(rt, conv, 300, summary=250, facts=200)
    assert await agent.sync_recall(await agent.memory_of("ann", "c")) == 300
    assert await recalled(rt, conv, 17) == ["t0017"]
    before = await chat_bytes(rt)

    dry, would = await retain(rt, dry_run=True)
    assert (would.chats, would.changed, would.turns) == (1, 1, 200)
    assert (dry[0].before, dry[0].upto, dry[0].extracted) == (0, 200, 200)
    assert await chat_bytes(rt) == before and await recalled(rt, conv, 17) == ["t0017"]

    _, done = await retain(rt)
    assert (done.changed, done.turns, done.unindexed) == (1, 200, 200)
    stored = await rt.store.read_turns(conv, 1, 400)
    assert [t.seq for t in stored if t.dropped] == list(range(1, 201))
    assert all(t.message.content == "" and t.message.id == f"t{t.seq:04d}" for t in stored[:200])
    assert [t.message.content for t in stored[200:]] == [m.content for m in chat_turns(300, now=0)[200:]]
    for i in (1, 17, 150, 200):
        assert await recalled(rt, conv, i) == []
    for i in (201, 250, 300):
        assert await recalled(rt, conv, i) == [f"t{i:04d}"]
    after = await chat_bytes(rt)
    print(
        f"\nretention: ann's bytes {before:,} -> {after:,} ({after / before:.2f}x), 200 of 300 turns dropped"
    )
    assert after < before * 0.65  # two thirds of the text gone (stored once) and their recall entries

    _, twice = await retain(rt)  # idempotent: nothing more to drop or delete
    assert (twice.turns, twice.unindexed) == (0, 0) and await chat_bytes(rt) == after

    llm.add(tool_calls(("send_message", {"message": "Still raining in Oslo."})))
    assert await agent.chat("ann", "c", "How is the weather?") == "Still raining in Oslo."
    system = llm.calls[-1].messages[0].content or ""
    assert "Ann talked about Oslo's weather." in system
    assert await agent.sync_recall(await agent.memory_of("ann", "c")) == 0  # the new turns were indexed
    memory = await agent.memory_of("ann", "c")
    assert memory.historical_summary == "Ann talked about Oslo's weather." and memory.turn_count == 302
    assert rt.tiers is not None
    assert sorted(f.text for f in await rt.tiers.facts.all("ann")) == ["Ann likes rain", "Ann lives in Oslo"]


async def test_keep_days_drops_only_turns_older_than_the_policy(redis_client: aioredis.Redis) -> None:
    rt = runtime(ScriptedLLM([]), redis_client, RetentionSettings(keep_days=7))
    conv = Conversation("ann", "days")
    await seed(rt, conv, 300, summary=250, facts=200, old=120)
    _, done = await retain(rt, "ann")
    assert done.turns == 120  # older than 7 days: turns 1..120, all summarized and extracted
    assert [t.seq for t in await rt.store.read_turns(conv, 1, 400) if t.dropped] == list(range(1, 121))
    both = runtime(ScriptedLLM([]), redis_client, RetentionSettings(keep_days=7, keep_turns=250))
    assert (await retain(both, "ann"))[1].turns == 0  # past both limits only: the newest 250 stay


async def test_turns_the_fact_worker_has_not_read_keep_their_text() -> None:
    backend = MemoryBackend(prefix="m")
    tiers, conv = Tiers(backend), Conversation("bo", "c")
    await backend.conversations.write(
        conv, WriteBatch(turns=tuple((m, 1) for m in chat_turns(40, now=time.time())))
    )
    await backend.conversations.commit_summary(conv, summary="S", upto=30, expected_upto=0, tokens=30)
    await tiers.facts.set_progress("bo", "c", 12)
    policy = RetentionSettings(keep_turns=0)
    _, done = await apply_retention(backend.conversations, tiers, [conv], policy, facts_on=True)
    assert done.turns == 12
    _, off = await apply_retention(backend.conversations, tiers, [conv], policy, facts_on=False)
    assert off.turns == 18  # fact memory off: up to the summary
    _, none = await apply_retention(backend.conversations, tiers, [conv], RetentionSettings(), facts_on=False)
    assert none.turns == 0
