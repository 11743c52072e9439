"""Procedural memory: how an agent (a role, or a team) went about a task, stored per agent and found again by
the task's text (BM25, plus vectors with an embedding model) for the next run of the same kind of task.
The summary of a run is an LLM task (`actions.procedure`); this is where procedures are kept."""

from __future__ import annotations

import time
import uuid

from pydantic import BaseModel, ConfigDict, Field

from brain.errors import InputError
from brain.keys import procedures_base
from brain.llm.protocol import Embed, embed_one
from brain.search.index import IndexedDoc, IndexScripts, SearchIndex
from brain.store.connection import RedisClient

__all__ = ["Procedure", "ProcedureStore"]


class Procedure(BaseModel):
    """One stored run: the task, the procedure the summary describes, and when."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    agent: str
    task: str
    procedure: str
    created_at: float = Field(default_factory=time.time)


class ProcedureStore:
    """Procedures of every agent, each agent in its own namespace (`brain.keys.procedures_base`)."""

    def __init__(
        self,
        client: RedisClient,
        *,
        prefix: str = "brain",
        embed: Embed | None = None,
        scripts: IndexScripts | None = None,
    ) -> None:
        self._client, self.prefix, self.embed = client, prefix, embed
        self._scripts = scripts or IndexScripts(client)

    def _index(self, agent: str) -> SearchIndex:
        return SearchIndex(self._client, procedures_base(self.prefix, agent), scripts=self._scripts)

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
        """`agent`'s procedures for tasks like `task`, best first (none when nothing matches)."""
        hits = await self._index(agent).related(task, limit=limit, vector=await embed_one(self.embed, task))
        return [Procedure.model_validate(h.doc.metadata) for h in hits]

    async def all(self, agent: str) -> list[Procedure]:
        docs = await self._index(agent).all_docs()
        return sorted((Procedure.model_validate(d.metadata) for d in docs), key=lambda p: p.created_at)

    async def drop(self, agent: str) -> int:
        return await self._index(agent).drop()
