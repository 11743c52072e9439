"""Graph extraction through tool calls, against a real Redis: one call per batch, a second only for a
possible contradiction, nothing applied from a malformed call, the same batch never paid twice."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import redis.asyncio as aioredis

from actions.remember_graph import remember_graph
from brain.errors import LLMError
from brain.message import Message
from brain.settings import GraphSettings
from brain.testing import ScriptedLLM, tool_calls
from tests.support.stores import redis_tiers

SETTINGS = GraphSettings(enabled=True)
FIRST = [
    Message(id="t1", sent_from="Caroline", content="We adopted a dog named Rex last week!"),
    Message(id="t2", sent_from="Melanie", content="My sister Caroline lives in Lisbon, right?"),
]
GRAPH = {
    "entities": [
        {"name": "Caroline", "type": "Person", "aliases": ["Caro"]},
        {"name": "Melanie", "type": "person"},
        {"name": "Rex", "type": "animal"},
    ],
    "relations": [
        {"source": "Caroline", "relation": "adopted", "target": "Rex"},
        {"source": "Melanie", "relation": "Sister of", "target": "caroline"},
        {"source": "Caroline", "relation": "lives in", "target": "Lisbon", "valid_at": "2021-03-01"},
    ],
}


async def test_one_call_extracts_entities_and_relations(redis_client: aioredis.Redis) -> None:
    graph, llm = (
        redis_tiers(redis_client, prefix="rg1").graph,
        ScriptedLLM([tool_calls(("record_graph", GRAPH))]),
    )
    facts = {"f1": "Caroline adopted a dog named Rex"}
    report = await remember_graph(
        llm, graph, "u", FIRST, SETTINGS, facts=facts, today=datetime(2023, 5, 8, tzinfo=UTC)
    )
    assert (report.entities, report.relations, report.retired, report.calls) == (4, 3, 0, 1)
    call = llm.calls[0]
    assert [t.name for t in call.tools] == ["record_graph"] and "Today is 2023-05-08" in call.prompt_text
    assert call.tool_choice == "required"
    assert "Caroline: We adopted a dog named Rex" in call.prompt_text
    ids = await graph.resolve("u", ["caro", "Melanie", "Rex", "Lisbon"])
    caroline, melanie, rex, lisbon = (ids[k] for k in ("caro", "melanie", "rex", "lisbon"))
    around = await graph.neighbourhood("u", [caroline])
    assert sorted(around.lines()) == [
        "Caroline -adopted-> Rex",
        "Caroline -lives_in-> Lisbon (since 2021-03-01)",
        "Melanie -sister_of-> Caroline",
    ]
    adopted = next(r for r in around.relations if r.relation == "adopted")
    assert adopted.fact_id == "f1" and adopted.source_turns == ("t1",)  # Caroline said it, naming Rex
    sister = next(r for r in around.relations if r.relation == "sister_of")
    assert sister.source_turns == ("t2",) and sister.fact_id is None
    named = {d: set(e) for d, e in (await graph.named_in("u", ["t1", "t2", "f1"])).items()}
    # what each text names, and both ends of what was learned from it (Caroline said t1, Melanie t2)
    assert named == {"t1": {rex, caroline}, "t2": {caroline, lisbon, melanie}, "f1": {caroline, rex}}
    assert (await graph.entities("u", [caroline]))[caroline].type == "person"
    again = await remember_graph(llm, graph, "u", FIRST, SETTINGS, facts=facts)
    assert again.repeat and len(llm.calls) == 1  # the same batch: no call
    assert (await graph.entities("u", [melanie]))[melanie].mentions == 1


async def test_a_possible_contradiction_is_checked_by_a_second_call(redis_client: aioredis.Redis) -> None:
    graph, facts = (
        redis_tiers(redis_client, prefix="rg2").graph,
        redis_tiers(redis_client, prefix="rg2").facts,
    )
    llm = ScriptedLLM([tool_calls(("record_graph", GRAPH))])
    await remember_graph(llm, graph, "u", FIRST, SETTINGS)
    moved = {
        "entities": [{"name": "Caroline", "type": "person"}, {"name": "Porto", "type": "place"}],
        "relations": [
            {"source": "Caroline", "relation": "lives_in", "target": "Porto", "valid_at": "2023-06-01"},
            {"source": "Caroline", "relation": "adopted", "target": "Rex"},  # known: nothing to check
        ],
    }
    llm.add(
        tool_calls(("record_graph", moved)), tool_calls(("retire_relations", {"ids": [0], "reason": "moved"}))
    )
    turns = [Message(id="t3", sent_from="Caroline", content="We moved to Porto in June.")]
    report = await remember_graph(llm, graph, "u", turns, SETTINGS)
    assert (report.relations, report.retired, report.calls) == (1, 1, 2)
    check = llm.calls[-1].prompt_text
    assert "0. Caroline -lives_in-> Lisbon" in check and "Caroline -lives_in-> Porto" in check
    assert "adopted" not in check.split("New relations")[0]  # only the possible contradiction is shown
    caroline = (await graph.resolve("u", ["Caroline"]))["caroline"]
    assert [
        r.split(" (")[0] for r in (await graph.neighbourhood("u", [caroline])).lines() if "lives_in" in r
    ] == ["Caroline -lives_in-> Porto"]
    june = datetime(2023, 6, 1, tzinfo=UTC).timestamp()
    before = await graph.neighbourhood("u", [caroline], as_of=june - 86_400)
    assert any("Lisbon" in line for line in before.lines())
    retired = [e for e in await facts.history("u") if e.subject == "relation" and e.event == "DELETE"]
    assert len(retired) == 1 and retired[0].reason == "moved" and retired[0].source_turns == ("t3",)


@pytest.mark.parametrize(
    "reply",
    [
        "I found Caroline and Rex.",  # no tool call
        tool_calls(("record_graph", {"entities": "Caroline"})),
        tool_calls(("record_graph", {"entities": [{"type": "person"}], "relations": []})),
    ],
)
async def test_a_malformed_call_applies_nothing(redis_client: aioredis.Redis, reply: object) -> None:
    graph = redis_tiers(redis_client, prefix="rg3").graph
    llm = ScriptedLLM([reply, tool_calls(("record_graph", GRAPH))])  # type: ignore[list-item]
    with pytest.raises(LLMError):
        await remember_graph(llm, graph, "u", FIRST, SETTINGS)
    assert await graph.resolve("u", ["Caroline"]) == {}
    assert (await remember_graph(llm, graph, "u", FIRST, SETTINGS)).relations == 3  # tried again: applied


async def test_caps_and_invented_ids(redis_client: aioredis.Redis) -> None:
    graph = redis_tiers(redis_client, prefix="rg4").graph
    capped = GraphSettings(enabled=True, max_entities=2, max_relations=1)
    llm = ScriptedLLM([tool_calls(("record_graph", GRAPH))])
    report = await remember_graph(llm, graph, "u", FIRST, capped)
    assert report.cut == 3 and report.relations == 1
    moved = {"entities": [], "relations": [{"source": "Caroline", "relation": "adopted", "target": "Bella"}]}
    llm.add(tool_calls(("record_graph", moved)), tool_calls(("retire_relations", {"ids": [7]})))
    with pytest.raises(LLMError, match="outside"):
        await remember_graph(llm, graph, "u", [Message(id="t9", content="Bella!")], capped)
