"""Fact extraction and reconciliation: tolerant parsing, strict results, ids the model invents rejected."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
import redis.asyncio as aioredis

from actions.fact_block import FACT_LIST
from actions.facts import (
    RECONCILE_SCHEMA,
    NewFact,
    extract_schema,
    parse_decisions,
    parse_facts,
    parse_summary,
    render_reconcile,
)
from actions.remember import remember
from brain.errors import LLMError, MalformedReplyError
from brain.llm.protocol import JsonSchema
from brain.message import Message
from brain.testing import ScriptedCall, ScriptedLLM
from tests.support.stores import redis_tiers


@pytest.mark.parametrize(
    "reply",
    [
        '{"facts": [{"text": "Is vegetarian", "category": "preferences"}]}',
        '```json\n{"facts": [{"text": "Is vegetarian", "category": "preferences"}]}\n```',
        'Sure! Here you go: {"facts": ["Is vegetarian"]} Hope that helps.',
        '```json\n{"facts": [{"text": "Is vegetarian", "category": "preferences", "valid_at": None,},]}\n```',
        "{'facts': [{'text': 'Is vegetarian', 'category': 'preferences'}]}",
    ],
)
def test_extraction_replies_in_many_dresses(reply: str) -> None:
    assert [f.text for f in parse_facts(reply)] == ["Is vegetarian"]


@pytest.mark.parametrize("reply", ["", "no facts", '{"fact": []}', '{"facts": [{"txt": "x"}]}', "[1, 2]"])
def test_unusable_extraction_is_an_error_not_no_facts(reply: str) -> None:
    with pytest.raises(MalformedReplyError):
        parse_facts(reply)


def test_an_unusable_reply_says_what_came_back() -> None:
    with pytest.raises(MalformedReplyError, match=r"^no JSON in the reply: 'I am sorry, I cannot'$"):
        parse_facts("I am sorry, I cannot")
    with pytest.raises(
        MalformedReplyError, match=r"^expected \{\"facts\": \[\.\.\.\]\}, got '\{\"fact\": \[\]\}'$"
    ):
        parse_facts('{"fact": []}')
    with pytest.raises(MalformedReplyError, match=r"^the reply ends inside its JSON: "):
        parse_facts('{"facts": [{"text": "Is vegetar')


def test_reconciliation_never_shows_real_ids_and_rejects_invented_ones() -> None:
    prompt = render_reconcile(["Loves Chinese food"], ["Hates Chinese food"])
    assert "real-uuid" not in json.dumps([m.model_dump() for m in prompt]) and "0: Loves Chinese food" in (
        prompt[1].content or ""
    )
    reply = json.dumps(
        {
            "memory": [
                {"event": "UPDATE", "id": "0", "text": "Hates Chinese food", "new": 0},
                {"event": "DELETE", "id": "7"},
                {"event": "NONE", "id": "3f2a-uuid"},
                {"event": "EXPLODE", "id": "0"},
            ]
        }
    )
    decisions, rejected = parse_decisions(reply, ["real-uuid"], [NewFact(text="Hates Chinese food")])
    assert [(d.event, d.existing, d.text) for d in decisions] == [
        ("UPDATE", "real-uuid", "Hates Chinese food")
    ]
    assert len(rejected) == 3


def strict_objects(schema: Any) -> list[dict[str, Any]]:
    """Every object schema in `schema` that breaks the strict subset of structured output."""
    found = []
    if isinstance(schema, dict):
        if schema.get("type") == "object" and (
            set(schema.get("required", ())) != set(schema["properties"])
            or schema.get("additionalProperties") is not False
        ):
            found.append(schema)
        for value in schema.values():
            found += strict_objects(value)
    elif isinstance(schema, list):
        for value in schema:
            found += strict_objects(value)
    return found


SHAPES = [extract_schema(), extract_schema(fold=True), RECONCILE_SCHEMA, FACT_LIST]


@pytest.mark.parametrize("schema", SHAPES, ids=lambda s: s.name)
def test_reply_shapes_are_valid_strict_json_schemas(schema: JsonSchema) -> None:
    jsonschema.Draft202012Validator.check_schema(schema.shape)
    assert strict_objects(schema.shape) == []


def test_replies_held_to_the_shapes_parse() -> None:
    extracted = {
        "facts": [
            {
                "text": "住在北京",
                "key": "user.city",
                "value": "北京",
                "category": "personal",
                "valid_at": None,
            }
        ],
        "summary": "用户住在北京。",
    }
    jsonschema.validate(extracted, extract_schema(fold=True).shape)
    with pytest.raises(jsonschema.ValidationError):  # the summary is required when asked for
        jsonschema.validate({"facts": []}, extract_schema(fold=True).shape)
    reply = json.dumps(extracted, ensure_ascii=False)
    assert [f.text for f in parse_facts(reply)] == ["住在北京"] and parse_summary(reply) == "用户住在北京。"
    assert [(f.key, f.value) for f in parse_facts(reply)] == [("user.city", "北京")]
    decided = {"memory": [{"event": "UPDATE", "id": "0", "text": "住在上海", "new": 0}]}
    jsonschema.validate(decided, RECONCILE_SCHEMA.shape)
    decisions, rejected = parse_decisions(json.dumps(decided), ["real"], [NewFact(text="住在上海")])
    assert [(d.event, d.existing) for d in decisions] == [("UPDATE", "real")] and rejected == []


def facts_reply(*texts: str) -> str:
    return json.dumps({"facts": [{"text": t, "category": "preferences"} for t in texts]})


def turn(text: str) -> list[Message]:
    return [Message(role="user", content=text, sent_from="user"), Message(role="assistant", content="Noted.")]


async def test_exact_repeats_cost_no_reconciliation(redis_client: aioredis.Redis) -> None:
    store = redis_tiers(redis_client).facts
    llm = ScriptedLLM([facts_reply("Is vegetarian", "Lives in Oslo"), facts_reply("is vegetarian.")])
    first = await remember(llm, store, "ann", turn("I'm vegetarian and I live in Oslo"))
    assert (first.added, first.calls) == (2, 1)  # nothing related yet: no second call
    again = await remember(llm, store, "ann", turn("I'm vegetarian"))
    assert (again.duplicates, again.added, again.calls) == (1, 0, 1)  # a known fact: no reconciliation
    for _ in range(3):  # the very same turn again, its facts all current: no call at all
        repeat = await remember(llm, store, "ann", turn("I'm vegetarian"))
        assert repeat.repeat and repeat.calls == 0
    assert sorted(f.text for f in await store.all("ann")) == ["Is vegetarian", "Lives in Oslo"]
    llm.assert_consumed()


async def test_a_repeated_turn_is_read_again_once_its_facts_changed(redis_client: aioredis.Redis) -> None:
    store = redis_tiers(redis_client).facts
    llm = ScriptedLLM([facts_reply("Likes tea"), facts_reply("Likes tea")])
    await remember(llm, store, "bo", turn("I like tea"))
    fact = (await store.all("bo"))[0]
    await store.retire("bo", fact.id, actor="test", reason="user said otherwise")
    again = await remember(llm, store, "bo", turn("I like tea"))  # said again after the change
    assert not again.repeat and again.added == 1 and [f.text for f in await store.all("bo")] == ["Likes tea"]
    llm.assert_consumed()


async def test_contradiction_retires_the_old_fact_and_keeps_both_in_history(
    redis_client: aioredis.Redis,
) -> None:
    store = redis_tiers(redis_client).facts

    def reconcile(call: ScriptedCall) -> str:
        assert "0: I love Chinese food" in (call.messages[1].content or "")
        return json.dumps(
            {"memory": [{"event": "UPDATE", "id": "0", "text": "I hate Chinese food", "new": 0}]}
        )

    llm = ScriptedLLM([facts_reply("I love Chinese food"), facts_reply("I hate Chinese food"), reconcile])
    await remember(llm, store, "ann", turn("I love Chinese food"))
    report = await remember(llm, store, "ann", turn("Actually I hate Chinese food"))
    assert (report.updated, report.calls) == (1, 2)
    assert [c.json_schema for c in llm.calls] == [extract_schema(), extract_schema(), RECONCILE_SCHEMA]
    assert [f.text for f in await store.all("ann")] == ["I hate Chinese food"]
    every = await store.all("ann", current_only=False)
    assert len(every) == 2 and [e.event for e in await store.history("ann")] == ["ADD", "UPDATE"]
    await store.rollback("ann", (await store.history("ann"))[-1].id)
    assert [f.text for f in await store.all("ann")] == ["I love Chinese food"]


async def test_invented_ids_are_not_applied(redis_client: aioredis.Redis) -> None:
    store = redis_tiers(redis_client).facts
    hallucinating = json.dumps(
        {"memory": [{"event": "DELETE", "id": "12"}, {"event": "UPDATE", "id": "abc", "text": "x", "new": 0}]}
    )
    llm = ScriptedLLM([facts_reply("Plays chess"), facts_reply("Plays chess on Sundays"), hallucinating])
    await remember(llm, store, "bo", turn("I play chess"))
    report = await remember(llm, store, "bo", turn("I play chess on Sundays"))
    assert len(report.rejected) == 2 and (report.added, report.updated, report.retired) == (0, 0, 0)
    assert [f.text for f in await store.all("bo")] == ["Plays chess"]


async def test_a_bad_reply_applies_nothing(redis_client: aioredis.Redis) -> None:
    store = redis_tiers(redis_client).facts
    with pytest.raises(LLMError):
        await remember(ScriptedLLM(["I could not find any facts, sorry."]), store, "cy", turn("I am Cy"))
    assert await store.all("cy") == [] and await store.history("cy") == []


async def test_facts_keep_the_users_language(redis_client: aioredis.Redis) -> None:
    store = redis_tiers(redis_client).facts
    llm = ScriptedLLM([facts_reply("喜欢吃辣"), facts_reply("喜欢吃辣。")])
    await remember(llm, store, "dai", turn("我喜欢吃辣"))
    again = await remember(llm, store, "dai", turn("我很喜欢吃辣"))
    assert again.duplicates == 1 and [f.text for f in await store.all("dai")] == ["喜欢吃辣"]
    assert "the language the user writes in" in (llm.calls[0].messages[0].content or "")


async def test_a_wording_matched_to_a_known_fact_costs_no_call_the_next_time(
    redis_client: aioredis.Redis,
) -> None:
    store = redis_tiers(redis_client).facts
    same = json.dumps({"memory": [{"event": "NONE", "id": "0", "new": 0}]})
    llm = ScriptedLLM(
        [
            facts_reply("Lives in Oslo"),
            facts_reply("Has a home in Oslo"),
            same,
            facts_reply("Has a home in Oslo"),
        ]
    )
    await remember(llm, store, "cy", turn("I live in Oslo"))
    matched = await remember(llm, store, "cy", turn("My home is in Oslo"))
    assert (matched.calls, matched.unchanged) == (2, 1)  # reconciled once: the same fact
    again = await remember(llm, store, "cy", turn("Yes, my home is in Oslo"))  # other turns, same wording
    assert (again.calls, again.duplicates) == (1, 1)  # an exact duplicate now: no reconciliation
    assert [f.text for f in await store.all("cy")] == ["Lives in Oslo"]
    llm.assert_consumed()
