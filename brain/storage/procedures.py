"""Procedural memory (`ProcedureStore`): how an agent (a role, or a team) went about a task, stored per agent
and found again by the task's text for the next run of the same kind of task."""

from __future__ import annotations

import time
import uuid
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Procedure", "ProcedureStore"]


class Procedure(BaseModel):
    """One stored run: the task, the procedure the summary describes, and when."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    agent: str
    task: str
    procedure: str
    created_at: float = Field(default_factory=time.time)


@runtime_checkable
class ProcedureStore(Protocol):
    """Procedures of every agent, each agent's apart. `StoreError` when the store cannot answer."""

    async def save(self, procedure: Procedure) -> Procedure:
        """Store a procedure (`InputError` without a task or a text); saving the same id again changes
        nothing."""
        ...

    async def find(self, agent: str, task: str, *, limit: int = 1) -> list[Procedure]:
        """`agent`'s procedures for tasks like `task`, best first (none when nothing matches)."""
        ...

    async def all(self, agent: str) -> list[Procedure]:
        """Every procedure of `agent`, oldest first."""
        ...

    async def drop(self, agent: str) -> int:
        """Delete every procedure of `agent`; how many there were."""
        ...
