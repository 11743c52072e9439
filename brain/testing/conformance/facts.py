"""`FactStoreConformance`: what every `FactStore` does (`brain.storage.facts`), as tests. The suite needs
pytest-asyncio in auto mode (`asyncio_mode = "auto"`)."""

from __future__ import annotations

import asyncio
import itertools
import time
import uuid
from typing import Any

import pytest

from brain.errors import ConflictError, NotFoundError
from brain.storage import AuditEntry, Backend, Fact
from brain.storage.facts import Event, fact_hash
from brain.testing.conformance.base import BackendSuite, id_order

__all__ = ["FactStoreConformance"]


def _user(tag: str) -> str:
    """A user id no other test (or run) uses."""
    return f"conformance-facts-{tag}-{uuid.uuid4().hex}"


def _fact(text: str, **fields: Any) -> Fact:
    return Fact(text=text, hash=fact_hash(text), **fields)


def _entry(event: Event = "ADD", **fields: Any) -> AuditEntry:
    return AuditEntry(event=event, **fields)


class FactStoreConformance(BackendSuite):
    """Tests every `FactStore` passes. Subclass it in a test module and override the `backend` fixture: a
    `Backend` whose `prefix` no other test uses (or an empty one)."""

    async def test_add_then_get(self, backend: Backend) -> None:
        user = _user("add")
        fact = _fact("Lives in Lyon", category="place", source_turns=("t1", "t2"), valid_at=10.5)
        assert await backend.facts.add(user, fact, _entry(new_text=fact.text)) is None
        assert await backend.facts.get_many(user, [fact.id]) == [fact]
        assert await backend.facts.by_hash(user, [fact.hash]) == {fact.hash: fact.id}

    async def test_add_audits_the_fact(self, backend: Backend) -> None:
        user = _user("add-audit")
        fact = _fact("Has a cat")
        entry = _entry(actor="worker", reason="said so", source_turns=("t9",), new_text=fact.text)
        before = time.time()
        await backend.facts.add(user, fact, entry)
        [event] = await backend.facts.history(user)
        assert (event.event, event.fact_id, event.subject) == ("ADD", fact.id, "fact")
        assert (event.actor, event.reason, event.source_turns) == ("worker", "said so", ("t9",))
        assert (event.new_text, event.old_text, event.old_fact_id) == (fact.text, "", "")
        assert before - 1 <= event.at <= time.time() + 1

    async def test_duplicate_returns_the_current_id_and_writes_nothing(self, backend: Backend) -> None:
        user = _user("dup")
        first = _fact("I like green tea.")
        await backend.facts.add(user, first, _entry())
        again = _fact("i like  GREEN tea")
        assert again.hash == first.hash
        assert await backend.facts.add(user, again, _entry()) == first.id
        assert await backend.facts.get_many(user, [again.id]) == []
        assert len(await backend.facts.history(user)) == 1

    async def test_duplicate_wins_over_a_missing_replaced_fact(self, backend: Backend) -> None:
        user = _user("dup-replaces")
        first = _fact("Plays chess")
        await backend.facts.add(user, first, _entry())
        assert await backend.facts.add(user, _fact("plays chess"), _entry("UPDATE"), "nope") == first.id

    async def test_add_replacing_retires_the_old_fact(self, backend: Backend) -> None:
        user = _user("replace")
        old = _fact("Works at Acme", created_at=100.0)
        await backend.facts.add(user, old, _entry())
        new = _fact("Works at Globex", created_at=200.0)
        entry = _entry("UPDATE", old_fact_id=old.id, new_text=new.text, old_text="ignored")
        assert await backend.facts.add(user, new, entry, replaces=old.id) is None
        retired, current = await backend.facts.get_many(user, [old.id, new.id])
        assert (retired.expired_at, retired.invalid_at, retired.superseded_by) == (200.0, 200.0, new.id)
        assert not retired.current and current == new
        assert await backend.facts.by_hash(user, [old.hash, new.hash]) == {new.hash: new.id}
        event = (await backend.facts.history(user))[-1]
        assert (event.event, event.fact_id, event.old_fact_id) == ("UPDATE", new.id, old.id)
        assert (event.old_text, event.new_text) == (old.text, new.text)

    async def test_replaced_fact_keeps_its_own_invalid_at(self, backend: Backend) -> None:
        user = _user("replace-invalid")
        old = _fact("Is 30", created_at=100.0, invalid_at=150.0)
        await backend.facts.add(user, old, _entry())
        new = _fact("Is 31", created_at=200.0)
        await backend.facts.add(user, new, _entry("UPDATE"), replaces=old.id)
        [retired] = await backend.facts.get_many(user, [old.id])
        assert (retired.expired_at, retired.invalid_at) == (200.0, 150.0)

    async def test_replacing_a_missing_fact_is_not_found(self, backend: Backend) -> None:
        user = _user("replace-missing")
        new = _fact("Has two kids")
        with pytest.raises(NotFoundError):
            await backend.facts.add(user, new, _entry("UPDATE"), replaces="no-such-fact")
        assert await backend.facts.all(user) == []
        assert await backend.facts.history(user) == []

    async def test_replacing_a_retired_fact_is_a_conflict(self, backend: Backend) -> None:
        user = _user("replace-retired")
        old = _fact("Drives a Volvo")
        await backend.facts.add(user, old, _entry())
        await backend.facts.retire(user, old.id, time.time(), _entry("DELETE"))
        new = _fact("Drives a Saab")
        with pytest.raises(ConflictError):
            await backend.facts.add(user, new, _entry("UPDATE"), replaces=old.id)
        assert await backend.facts.get_many(user, [new.id]) == []
        assert len(await backend.facts.history(user)) == 2

    async def test_retire(self, backend: Backend) -> None:
        user = _user("retire")
        fact = _fact("Owns a boat")
        await backend.facts.add(user, fact, _entry())
        assert await backend.facts.retire(user, fact.id, 500.0, _entry("DELETE", reason="sold it")) is True
        [retired] = await backend.facts.get_many(user, [fact.id])
        assert (retired.expired_at, retired.invalid_at, retired.superseded_by) == (500.0, 500.0, None)
        assert await backend.facts.by_hash(user, [fact.hash]) == {}
        event = (await backend.facts.history(user))[-1]
        assert (event.event, event.fact_id, event.old_text, event.reason) == (
            "DELETE",
            fact.id,
            fact.text,
            "sold it",
        )

    async def test_retire_twice_writes_nothing(self, backend: Backend) -> None:
        user = _user("retire-twice")
        fact = _fact("Runs marathons")
        await backend.facts.add(user, fact, _entry())
        assert await backend.facts.retire(user, fact.id, 500.0, _entry("DELETE"))
        assert await backend.facts.retire(user, fact.id, 600.0, _entry("DELETE")) is False
        [retired] = await backend.facts.get_many(user, [fact.id])
        assert retired.expired_at == 500.0
        assert len(await backend.facts.history(user)) == 2

    async def test_retire_missing_is_not_found(self, backend: Backend) -> None:
        with pytest.raises(NotFoundError):
            await backend.facts.retire(_user("retire-missing"), "no-such-fact", time.time(), _entry("DELETE"))

    async def test_restore(self, backend: Backend) -> None:
        user = _user("restore")
        fact = _fact("Speaks Welsh", created_at=100.0)
        await backend.facts.add(user, fact, _entry())
        await backend.facts.retire(user, fact.id, 500.0, _entry("DELETE"))
        entry = _entry("ROLLBACK", undoes="1-0", new_text="ignored", actor="admin")
        assert await backend.facts.restore(user, fact.id, entry) == 1
        assert await backend.facts.get_many(user, [fact.id]) == [fact]
        assert await backend.facts.by_hash(user, [fact.hash]) == {fact.hash: fact.id}
        event = (await backend.facts.history(user))[-1]
        assert (event.event, event.fact_id, event.new_text) == ("ROLLBACK", fact.id, fact.text)
        assert (event.undoes, event.actor) == ("1-0", "admin")
        assert await backend.facts.restore(user, fact.id, _entry("ROLLBACK")) == 0
        assert len(await backend.facts.history(user)) == 3

    async def test_restore_when_another_fact_says_the_same(self, backend: Backend) -> None:
        user = _user("restore-clash")
        old = _fact("Loves jazz")
        await backend.facts.add(user, old, _entry())
        await backend.facts.retire(user, old.id, 500.0, _entry("DELETE"))
        new = _fact("loves jazz!")
        assert await backend.facts.add(user, new, _entry()) is None
        assert await backend.facts.restore(user, old.id, _entry("ROLLBACK")) == -1
        [still] = await backend.facts.get_many(user, [old.id])
        assert not still.current
        assert await backend.facts.by_hash(user, [new.hash]) == {new.hash: new.id}
        assert len(await backend.facts.history(user)) == 3

    async def test_restore_missing_is_not_found(self, backend: Backend) -> None:
        with pytest.raises(NotFoundError):
            await backend.facts.restore(_user("restore-missing"), "no-such-fact", _entry("ROLLBACK"))

    async def test_get_many_keeps_the_order_asked(self, backend: Backend) -> None:
        user = _user("get-many")
        a, b, c = _fact("Fact A"), _fact("Fact B"), _fact("Fact C")
        for fact in (a, b, c):
            await backend.facts.add(user, fact, _entry())
        await backend.facts.retire(user, b.id, 700.0, _entry("DELETE"))
        found = await backend.facts.get_many(user, [c.id, "missing", b.id, a.id])
        assert [f.id for f in found] == [c.id, b.id, a.id]
        assert found[1].expired_at == 700.0 and found[0].current and found[2].current
        assert await backend.facts.get_many(user, []) == []

    async def test_all_oldest_first_with_retired(self, backend: Backend) -> None:
        user = _user("all")
        late, early = _fact("Late", created_at=30.0), _fact("Early", created_at=10.0)
        tie_b, tie_a = (
            _fact("Tie B", id="b-tie", created_at=20.0),
            _fact("Tie A", id="a-tie", created_at=20.0),
        )
        for fact in (late, early, tie_b, tie_a):
            await backend.facts.add(user, fact, _entry())
        await backend.facts.retire(user, early.id, 40.0, _entry("DELETE"))
        found = await backend.facts.all(user)
        assert [f.id for f in found] == [early.id, "a-tie", "b-tie", late.id]
        assert found[0].expired_at == 40.0
        assert await backend.facts.all(_user("all-empty")) == []

    async def test_by_hash_own_and_aliased(self, backend: Backend) -> None:
        user = _user("by-hash")
        fact, other = _fact("Is vegetarian"), _fact("Bikes to work")
        await backend.facts.add(user, fact, _entry())
        await backend.facts.add(user, other, _entry())
        wording = fact_hash("Does not eat meat")
        await backend.facts.alias(user, wording, fact.id)
        await backend.facts.alias(user, other.hash, fact.id)  # its own hash names it still
        found = await backend.facts.by_hash(user, [fact.hash, wording, other.hash, fact_hash("unknown")])
        assert found == {fact.hash: fact.id, wording: fact.id, other.hash: other.id}
        assert await backend.facts.by_hash(user, []) == {}

    async def test_alias_to_a_retired_fact_is_ignored(self, backend: Backend) -> None:
        user = _user("alias-retired")
        fact = _fact("Has a sister")
        await backend.facts.add(user, fact, _entry())
        wording = fact_hash("Has one sister")
        await backend.facts.alias(user, wording, fact.id)
        await backend.facts.retire(user, fact.id, 500.0, _entry("DELETE"))
        assert await backend.facts.by_hash(user, [wording, fact.hash]) == {}
        await backend.facts.restore(user, fact.id, _entry("ROLLBACK"))
        assert await backend.facts.by_hash(user, [wording]) == {wording: fact.id}

    async def test_batches(self, backend: Backend) -> None:
        user = _user("batches")
        assert await backend.facts.batch_facts(user, "batch-1") is None
        await backend.facts.set_batch_facts(user, "batch-1", ["f1", "f2"])
        await backend.facts.set_batch_facts(user, "batch-2", [])
        assert await backend.facts.batch_facts(user, "batch-1") == ["f1", "f2"]
        assert await backend.facts.batch_facts(user, "batch-2") == []
        await backend.facts.set_batch_facts(user, "batch-1", ["f3"])
        assert await backend.facts.batch_facts(user, "batch-1") == ["f3"]

    async def test_history_ids_increase(self, backend: Backend) -> None:
        user = _user("history")
        facts = [_fact(f"Fact number {i}") for i in range(12)]
        for fact in facts:
            await backend.facts.add(user, fact, _entry())
        await backend.facts.retire(user, facts[0].id, time.time(), _entry("DELETE"))
        events = await backend.facts.history(user)
        assert [e.fact_id for e in events] == [*(f.id for f in facts), facts[0].id]
        assert [e.event for e in events] == ["ADD"] * 12 + ["DELETE"]
        orders = [id_order(e.id) for e in events]
        assert all(a < b for a, b in itertools.pairwise(orders))
        assert all(e.at == id_order(e.id)[0] / 1000 for e in events)

    async def test_progress_per_chat(self, backend: Backend) -> None:
        user = _user("progress")
        assert await backend.facts.progress(user, "chat-a") == 0
        await backend.facts.set_progress(user, "chat-a", 5)
        assert await backend.facts.progress(user, b"chat-a") == 5
        assert await backend.facts.progress(user, "chat-b") == 0
        await backend.facts.set_progress(user, "chat-a", 3)
        assert await backend.facts.progress(user, "chat-a") == 3
        assert await backend.facts.progress(_user("progress-other"), "chat-a") == 0

    async def test_concurrent_adds_of_one_text_store_one(self, backend: Backend) -> None:
        user = _user("concurrent-add")
        facts = [_fact("Was born in Oslo") for _ in range(20)]
        results = await asyncio.gather(*(backend.facts.add(user, f, _entry()) for f in facts))
        stored = await backend.facts.all(user)
        assert len(stored) == 1 and results.count(None) == 1
        assert all(r == stored[0].id for r in results if r is not None)
        assert len(await backend.facts.history(user)) == 1

    async def test_concurrent_retires_retire_once(self, backend: Backend) -> None:
        user = _user("concurrent-retire")
        fact = _fact("Collects stamps")
        await backend.facts.add(user, fact, _entry())
        results = await asyncio.gather(
            *(backend.facts.retire(user, fact.id, 500.0 + i, _entry("DELETE")) for i in range(10))
        )
        assert sorted(results) == [False] * 9 + [True]
        assert len(await backend.facts.history(user)) == 2

    async def test_concurrent_replacements_of_one_fact_replace_once(self, backend: Backend) -> None:
        user = _user("concurrent-replace")
        old = _fact("Lives in Rome")
        await backend.facts.add(user, old, _entry())
        news = [_fact(f"Lives in city {i}") for i in range(10)]
        results = await asyncio.gather(
            *(backend.facts.add(user, n, _entry("UPDATE"), replaces=old.id) for n in news),
            return_exceptions=True,
        )
        assert results.count(None) == 1
        assert all(isinstance(r, ConflictError) for r in results if r is not None)
        assert len([f for f in await backend.facts.all(user) if f.current]) == 1

    async def test_users_are_isolated(self, backend: Backend) -> None:
        alice, bob = _user("alice"), _user("bob")
        fact = _fact("Has a secret")
        await backend.facts.add(alice, fact, _entry())
        await backend.facts.set_batch_facts(alice, "batch", [fact.id])
        await backend.facts.set_progress(alice, "chat", 7)
        assert await backend.facts.get_many(bob, [fact.id]) == []
        assert await backend.facts.all(bob) == []
        assert await backend.facts.by_hash(bob, [fact.hash]) == {}
        assert await backend.facts.history(bob) == []
        assert await backend.facts.batch_facts(bob, "batch") is None
        assert await backend.facts.progress(bob, "chat") == 0
        with pytest.raises(NotFoundError):
            await backend.facts.retire(bob, fact.id, time.time(), _entry("DELETE"))
        assert await backend.facts.add(bob, _fact("has a secret"), _entry()) is None
        assert [f.id for f in await backend.facts.all(alice)] == [fact.id]

    async def test_str_and_bytes_ids_are_one_user(self, backend: Backend) -> None:
        user = _user("bytes")
        fact = _fact("Likes sushi")
        await backend.facts.add(user.encode(), fact, _entry())
        assert await backend.facts.get_many(user, [fact.id]) == [fact]
        assert await backend.facts.add(user, _fact("likes sushi"), _entry()) == fact.id

    async def test_odd_ids_and_chinese_text(self, backend: Backend) -> None:
        users: list[str | bytes] = [
            "用户🙂-" + uuid.uuid4().hex,
            b"\xff\xfe\x00" + uuid.uuid4().bytes,
            "x" * 300 + uuid.uuid4().hex,
            "*{brain}:[a]?" + uuid.uuid4().hex,
        ]
        for user in users:
            fact = _fact("我喜欢喝茶。", id="事实:*{1}?")
            assert await backend.facts.add(user, fact, _entry(new_text=fact.text)) is None
            assert await backend.facts.add(user, _fact("我喜欢喝茶"), _entry()) == fact.id
            assert await backend.facts.get_many(user, [fact.id]) == [fact]
            [event] = await backend.facts.history(user)
            assert (event.fact_id, event.new_text) == (fact.id, "我喜欢喝茶。")
        for user in users:
            assert [f.text for f in await backend.facts.all(user)] == ["我喜欢喝茶。"]

    async def test_purging_the_users_leftovers_erases_the_facts(self, backend: Backend) -> None:
        user, other = _user("erase"), _user("erase-other")
        fact, wording = _fact("Has a dog"), fact_hash("Owns a dog")
        for who in (user, other):
            await backend.facts.add(who, fact, _entry())
            await backend.facts.alias(who, wording, fact.id)
            await backend.facts.set_batch_facts(who, "batch", [fact.id])
            await backend.facts.set_progress(who, "chat", 1)
        assert await backend.purge(await backend.user_leftovers(user)) > 0
        assert await backend.user_leftovers(user) == []
        assert await backend.facts.all(user) == []
        assert await backend.facts.by_hash(user, [fact.hash, wording]) == {}
        assert await backend.facts.history(user) == []
        assert await backend.facts.batch_facts(user, "batch") is None
        assert await backend.facts.progress(user, "chat") == 0
        assert await backend.facts.all(other) == [fact]
        assert await backend.facts.by_hash(other, [wording]) == {wording: fact.id}

    async def test_erase_deletes_facts_with_every_trace_of_them(self, backend: Backend) -> None:
        user = _user("erase")
        kept, gone = _fact("Likes tea"), _fact("Locker code 7731")
        await backend.facts.add(user, kept, _entry(new_text=kept.text))
        await backend.facts.add(user, gone, _entry(new_text=gone.text))
        newer = _fact("Locker code 8842")
        await backend.facts.add(user, newer, _entry("UPDATE", old_fact_id=gone.id), replaces=gone.id)
        await backend.facts.alias(user, fact_hash("my locker code is 8842"), newer.id)
        assert await backend.facts.erase(user, [gone.id, newer.id, "no-such-fact"]) == 2
        assert await backend.facts.all(user) == [kept]
        assert [e.fact_id for e in await backend.facts.history(user)] == [kept.id]
        assert await backend.facts.by_hash(user, [newer.hash, fact_hash("my locker code is 8842")]) == {}
        assert await backend.facts.erase(user, [gone.id]) == 0
        await backend.facts.add(user, _fact("Locker code 7731"), _entry())  # the text may come back anew
