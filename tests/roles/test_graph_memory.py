"""Graph memory end to end: the fact worker builds it (a failed graph call leaves the batch pending and the
facts are not paid twice), the tiered tools search it, and search finds a turn two relations away."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import redis.asyncio as aioredis

from actions.remember_graph import remember_graph
from brain import MemorySettings
from brain.llm.protocol import ToolCall
from brain.message import Message
from brain.settings import FactSettings, GraphSettings
from brain.testing import ScriptedLLM, tool_calls
from roles.assistant import Assistant
from roles.fact_worker import FactWorker
from roles.memory_tools import MemoryTools
from roles.modes.tiered import recall_doc
from roles.tiered import TieredAssistant
from tests.support.runtime import make_runtime

GRAPH_ON = MemorySettings(
    facts=FactSettings(enabled=True, reclaim_seconds=0.1, batch_turns=50),
    graph=GraphSettings(enabled=True),
)
GRAPH = {
    "entities": [{"name": "Caroline", "type": "person"}, {"name": "Rex", "type": "animal"}],
    "relations": [{"source": "Caroline", "relation": "adopted", "target": "Rex"}],
}


def facts(*texts: str) -> str:
    return json.dumps({"facts": [{"text": t, "category": "personal"} for t in texts]})


async def test_the_worker_builds_the_graph_and_a_failure_costs_only_the_graph_again(
    redis_client: aioredis.Redis,
) -> None:
    memory_llm = ScriptedLLM(
        [facts("Caroline adopted a dog named Rex"), "no tool call here", tool_calls(("record_graph", GRAPH))]
    )
    runtime = make_runtime(
        ScriptedLLM(["Lovely!"]), client=redis_client, memory_settings=GRAPH_ON, memory_llm=memory_llm
    )
    await Assistant(runtime).chat("caroline", "c", "I adopted a dog, his name is Rex.")
    worker = FactWorker(runtime)
    failed = await worker.run_once(block_ms=None)
    assert failed.failed == 1 and runtime.tiers is not None
    assert await runtime.tiers.graph.resolve("caroline", ["Rex"]) == {}
    await asyncio.sleep(0.15)  # past reclaim_seconds: the batch is taken again
    report = await worker.run_once(block_ms=None)
    assert report.failed == 0 and report.calls == 1  # facts repeat without a call; the graph call again
    graph = runtime.tiers.graph
    rex = (await graph.resolve("caroline", ["rex"]))["rex"]
    fact = (await runtime.tiers.facts.all("caroline"))[0]
    named = await graph.named_in("caroline", [fact.id])
    assert rex in named[fact.id]  # the fact is linked to the entity it names
    kinds = [c.kind for c in memory_llm.calls]
    assert kinds == ["chat", "chat", "chat"] and [t.name for t in memory_llm.calls[2].tools] == [
        "record_graph"
    ]


async def invoke(tools: MemoryTools, name: str, **arguments: Any) -> Any:
    outcome = await tools.invoke(ToolCall(id="1", name=name, arguments=json.dumps(arguments)))
    assert not outcome.failed, outcome.result
    return json.loads(outcome.result)


async def test_graph_search_and_a_two_hop_question(redis_client: aioredis.Redis) -> None:
    agent = TieredAssistant(make_runtime(ScriptedLLM([]), client=redis_client, memory_settings=GRAPH_ON))
    turns = [
        Message(id="t1", sent_from="Caroline", content="We adopted a dog named Rex!"),
        Message(id="t2", sent_from="Caroline", content="My sister Melanie is visiting next week."),
        Message(id="t3", sent_from="Melanie", content="I moved to Lisbon in March, I love it there."),
    ]
    turns += [
        Message(id=f"n{i}", sent_from="Bob", content=f"Bob lives near the park number {i}") for i in range(30)
    ]
    extraction = {
        "entities": [{"name": "Caroline", "type": "person"}, {"name": "Melanie", "type": "person"}],
        "relations": [
            {"source": "Caroline", "relation": "adopted", "target": "Rex"},
            {"source": "Melanie", "relation": "sister_of", "target": "Caroline", "valid_at": "1990-05-01"},
            {"source": "Melanie", "relation": "lives_in", "target": "Lisbon", "valid_at": "2024-03-01"},
        ],
    }
    await remember_graph(
        ScriptedLLM([tool_calls(("record_graph", extraction))]),
        agent.tiers.graph,
        "car",
        turns[:3],
        GRAPH_ON.graph,
    )
    tools = agent.tools("car", "c")
    await tools.recall.add_many([recall_doc(m) for m in turns])
    assert "graph_search" in [s.name for s in tools.specs]
    found = await invoke(tools, "graph_search", entity="melanie")
    assert found["entity"] == "Melanie" and sorted(found["relations"]) == [
        "Melanie -lives_in-> Lisbon (since 2024-03-01)",
        "Melanie -sister_of-> Caroline (since 1990-05-01)",
    ]
    before = await invoke(tools, "graph_search", entity="Melanie", as_of="2024-02-01")
    assert before["relations"] == ["Melanie -sister_of-> Caroline (since 1990-05-01)"]  # before she moved
    assert (await invoke(tools, "graph_search", entity="Zed")) == {"entity": "Zed", "found": False}
    question = "where does the sister of the person who adopted a dog live"
    plain = MemoryTools(tools.core, {}, tools.archival, tools.recall)
    plain_ids = [r["id"] for r in (await invoke(plain, "conversation_search", query=question))["results"]]
    graph_ids = [r["id"] for r in (await invoke(tools, "conversation_search", query=question))["results"]]
    assert "t3" not in plain_ids  # "I moved to Lisbon" shares no word with the question
    assert "t3" in graph_ids  # adopted a dog -> Caroline -> her sister Melanie -> where she lives
    off = TieredAssistant(make_runtime(ScriptedLLM([]), client=redis_client)).tools("car", "c")
    assert "graph_search" not in [s.name for s in off.specs]


async def test_facts_in_the_prompt_are_found_through_the_graph(redis_client: aioredis.Redis) -> None:
    from brain.memory.facts import Fact
    from brain.memory.graph import Relation

    runtime = make_runtime(ScriptedLLM([]), client=redis_client, memory_settings=GRAPH_ON, prefix="gp")
    assert runtime.tiers is not None
    facts, graph = runtime.tiers.facts, runtime.tiers.graph
    adopted, _ = await facts.add("u", Fact(text="Caroline adopted a puppy called Biscuit"))
    sister, _ = await facts.add("u", Fact(text="Melanie is Caroline's sister"))
    moved, _ = await facts.add("u", Fact(text="Melanie moved to Porto in March"))
    for i in range(12):
        await facts.add("u", Fact(text=f"Neighbour {i} has a garden where they grow herbs"))
    caroline, melanie, biscuit, porto = await graph.upsert(
        "u",
        [
            ("Caroline", "person", []),
            ("Melanie", "person", []),
            ("Biscuit", "animal", []),
            ("Porto", "place", []),
        ],
    )
    for source, verb, target, fact in (
        (caroline, "adopted", biscuit, adopted),
        (melanie, "sister_of", caroline, sister),
        (melanie, "lives_in", porto, moved),
    ):
        await graph.relate("u", Relation(source=source, relation=verb, target=target, fact_id=fact.id))
        await graph.mention("u", [(source, fact.id), (target, fact.id)])
    question = "Which city is the sister of Biscuit's owner living in?"
    with_graph = await Assistant(runtime).relevant_facts("u", question)
    off = make_runtime(ScriptedLLM([]), client=redis_client, memory_settings=MemorySettings(), prefix="gp")
    without = await Assistant(off).relevant_facts("u", question)
    assert moved.text in with_graph and moved.text not in without
