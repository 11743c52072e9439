"""`ProcedureStoreConformance`: what every `ProcedureStore` does (`brain.storage.procedures`), as tests. The
suite needs pytest-asyncio in auto mode (`asyncio_mode = "auto"`)."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from brain.errors import InputError
from brain.storage import Procedure, ProcedureStore

__all__ = ["ProcedureStoreConformance"]


def _agent(tag: str) -> str:
    """An agent name no other test (or run) uses."""
    return f"conformance-procedures-{tag}-{uuid.uuid4().hex}"


def _procedure(agent: str, task: str, at: float = 1_000.0, text: str = "1. plan 2. do 3. check") -> Procedure:
    return Procedure(agent=agent, task=task, procedure=text, created_at=at)


class ProcedureStoreConformance:
    """Tests every `ProcedureStore` passes. Subclass it in a test module and override the `procedures`
    fixture: a store without an embedding model (finding is then by the task's words, which the ranking
    tests rely on), over storage whose prefix no other test uses (or an empty one)."""

    @pytest.fixture
    def procedures(self) -> ProcedureStore:
        raise NotImplementedError("override the procedures fixture")

    async def test_save_then_all_round_trip(self, procedures: ProcedureStore) -> None:
        agent = _agent("save")
        stored = _procedure(agent, "Deploy the web service", at=1234.5, text="build, push, roll out")
        assert await procedures.save(stored) == stored
        assert await procedures.all(agent) == [stored]

    async def test_save_refuses_an_empty_task_or_text(self, procedures: ProcedureStore) -> None:
        agent = _agent("empty")
        for task, text in (("", "do it"), ("   ", "do it"), ("deploy", ""), ("deploy", " \n ")):
            with pytest.raises(InputError):
                await procedures.save(_procedure(agent, task, text=text))
        assert await procedures.all(agent) == []

    async def test_saving_an_id_again_changes_nothing(self, procedures: ProcedureStore) -> None:
        agent = _agent("again")
        first = _procedure(agent, "migrate the zebra database")
        await procedures.save(first)
        again = first.model_copy(update={"task": "paint giraffes", "procedure": "other"})
        await procedures.save(again)
        assert await procedures.all(agent) == [first]
        assert await procedures.find(agent, "paint giraffes") == []

    async def test_all_oldest_first(self, procedures: ProcedureStore) -> None:
        agent = _agent("oldest")
        saved = [_procedure(agent, f"task number {n}", at=float(n)) for n in (300, 100, 200)]
        for procedure in saved:
            await procedures.save(procedure)
        assert [p.created_at for p in await procedures.all(agent)] == [100.0, 200.0, 300.0]
        assert await procedures.all(_agent("nobody")) == []

    async def test_find_best_first(self, procedures: ProcedureStore) -> None:
        agent = _agent("find")
        web = _procedure(agent, "deploy the web service to production")
        bread = _procedure(agent, "bake sourdough bread")
        backups = _procedure(agent, "deploy database backups")
        for procedure in (bread, backups, web):
            await procedures.save(procedure)
        found = await procedures.find(agent, "deploy the web service", limit=3)
        assert found[0] == web and bread not in found
        assert backups in found

    async def test_find_limit(self, procedures: ProcedureStore) -> None:
        agent = _agent("limit")
        for n in range(4):
            await procedures.save(_procedure(agent, f"write the weekly report {n}", at=float(n)))
        assert len(await procedures.find(agent, "weekly report")) == 1
        assert len(await procedures.find(agent, "weekly report", limit=3)) == 3
        assert len(await procedures.find(agent, "weekly report", limit=10)) == 4

    async def test_find_nothing_matching(self, procedures: ProcedureStore) -> None:
        agent = _agent("nothing")
        assert await procedures.find(agent, "deploy the web service") == []
        await procedures.save(_procedure(agent, "bake sourdough bread"))
        assert await procedures.find(agent, "calibrate telescope mirrors") == []

    async def test_agents_are_apart(self, procedures: ProcedureStore) -> None:
        alice, bob = _agent("alice"), _agent("bob")
        mine = _procedure(alice, "review pull requests")
        await procedures.save(mine)
        assert await procedures.find(bob, "review pull requests") == []
        assert await procedures.all(bob) == []
        assert await procedures.drop(bob) == 0
        assert await procedures.all(alice) == [mine]
        assert await procedures.find(alice, "review pull requests") == [mine]

    async def test_drop(self, procedures: ProcedureStore) -> None:
        agent, other = _agent("drop"), _agent("drop-other")
        for n in range(3):
            await procedures.save(_procedure(agent, f"plan the sprint {n}", at=float(n)))
        kept = _procedure(other, "plan the sprint")
        await procedures.save(kept)
        assert await procedures.drop(agent) == 3
        assert await procedures.all(agent) == [] and await procedures.find(agent, "plan the sprint") == []
        assert await procedures.drop(agent) == 0
        assert await procedures.all(other) == [kept]
        again = _procedure(agent, "plan the sprint again")
        await procedures.save(again)
        assert await procedures.all(agent) == [again]

    async def test_concurrent_saves(self, procedures: ProcedureStore) -> None:
        agent = _agent("concurrent")
        saved = [_procedure(agent, f"triage incoming tickets {n}", at=float(n)) for n in range(10)]
        await asyncio.gather(*(procedures.save(p) for p in saved))
        assert await procedures.all(agent) == saved

    async def test_concurrent_saves_of_one_id(self, procedures: ProcedureStore) -> None:
        agent = _agent("one-id")
        first = _procedure(agent, "archive old invoices")
        other = first.model_copy(update={"procedure": "something else"})
        await asyncio.gather(procedures.save(first), procedures.save(other))
        assert await procedures.all(agent) in ([first], [other])

    async def test_unicode_agents_and_tasks(self, procedures: ProcedureStore) -> None:
        agent = f"研究员 🤖 {uuid.uuid4().hex}"
        chinese = _procedure(agent, "部署网站服务到生产环境", text="先构建，再发布 🚀")
        await procedures.save(chinese)
        await procedures.save(_procedure(agent, "烤面包 🍞"))
        assert (await procedures.find(agent, "部署网站服务"))[0] == chinese
        assert await procedures.find(agent + " ", "部署网站服务") == []
        assert len(await procedures.all(agent)) == 2

    async def test_long_agent_names_are_apart(self, procedures: ProcedureStore) -> None:
        stem = _agent("long")
        long, longer = stem + "x" * 300, stem + "x" * 301
        mine = _procedure(long, "water the office plants")
        await procedures.save(mine)
        assert await procedures.all(long) == [mine]
        assert await procedures.all(longer) == []
        assert await procedures.find(longer, "water the office plants") == []
