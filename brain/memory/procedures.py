"""Procedural memory over any search index store: each agent's procedures in its own index namespace
(`brain.keys.procedures_base`), found again by the task's text (BM25, plus vectors with an embedding model).
The summary of a run is an LLM task (`actions.procedure`); this is where procedures are kept."""

from __future__ import annotations

from collections.abc import Callable

from brain.errors import InputError
from brain.keys import procedures_base
from brain.llm.protocol import Embed, embed_one
from brain.search.index import IndexedDoc, SearchIndex
from brain.storage.procedures import Procedure

__all__ = ["Procedure", "Procedures"]


class Procedures:
    """A `ProcedureStore`: `index(base)` gives the search index of a namespace."""

    def __init__(
        self, index: Callable[[str], SearchIndex], *, prefix: str = "brain", embed: Embed | None = None
    ) -> None:
        self._index_of, self.prefix, self.embed = index, prefix, embed

    def _index(self, agent: str) -> SearchIndex:
        return self._index_of(procedures_base(self.prefix, agent))

    async def save(self, procedure: Procedure) -> Procedure:
        if not procedure.task.strip() or not procedure.procedure.strip():
            raise InputError("a procedure needs a task and a text")
        doc = IndexedDoc(
            id=procedure.id,
            text=procedure.task,
            source="procedure",
            ts=procedure.created_at,
            metadata=procedure.model_dump(),
        )
        await self._index(procedure.agent).add(doc, await embed_one(self.embed, procedure.task))
        return procedure

    async def find(self, agent: str, task: str, *, limit: int = 1) -> list[Procedure]:
        hits = await self._index(agent).related(task, limit=limit, vector=await embed_one(self.embed, task))
        return [Procedure.model_validate(h.doc.metadata) for h in hits]

    async def all(self, agent: str) -> list[Procedure]:
        docs = await self._index(agent).all_docs()
        return sorted((Procedure.model_validate(d.metadata) for d in docs), key=lambda p: p.created_at)

    async def drop(self, agent: str) -> int:
        return await self._index(agent).drop()
