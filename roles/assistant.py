"""`Assistant`: a Role whose memory is a BrainMemory per (user_id, chat_id). MetaGPT's names: talk, think,
act, refine_memory, run, get_memory, load_memory. One LLM call per ordinary turn; summaries only when the
budget says so; a failed call leaves memory as it was and last_talk in place.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any

from actions.talk import TalkAction, render_talk
from brain.connection import RedisConnection
from brain.errors import BrainError, StoreError
from brain.llm import LLM, Completion, TextDelta
from brain.memory import BrainMemory
from brain.message import Message
from brain.openai_llm import OpenAILLM
from brain.redis_store import RedisMemoryStore
from brain.settings import MemorySettings, Settings
from brain.store import MemoryStore
from brain.tokens import Tokenizer
from roles.role import USER_REQUIREMENT, Role
from roles.skills import Skills

__all__ = ["Assistant"]

_log = logging.getLogger("brain.assistant")


class Assistant(Role):
    """An assistant that remembers. Memory is loaded per turn, so several processes can serve one chat."""

    def __init__(
        self,
        *,
        llm: LLM,
        store: MemoryStore,
        memory_settings: MemorySettings | None = None,
        context_window: int = 128_000,
        memory_llm: LLM | None = None,
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
        tokenizer: Tokenizer | None = None,
    ) -> None:
        super().__init__(
            llm=llm,
            name=name,
            profile=profile,
            goal=goal,
            constraints=constraints,
            desc=desc,
            language=language,
            watch=watch,
        )
        self.store = store
        self.memory_settings = memory_settings or MemorySettings()
        self.context_window = context_window
        self.memory_llm = memory_llm or llm
        self.skills = skills or Skills()
        self.user_id, self.chat_id = user_id, chat_id
        self.tokenizer = tokenizer or Tokenizer.for_model(llm.model)
        self.memory: BrainMemory | None = None
        self.talk_action = TalkAction(
            self.skills.specs,
            self.skills.invoke if self.skills else None,
            self.memory_settings.max_tool_steps,
        )
        self.actions = [self.talk_action]
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}
        self._text: str | None = None

    @classmethod
    @contextlib.asynccontextmanager
    async def from_settings(cls, settings: Settings, **options: Any) -> AsyncIterator[Assistant]:
        """An Assistant that owns its Redis connection and LLM clients, closed on exit."""
        async with contextlib.AsyncExitStack() as stack:
            connection = await RedisConnection.open(settings)
            stack.push_async_callback(connection.aclose)
            llm = await stack.enter_async_context(OpenAILLM.from_settings(settings.llm))
            memory_llm: LLM = llm
            if settings.memory.llm in settings.llms:
                memory_settings = settings.llm_for(settings.memory.llm)
                memory_llm = await stack.enter_async_context(OpenAILLM.from_settings(memory_settings))
            store = RedisMemoryStore(
                connection.client,
                prefix=settings.redis.key_prefix,
                ttl_seconds=settings.memory.ttl_seconds,
                max_message_bytes=settings.memory.max_message_bytes,
            )
            if cls is Assistant:  # the memory mode picks the class
                from roles.tiered import make_assistant  # it builds on this module

                yield make_assistant(
                    settings, connection.client, llm=llm, store=store, memory_llm=memory_llm, **options
                )
            else:
                yield cls(
                    llm=llm,
                    store=store,
                    memory_settings=settings.memory,
                    context_window=settings.llm.context_window,
                    memory_llm=memory_llm,
                    **options,
                )

    # ------------------------------------------------------------------ memory

    async def load_memory(self, user_id: str | None = None, chat_id: str | None = None) -> BrainMemory:
        """Load (user_id, chat_id)'s memory from the store; it becomes this assistant's memory."""
        self.user_id, self.chat_id = user_id or self.user_id, chat_id or self.chat_id
        self.memory = await BrainMemory.loads(
            self.store, self.user_id, self.chat_id, settings=self.memory_settings, tokenizer=self.tokenizer
        )
        return self.memory

    async def take_back(self, n: int) -> list[Message]:
        """Take back the newest `n` turns of the loaded chat (kept in the store, flagged hidden)."""
        return await (await self._memory()).pop(n)

    def get_memory(self) -> str:
        """The loaded memory as JSON (MetaGPT's get_memory)."""
        if self.memory is None:
            raise StoreError("no memory loaded: call load_memory() or talk() first")
        return self.memory.model_dump_json()

    async def _memory(self) -> BrainMemory:
        return self.memory if self.memory is not None else await self.load_memory()

    # ------------------------------------------------------------------ MetaGPT's turn

    async def talk(self, text: str) -> None:
        """Record what the user said as the pending `last_talk` (saved at once: a crash keeps it)."""
        if not isinstance(text, str) or not text.strip():
            raise BrainError("say something: the text is empty")
        memory = await self._memory()
        memory.set_last_talk(text)
        await memory.dumps()

    async def refine_memory(self) -> str | None:
        """Take the pending talk; summarize first when the active window is over budget."""
        memory = await self._memory()
        if memory.needs_summary(self.context_window):
            keep = int(self.context_window * self.memory_settings.keep_recent_share)
            try:
                await memory.summarize(
                    self.memory_llm, self.memory_settings.summary_max_words, keep_recent=keep
                )
            except BrainError as exc:  # the answer can still be given from the window; try again next turn
                _log.warning(
                    "summarizing %s/%s failed, will retry next turn: %s", self.user_id, self.chat_id, exc
                )
        return memory.pop_last_talk()

    async def think(self) -> bool:
        self._text = await self.refine_memory()
        self.todo = self.talk_action if self._text is not None else None
        return self.todo is not None

    async def act(self) -> Message:
        async for _ in self.act_stream():
            pass
        assert self.memory is not None
        return self.memory.history[-1]

    async def act_stream(self) -> AsyncIterator[str]:
        """Stream the answer to the talk taken by `think()`; memory commits only after the whole answer."""
        memory, text = await self._memory(), self._text
        if text is None:
            raise BrainError("nothing to answer: call talk() and think() first")
        prompt = render_talk(
            persona=self.persona,
            text=text,
            tokenizer=self.tokenizer,
            history_budget=int(self.context_window * self.memory_settings.prompt_history_share),
            knowledge=memory.get_knowledge(),
            summary=memory.historical_summary,
            history=memory.history,
        )
        try:
            final: Completion | None = None
            async for event in self.talk_action.stream(self.llm, prompt):
                if isinstance(event, TextDelta):
                    yield event.text
                else:
                    final = event
            assert final is not None
            memory.add_talk(Message(content=text, sent_from="user"))
            memory.add_answer(
                Message(content=final.content or "", sent_from=self.name, cause_by="TalkAction")
            )
            await memory.dumps()
        except BaseException:
            memory.restore_last_talk()  # the store never lost it; this process can retry too
            raise
        finally:
            self._text = None

    async def run(self, with_message: Message | str | None = None) -> Message | None:
        if with_message is not None:
            await self.talk(with_message.content if isinstance(with_message, Message) else with_message)
        elif self.inbox:
            news = await self._observe()
            await self.talk(news[-1].content)
        if not await self.think():
            return None
        answer = await self.act()
        if self.env is not None:
            self.env.publish_message(answer)
        return answer

    # ------------------------------------------------------------------ the embedding API

    async def chat(self, user_id: str, chat_id: str, text: str) -> str:
        return "".join([piece async for piece in self.chat_stream(user_id, chat_id, text)])

    async def chat_stream(self, user_id: str, chat_id: str, text: str) -> AsyncIterator[str]:
        """One turn for (user_id, chat_id), streamed. Turns of one chat in this process run one at a time."""
        lock = self._locks.setdefault((user_id, chat_id), asyncio.Lock())
        async with lock:
            await self.load_memory(user_id, chat_id)
            await self.talk(text)
            if await self.think():
                async for piece in self.act_stream():
                    yield piece

    async def summarize_now(self) -> str:
        memory = await self._memory()
        return await memory.summarize(self.memory_llm, self.memory_settings.summary_max_words)
