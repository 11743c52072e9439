"""`FactWriteConformance`: how every `FactStore` writes a fact with its search entry, merges another wording
into a fact and counts changes (`brain.storage.facts`), as tests. Needs pytest-asyncio in auto mode."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from brain.errors import NotFoundError, StaleIndexError
from brain.keys import facts_base
from brain.storage import AuditEntry, Backend, Fact
from brain.storage.facts import Event, fact_hash
from brain.storage.index import IndexedDoc, IndexEntry, IndexStore
from brain.testing.conformance.base import BackendSuite

__all__ = ["FactWriteConformance"]

ANALYSIS = "conformance-1"


def _user(tag: str) -> str:
    return f"conformance-fact-writes-{tag}-{uuid.uuid4().hex}"


def _fact(text: str, **fields: Any) -> Fact:
    return Fact(text=text, hash=fact_hash(text), **fields)


def _audit(event: Event = "ADD", **fields: Any) -> AuditEntry:
    return AuditEntry(event=event, **fields)


def _indexed(fact: Fact, vector: tuple[float, ...] | None = None) -> IndexEntry:
    words = fact.text.lower().rstrip(".").split()
    doc = IndexedDoc(id=fact.id, text=fact.text, tags=("misc",), ts=fact.created_at)
    return IndexEntry(doc=doc, counts={w: words.count(w) for w in words}, vector=vector)


def _index(backend: Backend, user: str) -> IndexStore:
    return backend.index(facts_base(backend.prefix, user))


async def _found(index: IndexStore, word: str) -> list[str]:
    ranking = await index.rank(
        {word: 1.0}, tags=(), start=None, end=None, offset=0, limit=10, analysis=ANALYSIS, per_term=1_000,
        k1=1.2, b=0.75,
    )  # fmt: skip
    return [] if ranking is None else [i for i, _ in ranking.hits]


class FactWriteConformance(BackendSuite):
    """Subclass it and override the `backend` fixture (as for `FactStoreConformance`)."""

    async def test_a_fact_is_written_with_its_search_entry(self, backend: Backend) -> None:
        user = _user("indexed")
        fact = _fact("Lives in Lyon", source_turns=("t1",))
        before = await backend.facts.generation(user)
        entry = _indexed(fact, (1.0, 0.0))
        assert await backend.facts.add(user, fact, _audit(new_text=fact.text), "", entry, ANALYSIS) is None
        index = _index(backend, user)
        assert await _found(index, "lyon") == [fact.id]
        assert [d.id for d in await index.docs([fact.id])] == [fact.id]
        assert [i for i, _ in await index.nearest((1.0, 0.0), None, 5)] == [fact.id]
        assert await backend.facts.generation(user) != before

    async def test_a_duplicate_writes_no_search_entry(self, backend: Backend) -> None:
        user = _user("dup")
        first, again = _fact("Likes tea"), _fact("likes tea.")
        await backend.facts.add(user, first, _audit(), "", _indexed(first), ANALYSIS)
        generation = await backend.facts.generation(user)
        assert await backend.facts.add(user, again, _audit(), "", _indexed(again), ANALYSIS) == first.id
        assert await _index(backend, user).docs([again.id]) == []
        assert await backend.facts.generation(user) == generation

    async def test_an_index_of_another_analysis_refuses_the_whole_write(self, backend: Backend) -> None:
        user = _user("stale")
        index = _index(backend, user)
        other = IndexEntry(doc=IndexedDoc(id="x", text="x", ts=1.0), counts={"x": 1})
        assert await index.add([other], "another-analysis") == [1]
        fact = _fact("Lives in Oslo")
        with pytest.raises(StaleIndexError):
            await backend.facts.add(user, fact, _audit(), "", _indexed(fact), ANALYSIS)
        assert await backend.facts.all(user) == [] and await backend.facts.history(user) == []
        assert await index.docs([fact.id]) == []

    async def test_a_replaced_fact_is_invalid_from_when_the_new_one_holds(self, backend: Backend) -> None:
        user = _user("valid")
        old = _fact("Lives in Oslo", valid_at=100.0, created_at=150.0)
        new = _fact("Lives in Bergen", valid_at=200.0, created_at=900.0)
        await backend.facts.add(user, old, _audit())
        await backend.facts.add(user, new, _audit("UPDATE", old_fact_id=old.id), old.id)
        [retired] = await backend.facts.get_many(user, [old.id])
        assert (retired.invalid_at, retired.expired_at, retired.superseded_by) == (200.0, 900.0, new.id)
        assert retired.true_at(150.0) and not retired.true_at(200.0)

    async def test_merge_adds_the_wording_and_its_sources(self, backend: Backend) -> None:
        user = _user("merge")
        fact = _fact("Loves green tea", source_turns=("t1", "t2"))
        await backend.facts.add(user, fact, _audit())
        generation = await backend.facts.generation(user)
        wording = "Green tea is the favourite"
        merge = _audit("MERGE", actor="w", source_turns=("t2", "t7", "t8"), new_text=wording)
        assert await backend.facts.merge(user, fact.id, fact_hash(wording), merge) is True
        again = _audit("MERGE", source_turns=("t8", "t9"), new_text=wording)
        assert await backend.facts.merge(user, fact.id, fact_hash(wording), again) is True
        [merged] = await backend.facts.get_many(user, [fact.id])
        assert merged.source_turns == ("t1", "t2", "t7", "t8", "t9")
        assert [f.source_turns for f in await backend.facts.all(user)] == [merged.source_turns]
        assert await backend.facts.by_hash(user, [fact_hash(wording)]) == {fact_hash(wording): fact.id}
        events = [e for e in await backend.facts.history(user) if e.event == "MERGE"]
        assert [(e.fact_id, e.new_text, e.source_turns) for e in events] == [
            (fact.id, wording, ("t2", "t7", "t8")),
            (fact.id, wording, ("t8", "t9")),
        ]
        assert await backend.facts.generation(user) != generation

    async def test_merge_into_a_retired_or_missing_fact(self, backend: Backend) -> None:
        user = _user("merge-retired")
        fact = _fact("Has a dog")
        await backend.facts.add(user, fact, _audit())
        await backend.facts.retire(user, fact.id, 10.0, _audit("DELETE"))
        assert await backend.facts.merge(user, fact.id, fact_hash("Owns a dog"), _audit("MERGE")) is False
        assert await backend.facts.by_hash(user, [fact_hash("Owns a dog")]) == {}
        with pytest.raises(NotFoundError):
            await backend.facts.merge(user, "no-such-fact", fact_hash("x"), _audit("MERGE"))

    async def test_erasure_takes_the_merged_sources(self, backend: Backend) -> None:
        user = _user("merge-erase")
        fact = _fact("Plays chess")
        await backend.facts.add(user, fact, _audit())
        await backend.facts.merge(
            user, fact.id, fact_hash("Chess player"), _audit("MERGE", source_turns=("t3",))
        )
        generation = await backend.facts.generation(user)
        assert await backend.facts.erase(user, [fact.id]) == 1
        await backend.facts.add(user, _fact("Plays go", id=fact.id), _audit())  # the same id, new record
        [again] = await backend.facts.get_many(user, [fact.id])
        assert again.source_turns == ()
        assert await backend.facts.generation(user) != generation

    async def test_every_change_of_current_facts_moves_the_generation(self, backend: Backend) -> None:
        user = _user("generation")
        seen = [await backend.facts.generation(user)]
        fact = _fact("Runs daily")
        await backend.facts.add(user, fact, _audit())
        seen.append(await backend.facts.generation(user))
        await backend.facts.retire(user, fact.id, 5.0, _audit("DELETE"))
        seen.append(await backend.facts.generation(user))
        await backend.facts.restore(user, fact.id, _audit("ROLLBACK"))
        seen.append(await backend.facts.generation(user))
        assert len(set(seen)) == len(seen)
        await backend.facts.retire(user, fact.id, 6.0, _audit("DELETE"))
        moved = await backend.facts.generation(user)
        assert await backend.facts.retire(user, fact.id, 7.0, _audit("DELETE")) is False  # nothing changed
        assert await backend.facts.generation(user) == moved
