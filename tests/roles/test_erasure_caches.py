"""Erased is gone from the process too: what a user wrote leaves the process's caches of text (parsed turns,
prompt messages, analysed questions, token counts, memory items, vector snapshots) when they are erased here,
and by age when another process erased them."""

from __future__ import annotations

import asyncio
import time

import pytest
import redis.asyncio as aioredis

from actions import memory_section, talk
from brain import process_caches
from brain.backends.redis import RedisBackend
from brain.backends.redis import conversation_records as records
from brain.keys import archival_base
from brain.search import analysis, query
from brain.search.analyses import analysed
from brain.search.index import IndexedDoc
from brain.storage.index import IndexEntry
from brain.testing import ScriptedCall, ScriptedLLM
from roles.assistant import Assistant
from tests.support.runtime import make_runtime

MARK = "zqvelvetmark"


def _held(runtime_tokenizer: object) -> dict[str, int]:
    """How much each cache of text holds now."""
    return {
        "parsed turns": len(records._PARSED.turns),
        "prompt messages": talk._chat_message.cache_info().currsize,
        "questions": query._analysed.cache_info().currsize,  # type: ignore[attr-defined]
        "terms": analysis._query.cache_info().currsize,  # type: ignore[attr-defined]
        "stems": analysis.stem.cache_info().currsize,
        "token counts": runtime_tokenizer._short.cache_info().currsize,  # type: ignore[attr-defined]
        "memory items": memory_section._render_item.cache_info().currsize,
    }


def _marked_turns() -> list[str]:
    return [t.message.content for t in records._PARSED.turns.values() if MARK in t.message.content]


async def echo(call: ScriptedCall) -> str:
    return f"echo: {call.messages[-1].content}"


@pytest.fixture
def at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every erasure empties the caches at once (no other erasure just before: `MIN_GAP`)."""
    monkeypatch.setattr(process_caches, "MIN_GAP", 0.0)


@pytest.mark.parametrize("scope", ["user", "chat"])
@pytest.mark.usefixtures("at_once")
async def test_erasure_empties_the_process_caches_of_text(scope: str, redis_client: aioredis.Redis) -> None:
    runtime = make_runtime(ScriptedLLM([echo] * 5), client=redis_client)
    agent = Assistant.for_runtime(runtime)
    await agent.add_knowledge("alice", "c", f"alice's code word is {MARK}")  # a memory item each turn
    for turn in range(3):
        await agent.chat("alice", "c", f"My code word is {MARK}, turn {turn}.")
    held = _held(runtime.tokenizer)
    assert _marked_turns() and all(held.values()), held  # the turns filled every cache
    report = await (agent.forget_user("alice") if scope == "user" else agent.forget("alice", "c"))
    assert report.chats == 1
    assert _marked_turns() == []
    assert set(_held(runtime.tokenizer).values()) == {0}
    for _ in range(2):  # the caches fill again for everyone else
        await agent.chat("bob", "c", "hello")
    assert _held(runtime.tokenizer)["parsed turns"] > 0


@pytest.mark.usefixtures("at_once")
async def test_a_turn_in_flight_while_erased_is_forgotten_by_age(redis_client: aioredis.Redis) -> None:
    gate = asyncio.Event()

    async def gated(call: ScriptedCall) -> str:
        await gate.wait()
        return "noted"

    runtime = make_runtime(ScriptedLLM([echo, gated]), client=redis_client)
    agent = Assistant.for_runtime(runtime)
    await agent.chat("alice", "c", f"first {MARK}")
    turn = asyncio.create_task(agent.chat("alice", "c", f"second {MARK}"))
    for _ in range(200):
        if gate is not None and len(runtime.llm.calls) == 2:  # type: ignore[attr-defined]
            break
        await asyncio.sleep(0.01)
    await agent.forget_user("alice")
    talk._chat_message("user", f"second {MARK}")  # what the turn's prompt held, cached after the erasure
    gate.set()
    with pytest.raises(Exception):  # noqa: B017, PT011  the turn is fenced (`ErasedError`)
        await turn
    assert talk._chat_message.cache_info().currsize > 0
    assert process_caches.expire(time.monotonic() + process_caches.MAX_AGE)
    assert talk._chat_message.cache_info().currsize == 0


async def test_vector_snapshots_leave_with_their_namespace(redis_client: aioredis.Redis) -> None:
    runtime = make_runtime(ScriptedLLM([]), client=redis_client)
    backend = runtime.backend
    assert isinstance(backend, RedisBackend)
    snapshots = backend._index_scripts.vectors._entries
    stores = {user: backend.index(archival_base("brain", user)) for user in ("alice", "bob")}
    for user, store in stores.items():
        doc = IndexedDoc(id="p1", text=f"{user} {MARK}")
        entry = IndexEntry(doc=doc, counts=analysed(doc.text, 0.0, "3"), vector=(1.0, 0.0))
        await store.add([entry], "3")
        assert [i for i, _ in await store.nearest((1.0, 0.0), None, 1)] == ["p1"]
    assert set(snapshots) == {s.base for s in stores.values()}
    await stores["alice"].drop(lambda d, a: analysed(d.text, 0.0, a))  # an erased namespace's index
    assert set(snapshots) == {stores["bob"].base}
    await backend.purge(await backend.user_leftovers("bob"))  # or purged key by key (a user's erasure)
    assert set(snapshots) == set()


async def test_vector_snapshots_nobody_searched_leave_by_age(redis_client: aioredis.Redis) -> None:
    runtime = make_runtime(ScriptedLLM([]), client=redis_client)
    backend = runtime.backend
    assert isinstance(backend, RedisBackend)
    snapshots = backend._index_scripts.vectors._entries
    stores = [backend.index(archival_base("brain", user)) for user in ("carol", "dave")]
    for store in stores:
        doc = IndexedDoc(id="p1", text=MARK)
        await store.add([IndexEntry(doc=doc, counts=analysed(doc.text, 0.0, "3"), vector=(1.0, 0.0))], "3")
        await store.nearest((1.0, 0.0), None, 1)
    process_caches.forget()  # both were searched since the last emptying: kept
    assert set(snapshots) == {s.base for s in stores}
    await stores[1].nearest((1.0, 0.0), None, 1)  # dave's is searched again; carol's (erased elsewhere) not
    process_caches.forget()
    assert set(snapshots) == {stores[1].base}
