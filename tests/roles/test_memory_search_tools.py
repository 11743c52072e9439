"""The search tools: words, speaker and dates together; turns found through the facts learned from them."""

from __future__ import annotations

import json
from typing import Any

import redis.asyncio as aioredis

from brain import Settings, local_runtime
from brain.backends.redis import RedisBackend
from brain.llm.protocol import ToolCall
from brain.memory.facts import Fact
from brain.search.index import IndexedDoc
from brain.testing import ScriptedLLM
from roles.memory_tools import SPECS, MemoryTools
from roles.skills import Skill, SkillDeclaration, Skills
from roles.tiered import TieredAssistant
from tests.support.runtime import make_runtime
from tests.support.stores import redis_tiers

DAY = 1_644_253_200  # 7 February 2022, 17:00 UTC
TURNS = [
    IndexedDoc(id="m1", text="Joanna: I watched a film about whales", ts=DAY, tags=("user",)),
    IndexedDoc(id="m2", text="Lily: A film about whales sounds lovely", ts=DAY + 60, tags=("assistant",)),
    IndexedDoc(id="m3", text="Joanna: I watched a film about trains", ts=DAY + 20 * 86_400, tags=("user",)),
    IndexedDoc(
        id="m4", text="Joanna: we got a puppy and called him Biscuit", ts=DAY + 30 * 86_400, tags=("user",)
    ),
]


async def search(tools: MemoryTools, name: str, **arguments: Any) -> list[str]:
    outcome = await tools.invoke(ToolCall(id="1", name=name, arguments=json.dumps(arguments)))
    assert not outcome.failed, outcome.result
    return [r["id"] for r in json.loads(outcome.result)["results"]]


async def test_words_speaker_and_dates_together(redis_client: aioredis.Redis) -> None:
    tiers = redis_tiers(redis_client, prefix="tools")
    recall = tiers.recall("joanna", "c")
    await recall.add_many(TURNS)
    tools = MemoryTools(tiers.core, {}, tiers.archival("joanna"), recall)
    assert (await search(tools, "conversation_search", query="film"))[:3] in (
        ["m1", "m3", "m2"],
        ["m3", "m1", "m2"],
    )
    assert (await search(tools, "conversation_search", query="film on 7 February 2022"))[:2] == ["m1", "m2"]
    february = await search(
        tools, "conversation_search", query="film", start_date="2022-02-01", end_date="2022-02-07"
    )
    assert february == ["m1", "m2"]  # the end day is included
    assert await search(tools, "conversation_search", query="film", role="assistant") == ["m2"]
    later = await search(tools, "conversation_search", query="film", start_date="2022-02-08", role="user")
    assert later == ["m3"]
    archival = tiers.archival("joanna")
    await archival.add(IndexedDoc(id="p1", text="Passport renewed", ts=DAY, tags=("docs",)))
    await archival.add(IndexedDoc(id="p2", text="Passport photo taken", ts=DAY + 40 * 86_400))
    assert await search(tools, "archival_memory_search", query="passport", end_date="2022-02-07") == ["p1"]
    assert (await search(tools, "archival_memory_search", query="passport in March 2022"))[0] == "p2"
    spec = next(s for s in SPECS if s.name == "conversation_search")
    assert {"start_date", "end_date", "role", "page"} <= set(spec.parameters["properties"])
    assert "speaker and day" in spec.description


async def test_turns_are_found_through_the_facts_learned_from_them(redis_client: aioredis.Redis) -> None:
    agent = TieredAssistant(make_runtime(ScriptedLLM([]), client=redis_client))
    await agent.tiers.facts.add("joanna", Fact(text="Joanna's dog is named Biscuit", source_turns=("m4",)))
    tools = agent.tools("joanna", "c")
    await tools.recall.add_many(TURNS)
    plain = MemoryTools(tools.core, {}, tools.archival, tools.recall)
    assert "m4" not in await search(plain, "conversation_search", query="what is the dog's name")
    found = await search(tools, "conversation_search", query="what is the dog's name")
    assert found[0] == "m4"  # "dog" is only in the fact; the fact names its source turn
    assert await agent.linked_turns("joanna", "trains") == []
    assert "m4" not in await search(tools, "conversation_search", query="dog", role="assistant")


async def test_a_configured_reranker_orders_what_the_tools_find(redis_client: aioredis.Redis) -> None:
    def trains_first(query: str, document: str) -> float:
        return 1.0 if "trains" in document else 0.0

    llm = ScriptedLLM([], reranker=trains_first)
    settings = Settings.model_validate({"llm": {"rerank_model": "rr", "rerank_depth": 5}})
    agent = TieredAssistant(
        local_runtime(llm, settings=settings, backend=RedisBackend.for_settings(redis_client, settings))
    )
    tools = agent.tools("joanna", "c")
    await tools.recall.add_many(TURNS)
    assert (await search(tools, "conversation_search", query="film"))[0] == "m3"
    ranked = [c for c in llm.calls if c.kind == "rerank"]
    assert len(ranked) == 1 and ranked[0].query == "film" and len(ranked[0].texts) == 3
    assert "[7 February 2022] Joanna: I watched a film about whales" in ranked[0].texts
    quiet = ScriptedLLM([])  # no rerank model configured: a rerank call would find the script empty
    unranked = TieredAssistant(local_runtime(quiet, backend=RedisBackend(redis_client))).tools("joanna", "c")
    assert len(await search(unranked, "conversation_search", query="film")) == 3 and not quiet.calls


async def test_tool_results_carry_chinese_as_it_is(redis_client: aioredis.Redis) -> None:
    """A tool result is JSON the model reads: 猫, not its escape (about six times the tokens)."""
    tiers = redis_tiers(redis_client, prefix="tools")
    archival = tiers.archival("li")
    await archival.add(IndexedDoc(id="p1", text="我家的猫咪叫麻薯", ts=DAY))
    tools = MemoryTools(tiers.core, {}, archival, tiers.recall("li", "c"))
    outcome = await tools.invoke(
        ToolCall(id="1", name="archival_memory_search", arguments=json.dumps({"query": "猫"}))
    )
    assert not outcome.failed and "我家的猫咪叫麻薯" in outcome.result and "\\u732b" not in outcome.result
    assert json.loads(outcome.result)["results"][0]["text"] == "我家的猫咪叫麻薯"
    declaration = SkillDeclaration(name="pet", description="The pet", entry="tests.roles.sample_skills:add")
    skills = Skills([Skill(declaration=declaration, function=lambda: {"name": "麻薯", "kind": "猫\udc80"})])
    result = await skills.invoke(ToolCall(id="2", name="pet", arguments="{}"))
    assert json.loads(result) == {"name": "麻薯", "kind": "猫\ufffd"} and "猫" in result
    assert result.encode("utf-8")  # no lone surrogate
