"""`GraphStoreConformance`: what every `GraphStore` does (`brain.storage.graph`), as tests. The suite needs
pytest-asyncio in auto mode (`asyncio_mode = "auto"`)."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

from brain.storage import AuditEntry, Backend, Fact
from brain.storage.facts import Event, fact_hash
from brain.storage.graph import Entity, EntityWrite, Relation, entity_id, name_key
from brain.testing.conformance.base import BackendSuite, id_order

__all__ = ["GraphStoreConformance"]


def _user(tag: str) -> str:
    """A user id no other test (or run) uses."""
    return f"conformance-graph-{tag}-{uuid.uuid4().hex}"


def _write(name: str, *aliases: str, kind: str = "person", **fields: Any) -> EntityWrite:
    """An entity write as extraction makes one: keyed by its name, with its aliases' keys."""
    key = name_key(name)
    entity = Entity(id=fields.pop("id", entity_id(name)), name=name, type=kind, aliases=aliases, **fields)
    alias_keys = tuple(k for k in dict.fromkeys(name_key(a) for a in aliases) if k and k != key)
    return EntityWrite(key=key, alias_keys=alias_keys, entity=entity, aliases=aliases)


def _entry(event: Event = "ADD", **fields: Any) -> AuditEntry:
    return AuditEntry(event=event, **fields)


def _relation(source: str, relation: str, target: str, **fields: Any) -> Relation:
    return Relation(source=source, relation=relation, target=target, **fields)


class GraphStoreConformance(BackendSuite):
    """Tests every `GraphStore` passes. Subclass it in a test module and override the `backend` fixture: a
    `Backend` whose `prefix` no other test uses (or an empty one)."""

    async def test_upsert_creates_entities_inid_order(self, backend: Backend) -> None:
        user = _user("create")
        carol, acme = _write("Caroline", "Caro"), _write("Acme Corp", kind="org", created_at=50.5)
        assert await backend.graph.upsert(user, [carol, acme]) == [carol.entity.id, acme.entity.id]
        found = await backend.graph.entities(user, [acme.entity.id, carol.entity.id, "missing"])
        assert found == {carol.entity.id: carol.entity, acme.entity.id: acme.entity}
        assert sorted(await backend.graph.entity_ids(user)) == sorted([carol.entity.id, acme.entity.id])
        assert await backend.graph.upsert(user, []) == []

    async def test_ids_are_stable(self, backend: Backend) -> None:
        user = _user("stable")
        [first] = await backend.graph.upsert(user, [_write("Caroline")])
        [again] = await backend.graph.upsert(user, [_write(" the  CAROLINE!")])
        assert first == again == entity_id("caroline")
        assert await backend.graph.entity_ids(user) == [first]

    async def test_upsert_resolves_by_key_and_merges_aliases(self, backend: Backend) -> None:
        user = _user("merge")
        [cid] = await backend.graph.upsert(user, [_write("Caroline", "Caro")])
        merge = _write("caroline", "Carrie", "Caro", "Caroline", "Carrie", "Lina", id="other-id")
        assert await backend.graph.upsert(user, [merge]) == [cid]
        entity = (await backend.graph.entities(user, [cid]))[cid]
        assert (entity.name, entity.type, entity.aliases) == (
            "Caroline",
            "person",
            ("Caro", "Carrie", "Lina"),
        )
        assert await backend.graph.entity_ids(user) == [cid]

    async def test_upsert_resolves_by_the_first_known_alias_key(self, backend: Backend) -> None:
        user = _user("alias-key")
        x, y = await backend.graph.upsert(user, [_write("Xavier"), _write("Yolanda")])
        write = EntityWrite(
            key="newcomer",
            alias_keys=("nobody", "yolanda", "xavier"),
            entity=Entity(id="n1", name="Newcomer"),
        )
        assert await backend.graph.upsert(user, [write]) == [y]
        assert await backend.graph.resolve(user, ["newcomer", "nobody", "xavier", "yolanda"]) == {
            "newcomer": y,
            "nobody": y,
            "xavier": x,
            "yolanda": y,
        }

    async def test_upsert_key_wins_over_alias_keys(self, backend: Backend) -> None:
        user = _user("key-first")
        x, y = await backend.graph.upsert(user, [_write("Xavier"), _write("Yolanda")])
        write = EntityWrite(key="xavier", alias_keys=("yolanda",), entity=Entity(id="n1", name="Xavier"))
        assert await backend.graph.upsert(user, [write]) == [x]
        assert await backend.graph.resolve(user, ["yolanda"]) == {"yolanda": y}

    async def test_upsert_keeps_an_entity_made_under_the_same_id(self, backend: Backend) -> None:
        user = _user("same-id")
        [eid] = await backend.graph.upsert(user, [_write("Paris", kind="place")])
        clash = EntityWrite(key="city of light", entity=Entity(id=eid, name="City of Light", type="thing"))
        assert await backend.graph.upsert(user, [clash]) == [eid]
        entity = (await backend.graph.entities(user, [eid]))[eid]
        assert (entity.name, entity.type) == ("Paris", "place")
        assert await backend.graph.resolve(user, ["city of light", "paris"]) == {
            "city of light": eid,
            "paris": eid,
        }

    async def test_upsert_sees_its_own_earlier_writes(self, backend: Backend) -> None:
        user = _user("same-call")
        first, second = _write("Bob", "Bobby"), _write("bobby", "Robert", id="other")
        ids = await backend.graph.upsert(user, [first, second])
        assert ids == [first.entity.id, first.entity.id]
        entity = (await backend.graph.entities(user, ids))[ids[0]]
        assert entity.aliases == ("Bobby", "Robert")

    async def test_concurrent_upserts_of_one_name_make_one_entity(self, backend: Backend) -> None:
        user = _user("concurrent-upsert")
        writes = [_write("Dana", f"D{i}", id=uuid.uuid4().hex) for i in range(20)]
        results = await asyncio.gather(*(backend.graph.upsert(user, [w]) for w in writes))
        ids = {i for [i] in results}
        assert len(ids) == 1 and ids <= {w.entity.id for w in writes}
        [eid] = ids
        assert await backend.graph.entity_ids(user) == [eid]
        entity = (await backend.graph.entities(user, [eid]))[eid]
        assert sorted(entity.aliases) == sorted(f"D{i}" for i in range(20))

    async def test_mention_counts_new_pairs(self, backend: Backend) -> None:
        user = _user("mention")
        assert await backend.graph.mention(user, [("e1", "d1"), ("e1", "d2"), ("e2", "d1")]) == 3
        assert await backend.graph.mention(user, [("e1", "d1"), ("e1", "d3")]) == 1
        assert await backend.graph.mention(user, [("e2", "d9"), ("e2", "d9")]) == 1
        assert await backend.graph.mention(user, []) == 0

    async def test_named_in_keeps_the_recordedid_order(self, backend: Backend) -> None:
        user = _user("named-in")
        await backend.graph.mention(user, [("e2", "d1"), ("e1", "d1"), ("e3", "d2")])
        await backend.graph.mention(user, [("e0", "d1"), ("e2", "d1")])
        found = await backend.graph.named_in(user, ["d2", "d1", "d-none"])
        assert found == {"d1": ["e2", "e1", "e0"], "d2": ["e3"]}
        assert await backend.graph.named_in(user, []) == {}

    async def test_mentions_sorted_with_every_entity(self, backend: Backend) -> None:
        user = _user("mentions")
        await backend.graph.mention(user, [("e1", "fact-b"), ("e1", "turn-a"), ("e1", "fact-a")])
        found = await backend.graph.mentions(user, ["e1", "nobody"])
        assert found == {"e1": ["fact-a", "fact-b", "turn-a"], "nobody": []}

    async def test_entities_count_mentions(self, backend: Backend) -> None:
        user = _user("entity-mentions")
        a, b = await backend.graph.upsert(user, [_write("Anna"), _write("Ben")])
        await backend.graph.mention(user, [(a, "d1"), (a, "d2"), (b, "d2"), (a, "d1")])
        found = await backend.graph.entities(user, [a, b, a])
        assert {k: e.mentions for k, e in found.items()} == {a: 2, b: 1}

    async def test_relate_new_and_duplicate(self, backend: Backend) -> None:
        user = _user("relate")
        first = _relation("a", "likes", "b", fact_id="f1", source_turns=("t1",), valid_at=5.0)
        assert await backend.graph.relate(user, first, _entry(new_text="a likes b")) is None
        same = _relation("a", "likes", "b")
        assert await backend.graph.relate(user, same, _entry()) == first.id
        assert await backend.graph.relations(user, [same.id, first.id]) == [first]
        assert len(await backend.facts.history(user)) == 1

    async def test_relate_is_audited_in_the_fact_trail(self, backend: Backend) -> None:
        user = _user("relate-audit")
        fact = Fact(text="Anna knows Ben", hash=fact_hash("Anna knows Ben"))
        await backend.facts.add(user, fact, _entry())
        rel = _relation("anna", "knows", "ben", source_turns=("t2",))
        entry = _entry(actor="worker", reason="turn 2", source_turns=("t2",), new_text="Anna knows Ben")
        await backend.graph.relate(user, rel, entry)
        await backend.graph.retire(user, rel.id, time.time(), None, _entry("DELETE", old_text="gone"))
        added, related, retired = await backend.facts.history(user)
        assert (added.subject, added.fact_id) == ("fact", fact.id)
        assert (related.subject, related.event, related.fact_id) == ("relation", "ADD", rel.id)
        assert (related.actor, related.reason, related.source_turns) == ("worker", "turn 2", ("t2",))
        assert related.new_text == "Anna knows Ben"
        assert (retired.subject, retired.event, retired.old_text) == ("relation", "DELETE", "gone")
        assert id_order(added.id) < id_order(related.id) < id_order(retired.id)

    async def test_concurrent_relates_of_one_statement_store_one(self, backend: Backend) -> None:
        user = _user("concurrent-relate")
        rels = [_relation("a", "owns", "b") for _ in range(20)]
        results = await asyncio.gather(*(backend.graph.relate(user, r, _entry()) for r in rels))
        [stored] = await backend.graph.all_relations(user)
        assert results.count(None) == 1 and all(r in (None, stored.id) for r in results)
        assert len(await backend.facts.history(user)) == 1

    async def test_retire(self, backend: Backend) -> None:
        user = _user("retire")
        rel = _relation("a", "works_at", "b")
        await backend.graph.relate(user, rel, _entry())
        assert await backend.graph.retire(user, rel.id, 100.0, None, _entry("DELETE")) == 1
        [retired] = await backend.graph.relations(user, [rel.id])
        assert (retired.expired_at, retired.invalid_at, retired.current) == (100.0, 100.0, False)
        again = _relation("a", "works_at", "b")
        assert await backend.graph.relate(user, again, _entry()) is None

    async def test_retire_with_invalid_at(self, backend: Backend) -> None:
        user = _user("retire-invalid")
        rel, own = _relation("a", "lives_in", "b"), _relation("a", "lived_in", "c", invalid_at=20.0)
        for r in (rel, own):
            await backend.graph.relate(user, r, _entry())
            assert await backend.graph.retire(user, r.id, 100.0, 50.0, _entry("DELETE")) == 1
        found = await backend.graph.relations(user, [rel.id, own.id])
        assert [(r.expired_at, r.invalid_at) for r in found] == [(100.0, 50.0), (100.0, 20.0)]

    async def test_retire_twice_or_missing_writes_nothing(self, backend: Backend) -> None:
        user = _user("retire-twice")
        rel = _relation("a", "knows", "b")
        await backend.graph.relate(user, rel, _entry())
        assert await backend.graph.retire(user, rel.id, 100.0, None, _entry("DELETE")) == 1
        assert await backend.graph.retire(user, rel.id, 200.0, None, _entry("DELETE")) == 0
        assert await backend.graph.retire(user, "no-such", 200.0, None, _entry("DELETE")) == -1
        [retired] = await backend.graph.relations(user, [rel.id])
        assert retired.expired_at == 100.0
        assert len(await backend.facts.history(user)) == 2

    async def test_restore(self, backend: Backend) -> None:
        user = _user("restore")
        rel = _relation("a", "married_to", "b", created_at=10.0)
        await backend.graph.relate(user, rel, _entry())
        assert await backend.graph.restore(user, rel.id, _entry("ROLLBACK")) == 0
        assert await backend.graph.restore(user, "no-such", _entry("ROLLBACK")) == -1
        await backend.graph.retire(user, rel.id, 100.0, None, _entry("DELETE"))
        assert await backend.graph.restore(user, rel.id, _entry("ROLLBACK", undoes="1-0")) == 1
        assert await backend.graph.relations(user, [rel.id]) == [rel]
        assert await backend.graph.relate(user, _relation("a", "married_to", "b"), _entry()) == rel.id
        events = await backend.facts.history(user)
        assert [(e.event, e.subject, e.undoes) for e in events] == [
            ("ADD", "relation", ""),
            ("DELETE", "relation", ""),
            ("ROLLBACK", "relation", "1-0"),
        ]

    async def test_restore_when_a_current_relation_says_the_same(self, backend: Backend) -> None:
        user = _user("restore-clash")
        old, new = _relation("a", "dates", "b"), _relation("a", "dates", "b")
        await backend.graph.relate(user, old, _entry())
        await backend.graph.retire(user, old.id, 100.0, None, _entry("DELETE"))
        assert await backend.graph.relate(user, new, _entry()) is None
        assert await backend.graph.restore(user, old.id, _entry("ROLLBACK")) == -2
        [still] = await backend.graph.relations(user, [old.id])
        assert not still.current
        assert len(await backend.facts.history(user)) == 3

    async def test_relations_and_all_relations(self, backend: Backend) -> None:
        user = _user("relations")
        rels = [_relation("a", f"rel_{i}", "b", id=f"r{i}") for i in (3, 1, 2)]
        for r in rels:
            await backend.graph.relate(user, r, _entry())
        await backend.graph.retire(user, "r1", 100.0, None, _entry("DELETE"))
        found = await backend.graph.relations(user, ["r2", "missing", "r1"])
        assert [(r.id, r.current) for r in found] == [("r2", True), ("r1", False)]
        every = await backend.graph.all_relations(user)
        assert [(r.id, r.current) for r in every] == [("r1", False), ("r2", True), ("r3", True)]
        assert await backend.graph.relations(user, []) == []

    async def test_adjacent_includes_retired_relations(self, backend: Backend) -> None:
        user = _user("adjacent")
        ab, bc, cd = _relation("a", "x", "b"), _relation("b", "y", "c"), _relation("c", "z", "d")
        for r in (ab, bc, cd):
            await backend.graph.relate(user, r, _entry())
        await backend.graph.retire(user, ab.id, 100.0, None, _entry("DELETE"))
        assert await backend.graph.adjacent(user, ["b"]) == {ab.id, bc.id}
        assert await backend.graph.adjacent(user, ["a", "d", "nobody"]) == {ab.id, cd.id}
        assert await backend.graph.adjacent(user, []) == set()

    async def test_resolve(self, backend: Backend) -> None:
        user = _user("resolve")
        [eid] = await backend.graph.upsert(user, [_write("Dr. Émile Zola", "Zola")])
        assert await backend.graph.resolve(user, [name_key("dr émile zola"), "zola", "nobody"]) == {
            name_key("Dr. Émile Zola"): eid,
            "zola": eid,
        }
        assert await backend.graph.resolve(user, []) == {}

    async def test_applied(self, backend: Backend) -> None:
        user = _user("applied")
        assert await backend.graph.applied(user, "batch") is False
        await backend.graph.set_applied(user, "batch")
        await backend.graph.set_applied(user, "batch")
        assert await backend.graph.applied(user, "batch") is True
        assert await backend.graph.applied(user, "other") is False
        assert await backend.graph.applied(_user("applied-other"), "batch") is False

    async def test_users_are_isolated(self, backend: Backend) -> None:
        alice, bob = _user("alice"), _user("bob")
        [eid] = await backend.graph.upsert(alice, [_write("Secret Friend")])
        rel = _relation(eid, "knows", "x")
        await backend.graph.relate(alice, rel, _entry())
        await backend.graph.mention(alice, [(eid, "d1")])
        await backend.graph.set_applied(alice, "batch")
        assert await backend.graph.entity_ids(bob) == []
        assert await backend.graph.entities(bob, [eid]) == {}
        assert await backend.graph.resolve(bob, ["secret friend"]) == {}
        assert await backend.graph.relations(bob, [rel.id]) == []
        assert await backend.graph.all_relations(bob) == []
        assert await backend.graph.adjacent(bob, [eid]) == set()
        assert await backend.graph.named_in(bob, ["d1"]) == {}
        assert await backend.graph.mentions(bob, [eid]) == {eid: []}
        assert await backend.graph.applied(bob, "batch") is False
        assert await backend.graph.retire(bob, rel.id, 100.0, None, _entry("DELETE")) == -1
        assert await backend.facts.history(bob) == []
        assert await backend.graph.relate(bob, _relation(eid, "knows", "x"), _entry()) is None

    async def test_str_and_bytes_ids_are_one_user(self, backend: Backend) -> None:
        user = _user("bytes")
        [eid] = await backend.graph.upsert(user.encode(), [_write("Zoe")])
        assert await backend.graph.resolve(user, ["zoe"]) == {"zoe": eid}
        rel = _relation(eid, "is", "here")
        await backend.graph.relate(user, rel, _entry())
        assert await backend.graph.relate(user.encode(), _relation(eid, "is", "here"), _entry()) == rel.id

    async def test_odd_ids_and_chinese_names(self, backend: Backend) -> None:
        users: list[str | bytes] = [
            "用户🙂-" + uuid.uuid4().hex,
            b"\xff\xfe\x00" + uuid.uuid4().bytes,
            "x" * 300 + uuid.uuid4().hex,
            "*{brain}:[a]?" + uuid.uuid4().hex,
        ]
        for user in users:
            wang, cat = _write("王小明", "小明"), _write("🐱 Mimi", kind="animal")
            ids = await backend.graph.upsert(user, [wang, cat])
            assert ids == [wang.entity.id, cat.entity.id]
            assert await backend.graph.resolve(user, ["王小明", "小明", name_key("🐱 Mimi")]) == {
                "王小明": ids[0],
                "小明": ids[0],
                name_key("🐱 Mimi"): ids[1],
            }
            rel = _relation(ids[0], "养", ids[1], id="关系:*{1}?")
            assert await backend.graph.relate(user, rel, _entry(new_text="王小明养猫")) is None
            assert await backend.graph.adjacent(user, [ids[1]]) == {rel.id}
            assert await backend.graph.mention(user, [(ids[0], "事实-1")]) == 1
            assert await backend.graph.named_in(user, ["事实-1"]) == {"事实-1": [ids[0]]}
            [event] = await backend.facts.history(user)
            assert (event.fact_id, event.new_text) == (rel.id, "王小明养猫")

    async def test_purging_the_users_leftovers_erases_the_graph(self, backend: Backend) -> None:
        user, other = _user("erase"), _user("erase-other")
        for who in (user, other):
            [eid] = await backend.graph.upsert(who, [_write("Kim", "Kimmy")])
            await backend.graph.mention(who, [(eid, "d1")])
            rel = _relation(eid, "likes", "tea", id=f"r-{eid}")
            await backend.graph.relate(who, rel, _entry())
            await backend.graph.set_applied(who, "batch")
        assert await backend.purge(await backend.user_leftovers(user)) > 0
        assert await backend.user_leftovers(user) == []
        assert await backend.graph.entity_ids(user) == []
        assert await backend.graph.resolve(user, ["kim", "kimmy"]) == {}
        assert await backend.graph.all_relations(user) == []
        assert await backend.graph.adjacent(user, [eid]) == set()
        assert await backend.graph.named_in(user, ["d1"]) == {}
        assert await backend.graph.mentions(user, [eid]) == {eid: []}
        assert await backend.graph.applied(user, "batch") is False
        assert await backend.facts.history(user) == []
        assert await backend.graph.all_relations(other) == [rel]
        assert await backend.graph.mentions(other, [eid]) == {eid: ["d1"]}
