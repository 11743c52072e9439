"""Facts on the hot path and in time: the facts a turn shows are cached while the user's facts do not change
(a change from anywhere invalidates them); a conversation backfilled with its own times gives the facts and
validity intervals that living through it gave."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import redis.asyncio as aioredis

from actions.remember import remember
from brain import MemorySettings
from brain.errors import InputError
from brain.memory.facts import Fact, FactMemory
from brain.message import Message
from brain.settings import FactSettings
from brain.testing import ScriptedCall, ScriptedLLM
from roles.assistant import Assistant
from roles.fact_worker import FactWorker
from tests.support.prompts import prompt_text
from tests.support.runtime import make_runtime
from tests.support.stores import redis_tiers

FACTS_ON = MemorySettings(facts=FactSettings(enabled=True, reclaim_seconds=0.2, batch_turns=20))


def counted_searches(facts: FactMemory, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The questions `facts` is searched for from now on, in order."""
    searches: list[str] = []
    search = facts.search

    async def counted(*args: Any, **kwargs: Any) -> list[Fact]:
        searches.append(args[1])
        return await search(*args, **kwargs)

    monkeypatch.setattr(facts, "search", counted)
    return searches


async def test_the_same_question_is_not_searched_again_until_a_fact_changes(
    redis_client: aioredis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = make_runtime(ScriptedLLM(["ok"] * 6), client=redis_client, memory_settings=FACTS_ON)
    assert runtime.tiers is not None
    facts = runtime.tiers.facts
    await facts.add("cal", Fact(text="Likes hiking in the Alps"))
    searches = counted_searches(facts, monkeypatch)
    assistant = Assistant(runtime)
    for _ in range(2):
        await assistant.chat("cal", "c", "Any hiking ideas?")
    assert searches == ["Any hiking ideas?"]  # the second turn: from the cache
    await assistant.chat("cal", "other", "Any hiking ideas?")  # another chat searches for itself
    assert len(searches) == 2
    other_process = redis_tiers(redis_client).facts  # a write from anywhere moves the generation
    await other_process.add("cal", Fact(text="Hiking boots size 44"))
    await assistant.chat("cal", "c", "Any hiking ideas?")
    assert len(searches) == 3
    prompt = runtime.llm.calls[-1].messages  # type: ignore[attr-defined]
    assert "Hiking boots size 44" in prompt_text(prompt)
    await assistant.forget_user("cal")
    await assistant.chat("cal", "c", "Any hiking ideas?")
    prompt = runtime.llm.calls[-1].messages  # type: ignore[attr-defined]
    assert "Alps" not in prompt_text(prompt)  # erased: not served from a cache


async def test_a_user_without_facts_is_not_searched_again_until_a_fact_is_added(
    redis_client: aioredis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = make_runtime(ScriptedLLM(["ok"] * 12), client=redis_client, memory_settings=FACTS_ON)
    assert runtime.tiers is not None
    facts = runtime.tiers.facts
    searches = counted_searches(facts, monkeypatch)
    assistant = Assistant(runtime)
    await assistant.chat("dee", "c", "Any hiking ideas in May?")  # a question naming a period too
    await assistant.chat("dee", "c", "What about tea?")
    await assistant.chat("dee", "other", "And cake?")  # any chat, any question: the same empty index
    assert searches == ["Any hiking ideas in May?"]
    other_process = redis_tiers(redis_client).facts  # a fact from anywhere moves the generation
    await other_process.add("dee", Fact(text="Drinks green tea every morning"))
    await assistant.chat("dee", "c", "What about tea?")
    assert searches[1:] == ["What about tea?"]
    prompt = runtime.llm.calls[-1].messages  # type: ignore[attr-defined]
    assert "green tea" in prompt_text(prompt)
    await assistant.chat("dee", "c", "And cake?")  # facts now: each new question is searched
    assert searches[2:] == ["And cake?"]


def extractor(call: ScriptedCall) -> str:
    """An ideal extractor: each "I live in X" line is a fact about user.city, true from its turn's time."""
    if "EXISTING facts" in (call.messages[1].content or ""):
        held = re.findall(r"^(\d+): (.+)$", (call.messages[1].content or "").split("NEW facts:")[0], re.M)
        new = re.findall(r"^(\d+): (.+)$", (call.messages[1].content or "").split("NEW facts:")[1], re.M)
        city = next((i for i, text in held if text.startswith("Lives in")), None)
        memory = [
            {"event": "UPDATE" if city else "ADD", "id": city, "text": text, "new": int(n)} for n, text in new
        ]
        return json.dumps({"memory": memory})
    facts, stamp = [], None
    turns, _, fold = (call.messages[1].content or "").partition("SUMMARIZE:")
    for line in turns.splitlines():
        if re.fullmatch(r"\[\d{4}-\d\d-\d\d \d\d:\d\d\]", line):
            stamp = line[1:-1]
        elif m := re.fullmatch(r"User: I live in (\w+)\.", line):
            facts.append({"text": f"Lives in {m[1]}", "key": "user.city", "value": m[1], "valid_at": stamp})
    return json.dumps({"facts": facts} | ({"summary": "They moved a lot."} if fold else {}))


def life() -> list[Message]:
    start = datetime(2023, 1, 5, 8, 0, tzinfo=UTC)
    messages = []
    for day, city in enumerate(["Oslo", "Oslo", "Bergen", "Bergen", "Tromsø", "Bergen"] * 4):
        when = start + timedelta(days=17 * day, minutes=day)
        messages.append(Message(role="user", content=f"I live in {city}.", sent_from="user", created_at=when))
        messages.append(Message(role="assistant", content="Noted.", created_at=when + timedelta(seconds=5)))
    return messages


def intervals(facts: list[Fact]) -> list[tuple[str, float | None, float | None, bool]]:
    return sorted((f.text, f.valid_at, f.invalid_at, f.current) for f in facts)


async def test_a_backfill_gives_the_facts_living_through_it_gave(redis_client: aioredis.Redis) -> None:
    lived = redis_tiers(redis_client, prefix="lived").facts
    messages = life()
    for start in range(0, len(messages), 2):  # as it happened: each exchange applied when it was made
        await remember(ScriptedLLM([extractor, extractor]), lived, "vi", messages[start : start + 2])
    runtime = make_runtime(
        ScriptedLLM(), client=redis_client, memory_settings=FACTS_ON, memory_llm=ScriptedLLM([extractor] * 20)
    )
    assistant = Assistant(runtime)
    await assistant.backfill("vi", "old", messages)
    while (await FactWorker(runtime).run_once(block_ms=None)).entries:
        pass
    assert runtime.tiers is not None
    backfilled = await runtime.tiers.facts.all("vi", current_only=False)
    expected = intervals(await lived.all("vi", current_only=False))
    assert intervals(backfilled) == expected and len(expected) == 16  # every move, each with its interval
    assert [f.text for f in backfilled if f.current] == ["Lives in Bergen"]
    in_between = messages[9].created_at.timestamp() + 60  # after the 5th move (Tromsø), before the next
    assert [f.text for f in backfilled if f.true_at(in_between)] == ["Lives in Tromsø"]


async def test_a_backfill_refuses_messages_out_of_time_order(redis_client: aioredis.Redis) -> None:
    runtime = make_runtime(ScriptedLLM(), client=redis_client, memory_settings=FACTS_ON)
    messages = life()
    with pytest.raises(InputError, match="time order"):
        await Assistant(runtime).backfill("vo", "old", [messages[3], messages[0]])


async def test_a_turn_checks_the_archive_reads_facts_and_queues_them_in_three_round_trips(
    redis_client: aioredis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = make_runtime(ScriptedLLM(["ok"] * 2), client=redis_client, memory_settings=FACTS_ON)
    assert runtime.tiers is not None
    await runtime.tiers.facts.add("cal", Fact(text="Likes hiking in the Alps"))
    assistant = Assistant(runtime)
    await assistant.chat("cal", "c", "Any hiking ideas?")  # the scripts loaded, the fact record cached
    sent: list[str] = []
    command = redis_client.execute_command

    async def counted(*args: Any, **kwargs: Any) -> Any:
        sent.append(str(args[0]).upper())
        return await command(*args, **kwargs)

    monkeypatch.setattr(redis_client, "execute_command", counted)
    await assistant.chat("cal", "c", "Any hiking tips?")
    # the load (with the cold-archive marker), the facts' ranking with their generation (the record cached
    # under it), the write with the chat's fact-queue entry
    assert sent == ["EVALSHA", "EVALSHA", "EVALSHA"]
    prompt = runtime.llm.calls[-1].messages  # type: ignore[attr-defined]
    assert "Likes hiking in the Alps" in prompt_text(prompt)
    queue = runtime.tiers.fact_queue
    entries = await queue.read("w", 10, None)
    assert [(e.chat_id, e.upto) for e in entries] == [("c", 2), ("c", 4)]


async def test_facts_are_searched_at_the_generation_read_first_where_the_ranking_does_not_read_it() -> None:
    from brain.backends.memory import MemoryBackend
    from brain.memory.tiers import Tiers

    facts = Tiers(MemoryBackend()).facts
    await facts.add("cal", Fact(text="Likes hiking in the Alps"))
    seen: list[int] = []

    def known(generation: int) -> dict[str, Fact]:
        seen.append(generation)
        return {}

    found = await facts.search("cal", "hiking", known=known)
    assert [f.text for f in found] == ["Likes hiking in the Alps"] and seen == [1]
    await facts.add("cal", Fact(text="Hiking boots size 44"))
    assert len(await facts.search("cal", "hiking", known=known)) == 2 and seen == [1, 2]
