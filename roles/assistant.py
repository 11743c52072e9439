"""`Assistant`: the turn engine as a MetaGPT Role, for teams and for code that wants one object.

The engine (`roles.engine.TurnEngine`) does the work for every user and chat at once and keeps no call's
state; the memory mode (`roles.modes`) is a strategy chosen by `memory.mode`; the chat operations
(`roles.operations.ChatOperations`) sit beside it. This class wires them up and speaks Role: in a team it
answers in its `home` chat. MetaGPT's conversation surface (`talk`, `think`, `act`, `refine_memory`,
`memory`, `get_memory`, `load_memory`) is bound to that one chat (`roles.home`).

Built from a runtime (`Assistant(runtime)`, `Assistant.from_settings(settings)`), or as MetaGPT's is
(`Assistant(language="Chinese", context=ctx)`): the context's runtime is then opened on first use.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from typing import Any

from brain.errors import ConfigError
from brain.llm.local import LocalModel
from brain.memory.brain_memory import BrainMemory
from brain.memory.erasure import ErasureReport
from brain.memory.tiers import Tiers
from brain.memory.transfer import ConversationExport
from brain.message import Message
from brain.progress import Progress
from brain.runtime import Runtime, open_runtime
from brain.search.documents import LoadResult
from brain.settings import Settings
from brain.storage.conversation import Conversation
from roles.context import Context, ContextLLM
from roles.engine import TurnEngine
from roles.fact_worker import running
from roles.home import HomeChat, RoleContext
from roles.modes import BrainMode, mode_for
from roles.operations import ChatOperations, TakenBack
from roles.role import USER_REQUIREMENT, Role
from roles.skills import Skills

__all__ = ["Assistant"]


class Assistant(Role):
    """An assistant that remembers, in the memory `mode` given (default: the one `memory.mode` names)."""

    def __init__(
        self,
        runtime: Runtime | None = None,
        *,
        context: Context | None = None,
        mode: BrainMode | None = None,
        skills: Skills | Sequence[Any] | None = None,
        user_id: str = "local",
        chat_id: str = "default",
        name: str = "Lily",
        profile: str = "An assistant",
        goal: str = "Help to solve problem",
        constraints: str = "Talk in {language}",
        desc: str = "",
        language: str | None = None,
        watch: Sequence[str] = (USER_REQUIREMENT,),
    ) -> None:
        if runtime is None and context is None:
            context = Context.default()
        options = context.kwargs if context is not None else {}
        super().__init__(
            llm=runtime.llm if runtime is not None else ContextLLM(context),  # type: ignore[arg-type]
            name=name,
            profile=profile,
            goal=goal,
            constraints=constraints,
            desc=desc or str(options.get("agent_description") or ""),
            language=language or str(options.get("language") or "English"),
            watch=watch,
        )
        self.context = context
        # `skills=[get_weather, ...]`: `@tool` functions (and `Skill`s) as `Skills`
        self._mode = mode
        self._skills = skills if skills is None or isinstance(skills, Skills) else Skills(list(skills))
        self._engine: TurnEngine | None = None
        self.home = Conversation(user_id, chat_id)  # where `run()` and `talk()` go
        self.conversation = HomeChat(self)
        if runtime is not None:
            self._build(runtime)

    def _build(self, runtime: Runtime) -> TurnEngine:
        self._engine = TurnEngine(
            runtime, self._mode or mode_for(runtime), persona=self.persona, skills=self._skills
        )
        self.operations = ChatOperations(self._engine)
        self.llm = runtime.llm
        self.actions = [self._engine.talk_action]
        return self._engine

    async def ready(self) -> TurnEngine:
        """The engine, opening the context's runtime first when built from a context."""
        if self._engine is None:
            assert self.context is not None
            self._build(await self.context.runtime())
        assert self._engine is not None
        return self._engine

    async def _ops(self) -> ChatOperations:
        await self.ready()
        return self.operations

    @property
    def engine(self) -> TurnEngine:
        if self._engine is None:
            raise ConfigError("this assistant opens its context's runtime on first use: await ready() first")
        return self._engine

    @classmethod
    def for_runtime(cls, runtime: Runtime, **options: Any) -> Assistant:
        """The assistant of `runtime`'s `memory.mode` (a subclass: its own mode)."""
        return cls(runtime, **options)

    @classmethod
    @contextlib.asynccontextmanager
    async def from_settings(
        cls,
        settings: Settings,
        *,
        drain_progress: Progress | None = None,
        local_model: LocalModel | None = None,
        defer_model: bool = False,
        **options: Any,
    ) -> AsyncIterator[Assistant]:
        """An assistant owning its backend and LLM clients (closed on exit), with its fact worker; on exit
        the worker applies what it holds, telling `drain_progress` how it goes (`running`). `local_model`
        and `defer_model` as `open_runtime`'s (an embedded model whose load began early; one started by
        the first call of it)."""
        runtime_of = open_runtime(settings, local_model=local_model, defer_model=defer_model)
        async with runtime_of as runtime, running(runtime, drain_progress):
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

    # ------------------------------------------------------------------ MetaGPT's surface (the home chat)

    @property
    def rc(self) -> RoleContext:
        return self.conversation.rc

    @property
    def memory(self) -> BrainMemory:
        """The home chat's memory (as loaded by the last step)."""
        return self.conversation.memory

    @memory.setter
    def memory(self, memory: BrainMemory) -> None:
        self.conversation.load_memory(memory.model_dump())

    async def talk(self, text: str) -> None:
        await self.conversation.talk(text)

    async def refine_memory(self) -> str | None:
        return await self.conversation.refine_memory()

    async def think(self) -> bool:
        return await self.conversation.think()

    async def act(self) -> Message:
        return await self.conversation.act()

    def get_memory(self) -> str:
        return self.conversation.get_memory()

    def load_memory(self, m: dict[str, Any] | str | bytes) -> None:
        self.conversation.load_memory(m)

    # ------------------------------------------------------------------ turns (the engine's)

    async def chat(self, user_id: str, chat_id: str, text: str, *, message_id: str | None = None) -> str:
        """One turn; the answer. `message_id`: an idempotency key (a retry with it never stores the turn
        twice and gives the stored answer)."""
        return await (await self.ready()).chat(user_id, chat_id, text, message_id=message_id)

    def chat_stream(
        self, user_id: str, chat_id: str, text: str, *, message_id: str | None = None
    ) -> AsyncGenerator[str, None]:
        """One turn, streamed (`TurnEngine.chat_stream`): the engine's own stream once it is built, so that
        no generator of ours handles each piece on its way (a streamed answer has hundreds)."""
        if self._engine is not None:
            return self._engine.chat_stream(user_id, chat_id, text, message_id=message_id)
        return self._chat_stream_when_ready(user_id, chat_id, text, message_id)

    async def _chat_stream_when_ready(
        self, user_id: str, chat_id: str, text: str, message_id: str | None
    ) -> AsyncGenerator[str, None]:
        async for piece in (await self.ready()).chat_stream(user_id, chat_id, text, message_id=message_id):
            yield piece

    async def retry_stream(self, user_id: str, chat_id: str) -> AsyncIterator[str]:
        async for piece in (await self.ready()).retry_stream(user_id, chat_id):
            yield piece

    async def memory_of(
        self, user_id: str | bytes, chat_id: str | bytes, *, pending: str | None = None
    ) -> BrainMemory:
        """Any chat's memory, loaded fresh (the conversation surface's `memory` is the home chat's)."""
        return await (await self.ready()).load_memory(user_id, chat_id, pending=pending)

    async def pending(self, user_id: str | bytes, chat_id: str | bytes) -> str | None:
        """The user's text still waiting for an answer (a turn that failed), if any."""
        return (await (await self.ready()).load_memory(user_id, chat_id)).last_talk

    async def relevant_facts(self, user_id: str | bytes, text: str) -> list[str]:
        return await (await self.ready()).relevant_facts(user_id, text)

    # ------------------------------------------------------------------ chat operations

    async def take_back(self, user_id: str, chat_id: str, n: int = 1) -> list[Message]:
        return await (await self._ops()).take_back(user_id, chat_id, n)

    async def take_back_exchanges(self, user_id: str, chat_id: str, n: int = 1) -> TakenBack:
        """Take back the newest `n` exchanges, a pending question included (`ChatOperations`)."""
        return await (await self._ops()).take_back_exchanges(user_id, chat_id, n)

    async def rewrite(self, user_id: str, chat_id: str, text: str) -> None:
        await (await self._ops()).rewrite(user_id, chat_id, text)

    async def add_turns(self, user_id: str, chat_id: str, messages: Sequence[Message]) -> int:
        return await (await self._ops()).add_turns(user_id, chat_id, messages)

    async def add_knowledge(self, user_id: str, chat_id: str, text: str) -> None:
        await (await self._ops()).add_knowledge(user_id, chat_id, text)

    async def archive(self, user_id: str, chat_id: str, text: str, *, named: str | None = None) -> LoadResult:
        return await (await self._ops()).archive(user_id, chat_id, text, named=named)

    async def fits(self, text: str) -> bool:
        """Whether a message of `text` fits the model's context window (else `chat` refuses it)."""
        return (await self.ready()).fits(text)

    async def summarize_now(self, user_id: str, chat_id: str) -> str:
        return await (await self._ops()).summarize_now(user_id, chat_id)

    async def title(self, user_id: str, chat_id: str, max_words: int = 5) -> str:
        return await (await self._ops()).title(user_id, chat_id, max_words)

    async def export_chat(
        self, user_id: str, chat_id: str, *, progress: Progress | None = None
    ) -> ConversationExport:
        return await (await self._ops()).export_chat(user_id, chat_id, progress=progress)

    async def import_chat(
        self, user_id: str, chat_id: str, export: ConversationExport, *, progress: Progress | None = None
    ) -> None:
        await (await self._ops()).import_chat(user_id, chat_id, export, progress=progress)

    async def backfill(
        self, user_id: str, chat_id: str, messages: Sequence[Message], *, progress: Progress | None = None
    ) -> None:
        """Load a conversation held elsewhere, each message with its original `created_at`, into this
        empty chat; fact memory learns from it as if it had been lived (`ChatOperations.backfill`)."""
        await (await self._ops()).backfill(user_id, chat_id, messages, progress=progress)

    async def forget(self, user_id: str, chat_id: str) -> ErasureReport:
        return await (await self._ops()).forget(user_id, chat_id)

    async def forget_user(self, user_id: str) -> ErasureReport:
        return await (await self._ops()).forget_user(user_id)

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
