"""Graph memory endings, against a real Redis: "Caroline left Google" (or 小王从腾讯离职了, 我不再住在上海)
retires the relation it ends, audited with a reason; a relation that merely names the same entity ends
nothing. Flagged by the model (`ends`), or spelled as an ending when it is not."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
import redis.asyncio as aioredis

from actions.graph import RECORD_GRAPH, render_extract
from actions.remember_graph import remember_graph
from brain.errors import LLMError
from brain.llm.protocol import Completion
from brain.memory.graph import GraphMemory, ended_relation
from brain.memory.tiers import Tiers
from brain.message import Message
from brain.settings import GraphSettings
from brain.storage.facts import AuditEvent
from brain.testing import ScriptedCall, ScriptedLLM, tool_calls
from tests.support.stores import redis_tiers

SETTINGS = GraphSettings(enabled=True)
MAY = datetime(2024, 5, 2, 9, 30, tzinfo=UTC)
JOB = {
    "entities": [
        {"name": "Caroline", "type": "person"},
        {"name": "Google", "type": "organisation"},
        {"name": "Lisbon", "type": "place"},
    ],
    "relations": [
        {"source": "Caroline", "relation": "works_at", "target": "Google", "valid_at": "2021-03-01"},
        {"source": "Caroline", "relation": "lives_in", "target": "Lisbon"},
    ],
}


def said(text: str, who: str = "Caroline", turn: str = "t2") -> list[Message]:
    return [Message(id=turn, sent_from=who, content=text, created_at=MAY)]


async def known(tiers: Tiers, graph: dict[str, Any] | None = None) -> ScriptedLLM:
    """Caroline works at Google (since 2021) and lives in Lisbon."""
    llm = ScriptedLLM([tool_calls(("record_graph", graph or JOB))])
    turns = [Message(id="t1", sent_from="Caroline", content="I work at Google and live in Lisbon.")]
    await remember_graph(llm, tiers.graph, "u", turns, SETTINGS)
    return llm


async def current(graph: GraphMemory, name: str) -> list[str]:
    [centre] = (await graph.resolve("u", [name])).values()
    return sorted(line.split(" (")[0] for line in (await graph.neighbourhood("u", [centre])).lines())


async def deletions(tiers: Tiers) -> list[AuditEvent]:
    return [e for e in await tiers.facts.history("u") if e.subject == "relation" and e.event == "DELETE"]


def test_the_extraction_call_can_flag_an_ending() -> None:
    relation = RECORD_GRAPH.parameters["properties"]["relations"]["items"]["properties"]
    assert relation["ends"]["type"] == "boolean"
    prompt = render_extract("Caroline: I left Google.", MAY)[0].content or ""
    assert "ends: true" in prompt and "不再住在上海" in prompt


@pytest.mark.parametrize(
    ("name", "ends"),
    [
        ("no_longer_works_at", "works_at"),
        ("stopped_working_at", "working_at"),
        ("former_employee_of", "employee_of"),
        ("不再住在", "住在"),
        ("已经不再住在", "住在"),
        ("left", ""),
        ("quit_job_at", ""),
        ("moved_away_from", ""),
        ("broke_up_with", ""),
        ("divorced", ""),
        ("离职", ""),
        ("辞职", ""),
        ("搬离", ""),
        ("分手", ""),
        ("离开了", ""),
        ("works_at", None),
        ("visited", None),
        ("moved_to", None),
        ("left_for", None),
        ("住在", None),
        ("notes", None),
        ("leftover", None),
    ],
)
def test_names_that_spell_an_ending(name: str, ends: str | None) -> None:
    assert ended_relation(name) == ends


async def test_left_google_retires_works_at_audited_with_a_reason(redis_client: aioredis.Redis) -> None:
    tiers = redis_tiers(redis_client, prefix="ge1")
    llm = await known(tiers)
    left = {
        "entities": [{"name": "Caroline", "type": "person"}, {"name": "Google", "type": "organisation"}],
        "relations": [{"source": "Caroline", "relation": "works_at", "target": "Google", "ends": True}],
    }
    llm.add(tool_calls(("record_graph", left)))
    report = await remember_graph(llm, tiers.graph, "u", said("I left Google last week."), SETTINGS)
    assert (report.relations, report.retired, report.calls) == (0, 1, 1)  # no second call
    assert await current(tiers.graph, "Caroline") == ["Caroline -lives_in-> Lisbon"]
    [event] = await deletions(tiers)
    assert event.reason == "ended: 'I left Google last week.'" and event.source_turns == ("t2",)
    assert event.old_text.startswith("Caroline -works_at-> Google") and event.actor == "graph-extractor"
    [job] = await tiers.graph.relations("u", [event.fact_id])
    assert job.invalid_at == MAY.timestamp() and not job.current  # ended when it was said
    caroline = (await tiers.graph.resolve("u", ["Caroline"]))["caroline"]
    before = await tiers.graph.neighbourhood("u", [caroline], as_of=MAY.timestamp() - 60)
    assert any("works_at" in line for line in before.lines())  # still true before she said it
    await tiers.rollback("u", event.id)  # audited like any retirement: it can be undone
    assert "Caroline -works_at-> Google" in await current(tiers.graph, "Caroline")


async def test_a_mere_mention_ends_nothing(redis_client: aioredis.Redis) -> None:
    tiers = redis_tiers(redis_client, prefix="ge2")
    llm = await known(tiers)
    visited = {
        "entities": [{"name": "Caroline", "type": "person"}, {"name": "Google", "type": "organisation"}],
        "relations": [{"source": "Caroline", "relation": "visited", "target": "Google", "ends": False}],
    }
    llm.add(tool_calls(("record_graph", visited)))
    report = await remember_graph(llm, tiers.graph, "u", said("I visited Google's new office."), SETTINGS)
    assert (report.relations, report.retired, report.calls) == (1, 0, 1)
    assert await current(tiers.graph, "Caroline") == [
        "Caroline -lives_in-> Lisbon",
        "Caroline -visited-> Google",
        "Caroline -works_at-> Google",
    ]
    assert await deletions(tiers) == []


async def test_an_unflagged_left_is_checked_among_the_relations_between_the_two(
    redis_client: aioredis.Redis,
) -> None:
    tiers = redis_tiers(redis_client, prefix="ge3")
    visit = {"source": "Caroline", "relation": "visited", "target": "Google"}
    job = {**JOB, "relations": [*JOB["relations"], visit]}
    llm = await known(tiers, job)
    left = {"entities": [], "relations": [{"source": "Caroline", "relation": "left", "target": "Google"}]}

    def retire_the_job(call: ScriptedCall) -> Completion:
        shown = call.prompt_text.split("New relations")[0]
        index = next(int(line.split(".")[0]) for line in shown.splitlines() if "-works_at->" in line)
        return tool_calls(("retire_relations", {"ids": [index], "reason": "she left the company"}))

    llm.add(tool_calls(("record_graph", left)), retire_the_job)
    report = await remember_graph(llm, tiers.graph, "u", said("I left Google."), SETTINGS)
    assert (report.relations, report.retired, report.calls) == (0, 1, 2)
    check = llm.calls[-1].prompt_text
    assert "Caroline -left-> Google [ended]" in check and "[ended]" in (
        llm.calls[-1].messages[0].content or ""
    )
    existing = check.split("New relations")[0]
    assert "-visited-> Google" in existing and "lives_in" not in existing  # only what joins the two
    assert await current(tiers.graph, "Caroline") == [
        "Caroline -lives_in-> Lisbon",
        "Caroline -visited-> Google",
    ]
    [event] = await deletions(tiers)
    assert event.reason == "she left the company" and event.old_text.startswith("Caroline -works_at-> Google")


async def test_chinese_endings(redis_client: aioredis.Redis) -> None:
    tiers = redis_tiers(redis_client, prefix="ge4")
    before = {
        "entities": [{"name": "小王", "type": "person"}, {"name": "小李", "type": "person"}],
        "relations": [
            {"source": "小王", "relation": "就职于", "target": "腾讯"},
            {"source": "小王", "relation": "朋友", "target": "小李"},
            {"source": "小李", "relation": "住在", "target": "上海"},
        ],
    }
    llm = await known(tiers, before)
    quit_job = {
        "entities": [],
        "relations": [{"source": "小王", "relation": "就职于", "target": "腾讯", "ends": True}],
    }
    moved = {"entities": [], "relations": [{"source": "小李", "relation": "不再住在", "target": "上海"}]}
    llm.add(tool_calls(("record_graph", quit_job)), tool_calls(("record_graph", moved)))
    first = await remember_graph(llm, tiers.graph, "u", said("小王从腾讯离职了。", who="小李"), SETTINGS)
    second = await remember_graph(
        llm, tiers.graph, "u", said("我不再住在上海了。", who="小李", turn="t3"), SETTINGS
    )
    assert (first.retired, first.calls, second.retired, second.calls) == (1, 1, 1, 1)
    assert await current(tiers.graph, "小王") == ["小王 -朋友-> 小李"]
    assert [e.reason for e in await deletions(tiers)] == [
        "ended: '小王从腾讯离职了。'",
        "ended: '我不再住在上海了。'",
    ]


async def test_an_unflagged_chinese_verb_is_checked(redis_client: aioredis.Redis) -> None:
    tiers = redis_tiers(redis_client, prefix="ge5")
    job = {"source": "小王", "relation": "就职于", "target": "腾讯"}
    llm = await known(tiers, {"entities": [], "relations": [job]})
    quit_job = {"entities": [], "relations": [{"source": "小王", "relation": "离职", "target": "腾讯"}]}
    llm.add(tool_calls(("record_graph", quit_job)), tool_calls(("retire_relations", {"ids": [0]})))
    report = await remember_graph(llm, tiers.graph, "u", said("小王从腾讯离职了", who="小李"), SETTINGS)
    assert (report.retired, report.calls) == (1, 2)
    assert "0. 小王 -就职于-> 腾讯" in llm.calls[-1].prompt_text
    assert [e.reason for e in await deletions(tiers)] == ["ended"]  # the model gave none


async def test_a_batch_ending_and_stating_one_relation_keeps_the_later(redis_client: aioredis.Redis) -> None:
    tiers = redis_tiers(redis_client, prefix="ge6")
    llm = await known(tiers)
    back = {
        "entities": [],
        "relations": [
            {
                "source": "Caroline",
                "relation": "works_at",
                "target": "Google",
                "ends": True,
                "valid_at": "2019-01-01",
            },
            {"source": "Caroline", "relation": "works_at", "target": "Google"},
        ],
    }
    llm.add(tool_calls(("record_graph", back)))
    text = "I quit Google in 2019, but I'm back there now."
    report = await remember_graph(llm, tiers.graph, "u", said(text), SETTINGS)
    assert (report.relations, report.retired, report.calls) == (0, 0, 1)  # known already: nothing new
    # the same ending alone, dated before the job began (2021), does not end it either
    llm.add(tool_calls(("record_graph", {"entities": [], "relations": back["relations"][:1]})))
    report = await remember_graph(llm, tiers.graph, "u", said("I quit Google in 2019.", turn="t3"), SETTINGS)
    assert (report.retired, report.calls) == (0, 1)
    assert "Caroline -works_at-> Google" in await current(tiers.graph, "Caroline")


async def test_an_unusable_check_retires_nothing(redis_client: aioredis.Redis) -> None:
    tiers = redis_tiers(redis_client, prefix="ge7")
    llm = await known(tiers)
    moved = {
        "entities": [],
        "relations": [
            {"source": "Caroline", "relation": "works_at", "target": "Google", "ends": True},
            {"source": "Caroline", "relation": "lives_in", "target": "Porto"},
        ],
    }
    llm.add(tool_calls(("record_graph", moved)), tool_calls(("retire_relations", {"ids": [5]})))
    with pytest.raises(LLMError, match="outside"):
        await remember_graph(llm, tiers.graph, "u", said("I left Google and moved to Porto."), SETTINGS)
    assert await current(tiers.graph, "Caroline") == [
        "Caroline -lives_in-> Lisbon",
        "Caroline -works_at-> Google",
    ]
    assert await deletions(tiers) == []
