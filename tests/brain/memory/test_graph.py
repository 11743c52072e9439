"""Graph memory on both servers: resolution without an LLM, relations retired never deleted, audit,
neighbourhoods as of a date, tenants apart."""

from __future__ import annotations

import json

import pytest
import redis.asyncio as aioredis

from brain.errors import ConflictError, InputError
from brain.memory.graph import (
    Entity,
    Neighbourhood,
    Relation,
    entity_id,
    name_key,
    query_names,
    relation_name,
    render,
)
from tests.support.stores import redis_tiers


def test_names_and_relations_are_normalised() -> None:
    assert name_key("Caroline") == name_key(" caroline ") == name_key("CAROLINE!") == "caroline"
    assert name_key("The Louvre") == "louvre" and name_key("Caroline's") == "caroline"
    assert name_key("北京") == "北京" and name_key("Ｃａｒｏｌｉｎｅ") == "caroline"
    assert entity_id("Caroline") == entity_id("caroline") != entity_id("Melanie")
    assert relation_name("Lives in") == "lives_in" and relation_name("sister-of") == "sister_of"
    assert relation_name("住在") == "住在"


async def test_entities_resolve_by_name_and_alias(redis_client: aioredis.Redis) -> None:
    graph = redis_tiers(redis_client, prefix="g1").graph
    first = await graph.upsert("u", [("Caroline", "person", ["Caro"]), ("Melanie", "person", [])])
    again = await graph.upsert(
        "u", [("caroline", "person", []), ("caro", "person", ["Carrie"]), ("Mel", "person", [])]
    )
    assert again[0] == again[1] == first[0] and again[2] not in first  # "Mel" is nobody we know yet
    assert await graph.resolve("u", ["CARRIE", "melanie", "Bob"]) == {"carrie": first[0], "melanie": first[1]}
    entities = await graph.entities("u", first)
    assert entities[first[0]].name == "Caroline" and set(entities[first[0]].aliases) == {"Caro", "Carrie"}
    assert entities[first[1]].aliases == ()
    assert await graph.resolve("other-user", ["Caroline"]) == {}
    with pytest.raises(InputError):
        await graph.upsert("u", [("!!!", "thing", [])])


async def test_relations_are_retired_never_deleted_and_audited(redis_client: aioredis.Redis) -> None:
    graph, facts = redis_tiers(redis_client, prefix="g2").graph, redis_tiers(redis_client, prefix="g2").facts
    caroline, lisbon, porto = await graph.upsert(
        "u", [("Caroline", "person", []), ("Lisbon", "city", []), ("Porto", "city", [])]
    )
    lives = Relation(
        source=caroline, relation="lives_in", target=lisbon, created_at=100, source_turns=("t1",)
    )
    stored, new = await graph.relate("u", lives, actor="test", label="Caroline -lives_in-> Lisbon")
    same, again = await graph.relate("u", Relation(source=caroline, relation="lives_in", target=lisbon))
    assert new and not again and same.id == stored.id
    await graph.mention("u", [(caroline, "t1"), (lisbon, "t1"), (caroline, "f1")])
    assert await graph.named_in("u", ["t1", "f1", "t9"]) == {"t1": [caroline, lisbon], "f1": [caroline]}
    assert (await graph.entities("u", [caroline]))[caroline].mentions == 2
    moved = Relation(source=caroline, relation="lives_in", target=porto, created_at=200)
    await graph.relate("u", moved)
    assert await graph.retire("u", lives.id, invalid_at=150, reason="moved")
    assert not await graph.retire("u", lives.id)
    now = await graph.neighbourhood("u", [caroline])
    assert [r.target for r in now.relations] == [porto]
    then = await graph.neighbourhood("u", [caroline], as_of=120)
    assert [r.target for r in then.relations] == [lisbon] and now.entities[porto].name == "Porto"
    assert then.lines() == ["Caroline -lives_in-> Lisbon [retired]"]
    everything = await graph.everything("u", current_only=False)
    assert len(everything.relations) == 2  # the retired one is still there
    events = [e for e in await facts.history("u") if e.subject == "relation"]
    assert [(e.event, e.fact_id) for e in events] == [
        ("ADD", lives.id),
        ("ADD", moved.id),
        ("DELETE", lives.id),
    ]
    assert events[0].new_text == "Caroline -lives_in-> Lisbon" and events[0].source_turns == ("t1",)
    with pytest.raises(InputError, match="graph"):
        await facts.rollback("u", events[2].id)
    await graph.relate("u", Relation(source=caroline, relation="lives_in", target=lisbon))
    with pytest.raises(ConflictError):  # she lives in Lisbon again: the old relation cannot come back too
        await graph.rollback("u", events[2])
    await graph.rollback("u", events[1])  # the move is undone: Porto retired
    assert [r.target for r in (await graph.neighbourhood("u", [caroline])).relations] == [lisbon]
    assert (await facts.history("u"))[-1].event == "ROLLBACK"
    with pytest.raises(InputError):
        await graph.retire("u", "nope")


def test_pictures_and_query_names() -> None:
    ann, bea = Entity(id="a", name='Ann "the cook"', type="person"), Entity(id="b", name="北京", type="place")
    graph = Neighbourhood(
        entities={"a": ann, "b": bea},
        relations=(
            Relation(source="a", relation="lives_in", target="b", valid_at=0.0),
            Relation(source="a", relation="visited", target="b", expired_at=5.0),
        ),
    )
    mermaid = render(graph, "mermaid")
    assert 'n0["Ann #quot;the cook#quot;"]' in mermaid and "n0 -->|lives_in| n1" in mermaid
    assert "n0 -.->|visited| n1" in mermaid  # retired: dashed
    dot = render(graph, "dot")
    assert 'label="Ann \\"the cook\\""' in dot and 'n0 -> n1 [label="visited", style=dashed]' in dot
    data = json.loads(render(graph, "json"))
    assert data["relations"][0]["valid_at"] == "1970-01-01" and data["entities"][1]["name"] == "北京"
    names = query_names("Where does Caroline's sister live? 她住在北京吗")
    assert {"Caroline", "sister live", "北京"} <= set(names)
