"""A fact and its search entry are one write: an embedder that dies or a Redis killed in the middle of a
batch leaves only facts search can find, and the batch tried again completes it without duplicates."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from actions.remember import remember
from brain.backends.redis import RedisBackend
from brain.backends.redis.client import connect
from brain.errors import LLMError, StoreError
from brain.memory.facts import FactMemory
from brain.memory.tiers import Tiers
from brain.message import Message
from brain.settings import RedisSettings
from brain.storage.facts import AuditEntry, Fact, FactStore, fact_hash
from brain.storage.index import IndexEntry
from brain.testing import ScriptedCall, ScriptedLLM
from tests.support.servers import RedisServerProcess

TOPICS = [f"The user collects stamp series number {i}" for i in range(12)]


def extraction(texts: Sequence[str], tag: str = "") -> str:
    facts = [{"text": t, "key": f"user.stamps{i}{tag}", "value": str(i)} for i, t in enumerate(texts)]
    return json.dumps({"facts": facts})


def turns() -> list[Message]:
    return [Message(role="user", content="I collect a dozen stamp series", sent_from="user")]


def vector(text: str) -> list[float]:
    return [float(len(text) % 7 + 1), float(sum(map(ord, text)) % 11 + 1), 1.0]


async def unsearchable(facts: FactMemory, user: str) -> list[str]:
    """Stored facts without a search entry or vector, or current ones a search for their text misses."""
    stored = await facts.all(user, current_only=False)
    index = facts.index(user)
    docs = {d.id for d in await index.store.docs([f.id for f in stored])}
    near = {i for i, _ in await index.store.nearest([1.0, 1.0, 1.0], None, 10_000)}
    missing = [f.text for f in stored if f.id not in docs or f.id not in near]
    for fact in (f for f in stored if f.current):  # a retired fact is found by "as of" searches
        if fact.id not in [f.id for f in await facts.search(user, fact.text, limit=50)]:
            missing.append(fact.text)
    return missing


def decide(call: ScriptedCall) -> str:
    """Reconciliation: series 0 said again with 20 is an UPDATE of series 0 (rewritten), others ADD."""
    prompt = call.messages[1].content or ""
    held, new = (re.findall(r"^(\d+): (.+)$", part, re.M) for part in prompt.split("NEW facts:"))
    old = next(i for i, text in held if text == TOPICS[0])
    memory = [
        {"event": "UPDATE", "id": old, "text": "Collects stamp series 0 and 20", "new": int(n)}
        if text.endswith(" and 20")
        else {"event": "ADD", "text": text, "new": int(n)}
        for n, text in new
    ]
    return json.dumps({"memory": sorted(memory, key=lambda d: d["event"])})  # the ADD first


async def test_an_embedder_dying_mid_batch_leaves_only_searchable_facts(redis_client: Any) -> None:
    calls = {"n": 0}

    async def embed(texts: Sequence[str]) -> list[list[float]]:
        calls["n"] += 1
        if calls["n"] == 3:  # the batch's own call passed; the rewritten fact's own call fails
            raise LLMError("embeddings endpoint: 503")
        return [vector(t) for t in texts]

    facts = Tiers(RedisBackend(redis_client), embed=embed).facts
    newer = extraction([TOPICS[0] + " and 20", "The user collects stamp series number 21"], "x")
    llm = ScriptedLLM([extraction(TOPICS[:2]), newer, decide])
    await remember(llm, facts, "ema", turns())  # two facts, embedded in the batch's one call
    with pytest.raises(LLMError):
        await remember(llm, facts, "ema", [Message(role="user", content="Series 20 and 21 too")])
    assert sorted(f.text for f in await facts.all("ema")) == sorted(
        [*TOPICS[:2], "The user collects stamp series number 21"]
    )
    assert await unsearchable(facts, "ema") == []
    llm.add(newer, decide)
    await remember(llm, facts, "ema", [Message(role="user", content="Series 20 and 21 too")])  # tried again
    after = sorted(f.text for f in await facts.all("ema"))
    assert after == sorted(
        ["Collects stamp series 0 and 20", TOPICS[1], "The user collects stamp series number 21"]
    )
    assert await unsearchable(facts, "ema") == []
    llm.assert_consumed()


class Crashing:
    """A fact store whose Redis is killed right after its `at`-th write returns: whatever the writer does
    next for that fact (a second step, were there one) meets a dead server."""

    def __init__(self, store: FactStore, server: RedisServerProcess, at: int) -> None:
        self._store, self._server, self._at, self.writes = store, server, at, 0

    async def add(
        self, user_id: str | bytes, fact: Fact, audit: AuditEntry, replaces: str = "",
        entry: IndexEntry | None = None, analysis: str = "",
    ) -> str | None:  # fmt: skip
        self.writes += 1
        written = await self._store.add(user_id, fact, audit, replaces, entry, analysis)
        if self.writes == self._at:
            self._server.kill()
        return written

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


async def test_redis_killed_mid_batch_leaves_only_searchable_facts(tmp_path: Path) -> None:
    server = RedisServerProcess(tmp_path / "redis")  # appendonly, fsync always: what was written stays
    server.start()
    settings = RedisSettings(socket_timeout=1, connect_timeout=1, retries=0)
    client = connect(server.url, settings)
    try:
        backend = RedisBackend(client)
        crashing = Crashing(backend.facts, server, at=6)
        facts = FactMemory(crashing, Tiers(backend).index, embed=_embed)
        with pytest.raises(StoreError):
            await remember(ScriptedLLM([extraction(TOPICS)]), facts, "rik", turns())
        server.start()  # the same data directory: the append-only file is read back
        written = await facts.all("rik")
        assert len(written) == 6 and await unsearchable(facts, "rik") == []
        report = await remember(ScriptedLLM([extraction(TOPICS), decide]), facts, "rik", turns())  # again
        assert (report.added, report.duplicates) == (6, 6)
        texts = [f.text for f in await facts.all("rik")]
        assert sorted(texts) == sorted(TOPICS) and await unsearchable(facts, "rik") == []
    finally:
        await client.aclose()
        server.stop()


async def _embed(texts: Sequence[str]) -> list[list[float]]:
    return [vector(t) for t in texts]


async def test_repair_indexes_facts_an_older_version_left_without_a_search_entry(redis_client: Any) -> None:
    facts = Tiers(RedisBackend(redis_client), embed=_embed).facts
    old = Fact(text="The user collects old maps", hash=fact_hash("The user collects old maps"))
    await facts.store.add("rae", old, AuditEntry(event="ADD"))  # a record without its entry: two-step era
    await facts.add("rae", Fact(text="The user sails on weekends"))
    assert await unsearchable(facts, "rae") == ["The user collects old maps"] * 2
    events: list[Any] = []
    assert await facts.repair("rae", progress=events.append) == 1
    assert await unsearchable(facts, "rae") == [] and [(e.done, e.total) for e in events] == [(1, 1)]
    assert await facts.repair("rae") == 0
