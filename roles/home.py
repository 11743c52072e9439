"""MetaGPT's conversation surface of an `Assistant`, bound to its one home chat: `talk`, `think`, `act`,
`refine_memory`, the `memory`, `get_memory` and `load_memory`.

    await role.talk("Book hotels there for me")
    while await role.think():
        message = await role.act()

`talk` saves the text as pending (it survives a crash); `think` refines memory (folds the summary when
due, takes the pending text, and rewrites it self-contained when it points back at the conversation) and
sets `rc.todo`; `act` answers through the turn engine (facts, tools, memory search with the rewrite) and
stores the question and answer in one write. Each step holds the chat's lock while it works.

Skills: MetaGPT asks one call to classify the text ([TALK] or [SKILL]), one to parse a skill's arguments,
one to answer. Here skills are tools of the one talk call, so `think` always picks a `TalkAction`; a
`SkillAction` put in `rc.todo` by hand runs that skill with its arguments.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any, Protocol

from actions.metagpt_talk import TalkAction
from actions.relate import context_of
from brain.errors import InputError
from brain.llm.protocol import ToolCall
from brain.llm.usage import spending
from brain.message import Message, check_text
from brain.storage.conversation import Conversation
from roles.brain_memory import BrainMemory
from roles.context import Context
from roles.engine import TurnEngine
from roles.skills import Skills
from roles.turn import Turn

__all__ = ["HomeChat", "HomeRole", "RoleContext", "SkillAction"]


class SkillAction:
    """Run one skill with its arguments; the result as an assistant `Message` caused by this action."""

    name = "SkillAction"

    def __init__(self, skill: str, args: dict[str, Any] | None = None, *, skills: Skills) -> None:
        self.skill, self.args, self.skills = skill, dict(args or {}), skills
        self.rsp: Message | None = None

    async def run(self) -> Message:
        call = ToolCall(id=f"call_{uuid.uuid4().hex[:12]}", name=self.skill, arguments=json.dumps(self.args))
        self.rsp = Message(role="assistant", content=await self.skills.invoke(call), cause_by=self.name)
        return self.rsp


@dataclass
class RoleContext:
    """MetaGPT's `rc`: what the role does next (`todo`), set by `think`, cleared by `act`."""

    todo: TalkAction | SkillAction | None = None


class HomeRole(Protocol):
    """What the surface needs of its assistant."""

    home: Conversation
    context: Context | None

    async def ready(self) -> TurnEngine: ...


class HomeChat:
    """The state of one conversation as MetaGPT's Assistant keeps it (never shared between chats)."""

    def __init__(self, role: HomeRole) -> None:
        self.role = role
        self.rc = RoleContext()
        self.memory = BrainMemory(user_id=role.home.user_id, chat_id=role.home.chat_id)
        self._turn: Turn | None = None  # the turn refine_memory took, until act answers it

    @property
    def _ids(self) -> tuple[str | bytes, str | bytes]:
        return self.role.home.user_id, self.role.home.chat_id

    async def talk(self, text: str) -> None:
        """Save `text` as the home chat's pending talk (one write) and load its memory."""
        engine = await self.role.ready()
        text = check_text(text, engine.memory_settings.max_message_bytes)
        async with engine.lock(*self._ids):
            self.memory = await engine.load_memory(*self._ids, pending=text, kind=BrainMemory)  # type: ignore[assignment]

    async def _bound(self, engine: TurnEngine) -> BrainMemory:
        """The memory, bound to the store: a standalone one (`load_memory`) is written first, each turn
        once; a fresh one is loaded."""
        memory = self.memory
        if memory._state.store is None:
            if memory.history or memory.knowledge or memory.historical_summary or memory.last_talk:
                memory.attach(engine.runtime.store, engine.memory_settings, engine.tokenizer)
                await memory.dumps()
            else:
                self.memory = await engine.load_memory(*self._ids, kind=BrainMemory)  # type: ignore[assignment]
        return self.memory

    async def refine_memory(self) -> str | None:
        """The text to answer: the pending talk, rewritten self-contained when it depends on the
        conversation (`memory.rewrite_followups`); None when nothing is pending. Folds the summary first
        when the window is full."""
        engine = await self.role.ready()
        async with engine.lock(*self._ids):
            memory = await self._bound(engine)
            with spending() as spent:
                try:
                    self._turn = await engine.refine(memory)
                finally:
                    await engine.record_usage(memory.user_id, memory.chat_id, spent)
        return None if self._turn is None else self._turn.query

    async def think(self) -> bool:
        """Refine memory and pick the next action (`rc.todo`); False when there is nothing to answer."""
        text = await self.refine_memory()
        if text is None:
            self.rc.todo = None
            return False
        engine = await self.role.ready()
        self.rc.todo = TalkAction(
            i_context=text,
            knowledge=self.memory.get_knowledge(),
            history_summary=context_of(self.memory.historical_summary, self.memory.history),
            context=self.role.context,
            llm=engine.llm,
        )
        return True

    async def act(self) -> Message:
        """Run `rc.todo` (the talk, when only `refine_memory` ran); the answer, stored with its question in
        the home chat's memory."""
        todo, turn = self.rc.todo, self._turn
        if turn is None:
            raise InputError("nothing to act on: talk(text), then think()")
        engine = await self.role.ready()
        self.rc.todo, self._turn = None, None
        async with engine.lock(*self._ids):
            if isinstance(todo, SkillAction):
                answer = await todo.run()
                turn.memory.add_talk(Message(content=turn.text, sent_from="user"))
                turn.memory.add_answer(answer)
                await turn.memory.dumps()
                return answer
            with spending() as spent:
                async for _ in engine.answer_turn(turn, spent):
                    pass
        assert turn.answer is not None
        if todo is not None:
            todo.rsp = turn.answer
        return turn.answer

    def get_memory(self) -> str:
        """The memory as JSON (`load_memory` takes it back)."""
        return self.memory.model_dump_json()

    def load_memory(self, m: dict[str, Any] | str | bytes) -> None:
        """Replace the memory with `m` (a dict or JSON, as `get_memory` gives); its chat becomes home.
        Unknown fields are an `InputError`; nothing is written until the next step."""
        try:
            memory = (
                BrainMemory.model_validate(m) if isinstance(m, dict) else BrainMemory.model_validate_json(m)
            )
        except ValueError as exc:
            raise InputError(f"not a BrainMemory: {exc}") from exc
        self.role.home = Conversation(memory.user_id, memory.chat_id)
        self.memory, self.rc.todo, self._turn = memory, None, None
