"""`Assistant`: the turn engine as a MetaGPT Role, for teams and for code that wants one object.

The engine (`roles.engine.TurnEngine`) does the work for every user and chat at once and keeps no call's
state; the memory mode (`roles.modes`) is a strategy chosen by `memory.mode`; the chat operations
(`roles.operations.ChatOperations`) sit beside it. This class only wires them up and speaks Role: in a
team it answers in its `home` chat.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Any

from brain.memory.brain_memory import BrainMemory
from brain.memory.erasure import ErasureReport
from brain.memory.tiers import Tiers
from brain.memory.transfer import ConversationExport
from brain.message import Message
from brain.progress import Progress
from brain.runtime import Runtime, open_runtime
from brain.settings import Settings
from brain.storage.conversation import Conversation
from roles.engine import TurnEngine
from roles.fact_worker import running
from roles.modes import BrainMode, mode_for
from roles.operations import ChatOperations
from roles.role import USER_REQUIREMENT, Role
from roles.skills import Skills

__all__ = ["Assistant"]


class Assistant(Role):
    """An assistant that remembers, in the memory `mode` given (default: the one `memory.mode` names)."""

    def __init__(
        self,
        runtime: Runtime,
        *,
        mode: BrainMode | None = None,
        skills: Skills | None = None,
        user_id: str = "local",
        chat_id: str = "default",
        name: str = "Lily",
        profile: str = "An assistant",
        goal: str = "Help to solve problem",
        constraints: str = "Talk in {language}",
        desc: str = "",
        language: str = "English",
        watch: Sequence[str] = (USER_REQUIREMENT,),
    ) -> None:
        super().__init__(
            llm=runtime.llm,
            name=name,
            profile=profile,
            goal=goal,
            constraints=constraints,
            desc=desc,
            language=language,
            watch=watch,
        )
        self.engine = TurnEngine(runtime, mode or mode_for(runtime), persona=self.persona, skills=skills)
        self.operations = ChatOperations(self.engine)
        self.home = Conversation(user_id, chat_id)  # where `run()` talks when the assistant is in a team
        self.actions = [self.engine.talk_action]

    @classmethod
    def for_runtime(cls, runtime: Runtime, **options: Any) -> Assistant:
        """The assistant of `runtime`'s `memory.mode` (a subclass: its own mode)."""
        return cls(runtime, **options)

    @classmethod
    @contextlib.asynccontextmanager
    async def from_settings(cls, settings: Settings, **options: Any) -> AsyncIterator[Assistant]:
        """An assistant owning its backend and LLM clients (closed on exit), with its fact worker."""
        async with open_runtime(settings) as runtime, running(runtime):
            yield cls.for_runtime(runtime, **options)

    @property
    def runtime(self) -> Runtime:
        return self.engine.runtime

    @property
    def mode(self) -> BrainMode:
        return self.engine.mode

    @property
    def skills(self) -> Skills:
        return self.engine.skills

    @property
    def tiers(self) -> Tiers:
        """The memory tiers (core blocks, archival, recall, facts, graph): `ConfigError` without a backend."""
        return self.engine.tiers

    @property
    def store(self) -> Any:
        return self.runtime.store

    @property
    def memory_llm(self) -> Any:
        return self.runtime.memory_llm

    @property
    def tokenizer(self) -> Any:
        return self.runtime.tokenizer

    @property
    def memory_settings(self) -> Any:
        return self.engine.memory_settings

    @property
    def busy_chats(self) -> int:
        return self.engine.busy_chats

    # ------------------------------------------------------------------ turns (the engine's)

    async def chat(self, user_id: str, chat_id: str, text: str) -> str:
        return await self.engine.chat(user_id, chat_id, text)

    def chat_stream(self, user_id: str, chat_id: str, text: str) -> AsyncIterator[str]:
        return self.engine.chat_stream(user_id, chat_id, text)

    def retry_stream(self, user_id: str, chat_id: str) -> AsyncIterator[str]:
        return self.engine.retry_stream(user_id, chat_id)

    async def load_memory(
        self, user_id: str | bytes, chat_id: str | bytes, *, pending: str | None = None
    ) -> BrainMemory:
        return await self.engine.load_memory(user_id, chat_id, pending=pending)

    async def get_memory(self, user_id: str | bytes, chat_id: str | bytes) -> str:
        """The chat's memory as JSON (MetaGPT's get_memory)."""
        return (await self.engine.load_memory(user_id, chat_id)).model_dump_json()

    async def pending(self, user_id: str | bytes, chat_id: str | bytes) -> str | None:
        """The user's text still waiting for an answer (a turn that failed), if any."""
        return (await self.engine.load_memory(user_id, chat_id)).last_talk

    async def relevant_facts(self, user_id: str | bytes, text: str) -> list[str]:
        return await self.engine.relevant_facts(user_id, text)

    # ------------------------------------------------------------------ chat operations

    async def take_back(self, user_id: str, chat_id: str, n: int = 1) -> list[Message]:
        return await self.operations.take_back(user_id, chat_id, n)

    async def rewrite(self, user_id: str, chat_id: str, text: str) -> None:
        await self.operations.rewrite(user_id, chat_id, text)

    async def add_turns(self, user_id: str, chat_id: str, messages: Sequence[Message]) -> int:
        return await self.operations.add_turns(user_id, chat_id, messages)

    async def add_knowledge(self, user_id: str, chat_id: str, text: str) -> None:
        await self.operations.add_knowledge(user_id, chat_id, text)

    async def summarize_now(self, user_id: str, chat_id: str) -> str:
        return await self.operations.summarize_now(user_id, chat_id)

    async def title(self, user_id: str, chat_id: str, max_words: int = 5) -> str:
        return await self.operations.title(user_id, chat_id, max_words)

    async def export_chat(
        self, user_id: str, chat_id: str, *, progress: Progress | None = None
    ) -> ConversationExport:
        return await self.operations.export_chat(user_id, chat_id, progress=progress)

    async def import_chat(
        self, user_id: str, chat_id: str, export: ConversationExport, *, progress: Progress | None = None
    ) -> None:
        await self.operations.import_chat(user_id, chat_id, export, progress=progress)

    async def forget(self, user_id: str, chat_id: str) -> ErasureReport:
        return await self.operations.forget(user_id, chat_id)

    async def forget_user(self, user_id: str) -> ErasureReport:
        return await self.operations.forget_user(user_id)

    # ------------------------------------------------------------------ as a role in a team

    async def run(self, with_message: Message | str | None = None) -> Message | None:
        """Answer the newest message (given, or from the inbox) in the `home` chat; publish the answer."""
        if with_message is not None:
            text = with_message.content if isinstance(with_message, Message) else with_message
        elif self.inbox:
            text = (await self._observe())[-1].content
        else:
            return None
        reply = await self.chat(str(self.home.user_id), str(self.home.chat_id), text)
        message = Message(role="assistant", content=reply, sent_from=self.name, cause_by="TalkAction")
        self.history.append(message)
        if self.env is not None:
            self.env.publish_message(message)
        return message
