"""`Environment` delivers published messages to the roles watching them; `Team` runs rounds under a budget.

With procedural memory (`Team(procedures=..., name=...)`), a run starts with the procedure of the most similar
earlier run of this team (as quoted reference, not instructions) and ends by storing its own (one LLM call).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from actions.procedure import render_with_procedure, summarize_run
from brain.errors import BrainError
from brain.llm.protocol import LLM
from brain.memory.procedures import Procedure
from brain.message import Message
from brain.storage.procedures import ProcedureStore
from roles.role import USER_REQUIREMENT, Role

__all__ = ["Environment", "Team", "TeamResult"]

_log = logging.getLogger("brain.team")


class Environment:
    def __init__(self) -> None:
        self.roles: dict[str, Role] = {}
        self.history: list[Message] = []

    def add_roles(self, roles: Sequence[Role]) -> None:
        for role in roles:
            if role.name in self.roles:
                raise ValueError(f"two roles are named {role.name!r}")
            role.env = self
            self.roles[role.name] = role

    def publish_message(self, message: Message) -> None:
        self.history.append(message)
        for role in self.roles.values():
            if role.is_watching(message):
                role.put_message(message)

    @property
    def is_idle(self) -> bool:
        return not any(role.has_news for role in self.roles.values())

    async def run(self) -> None:
        """One round: every role with news runs, concurrently."""
        await asyncio.gather(*(role.run() for role in self.roles.values() if role.has_news))


class TeamResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    rounds: int
    stop_reason: Literal["idle", "n_round", "budget"]
    message: str
    tokens_used: int
    history: tuple[Message, ...]
    used_procedure: str | None = None  # id of the earlier run's procedure the run started from
    procedure: Procedure | None = None  # this run's, as stored
    procedure_error: str | None = None  # why this run's procedure could not be stored


class Team:
    """Hire roles, give them an idea, run rounds until idle, `n_round`, or the token budget."""

    def __init__(
        self,
        env: Environment | None = None,
        budget_tokens: int | None = None,
        *,
        procedures: ProcedureStore | None = None,
        name: str = "team",
        procedure_llm: LLM | None = None,
    ) -> None:
        self.env = env or Environment()
        self.budget_tokens = budget_tokens
        self.procedures, self.name, self.procedure_llm = procedures, name, procedure_llm

    def hire(self, roles: Sequence[Role]) -> None:
        self.env.add_roles(roles)

    def invest(self, budget_tokens: int) -> None:
        self.budget_tokens = budget_tokens

    def tokens_used(self) -> int:
        llms = {id(role.llm): role.llm for role in self.env.roles.values()}
        return sum(llm.usage.totals().total_tokens for llm in llms.values())

    async def run(self, idea: str, n_round: int = 3, send_to: Sequence[str] = ()) -> TeamResult:
        earlier = await self.procedures.find(self.name, idea) if self.procedures is not None else []
        start_at = len(self.env.history)
        self.env.publish_message(
            Message(
                content=render_with_procedure(idea, earlier[0]) if earlier else idea,
                cause_by=USER_REQUIREMENT,
                sent_from="Human",
                send_to=tuple(send_to),
            )
        )
        start = self.tokens_used()
        rounds = 0
        reason: Literal["idle", "n_round", "budget"] = "n_round"
        while rounds < n_round:
            if self.env.is_idle:
                reason = "idle"
                break
            used = self.tokens_used() - start
            if self.budget_tokens is not None and used >= self.budget_tokens:
                reason = "budget"
                break
            await self.env.run()
            rounds += 1
        else:
            if self.env.is_idle:
                reason = "idle"
        used = self.tokens_used() - start
        if reason == "budget" or (self.budget_tokens is not None and used >= self.budget_tokens):
            reason = "budget"
            message = (
                f"stopped: token budget of {self.budget_tokens} spent ({used} tokens) after {rounds} rounds"
            )
        elif reason == "idle":
            message = f"done: no role has anything left to do after {rounds} rounds ({used} tokens)"
        else:
            message = f"stopped after n_round={n_round} rounds with work left ({used} tokens)"
        _log.info(message)
        result = TeamResult(
            rounds=rounds,
            stop_reason=reason,
            message=message,
            tokens_used=used,
            history=tuple(self.env.history),
            used_procedure=earlier[0].id if earlier else None,
        )
        return await self._record(idea, result, start_at)

    async def _record(self, idea: str, result: TeamResult, start_at: int) -> TeamResult:
        """Store the run's procedure (one call); a failure is logged and reported, the run's result stays."""
        if self.procedures is None or not self.env.roles:
            return result
        llm = self.procedure_llm or next(iter(self.env.roles.values())).llm
        steps = [*result.history[start_at + 1 :], Message(content=result.message, sent_from="Team")]
        try:
            text = await summarize_run(llm, idea, steps)
            stored = await self.procedures.save(Procedure(agent=self.name, task=idea, procedure=text))
        except BrainError as exc:
            _log.warning("the procedure of team %r's run was not stored: %s", self.name, exc)
            return result.model_copy(update={"procedure_error": str(exc)})
        return result.model_copy(update={"procedure": stored})
