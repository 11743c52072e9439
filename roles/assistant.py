"""`Assistant`: a Role whose memory is a BrainMemory per (user_id, chat_id).

One Assistant serves any number of users and chats at once: it holds only what every call shares (the
runtime, persona, skills, actions); each call's state is a local `Turn` passed along. Turns of one chat in
this process run one at a time (a lock that exists only while the chat is busy); other processes may serve
the same chat, since memory is loaded per turn and appends are idempotent.

One LLM call per ordinary turn; summaries only when the budget says so. Input is checked before any write or
LLM call; a failed turn leaves memory as it was and the user's text pending (`retry_stream` answers it).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, ClassVar

from actions.summarizer import Summarizer
from actions.talk import Refit, TalkAction, render_talk
from brain import telemetry
from brain.errors import BrainError, ConfigError, InputError, StoreError
from brain.keys import raw_id
from brain.llm.protocol import ChatMessage, Completion, TextDelta
from brain.llm.usage import Usage
from brain.memory.brain_memory import BrainMemory
from brain.memory.graph import graph_links
from brain.memory.window import Window
from brain.message import Message, check_text
from brain.progress import Progress
from brain.runtime import Runtime, open_runtime
from brain.search.analysis import searchable
from brain.settings import Settings
from brain.storage.conversation import Conversation
from roles.fact_worker import running
from roles.locks import KeyedLocks
from roles.operations import ChatOperations
from roles.role import USER_REQUIREMENT, Role
from roles.skills import Skills

__all__ = ["Assistant", "Turn"]

_log = logging.getLogger("brain.assistant")


@dataclass
class Turn:
    """One call's state: whose memory, what to answer, and the reply as it is produced."""

    memory: BrainMemory
    text: str
    pieces: list[str] = field(default_factory=list)
    trail: list[ChatMessage] = field(default_factory=list)  # the turn's tool rounds (block memory keeps them)
    calls: int = 0
    usage: Usage = field(default_factory=lambda: Usage(prompt_tokens=0, completion_tokens=0))

    def spend(self, completion: Completion) -> None:
        """Count what one LLM call of this turn cost."""
        self.calls += 1
        self.usage += completion.usage


class Assistant(Role, ChatOperations):
    """An assistant that remembers. `mode` names the `memory.mode` this class serves."""

    mode: ClassVar[str] = "brain"
    _modes: ClassVar[dict[str, type[Assistant]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "mode" in cls.__dict__:  # a class serving a mode of its own registers itself for it
            Assistant._modes[cls.mode] = cls

    def __init__(
        self,
        runtime: Runtime,
        *,
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
        self.runtime = runtime
        self.memory_settings = runtime.settings.memory
        self.context_window = runtime.settings.llm.context_window
        self.skills = skills or Skills()
        self.home = Conversation(user_id, chat_id)  # where `run()` talks when the assistant is in a team
        self.talk_action = TalkAction(
            self.skills.specs,
            self.skills.invoke if self.skills else None,
            self.memory_settings.max_tool_steps,
        )
        self.actions = [self.talk_action]
        self.summarizer = Summarizer.from_settings(
            runtime.memory_llm, runtime.tokenizer, self.memory_settings
        )
        self._locks = KeyedLocks()

    # ------------------------------------------------------------------ building

    @classmethod
    def for_runtime(cls, runtime: Runtime, **options: Any) -> Assistant:
        """The assistant for `runtime`: `Assistant` picks the class of `memory.mode`, a subclass is itself."""
        if cls is not Assistant:
            return cls(runtime, **options)
        mode = runtime.settings.memory.mode
        if mode not in cls._modes:
            raise ConfigError(f"memory.mode {mode!r}: no assistant class serves it (import roles first)")
        return cls._modes[mode](runtime, **options)

    @classmethod
    @contextlib.asynccontextmanager
    async def from_settings(cls, settings: Settings, **options: Any) -> AsyncIterator[Assistant]:
        """An assistant owning its Redis connection and LLM clients (closed on exit)."""
        async with open_runtime(settings) as runtime, running(runtime):
            yield cls.for_runtime(runtime, **options)

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
    def _speaker(self) -> str:
        return self.name

    @property
    def busy_chats(self) -> int:
        """Chats with a call running or waiting in this process (the lock table's size)."""
        return len(self._locks)

    # ------------------------------------------------------------------ memory

    async def load_memory(
        self, user_id: str | bytes, chat_id: str | bytes, *, pending: str | None = None
    ) -> BrainMemory:
        """(user_id, chat_id)'s memory, loaded fresh from the store; the caller keeps it. `pending` is saved
        as the text waiting for an answer in the same call."""
        return await BrainMemory.loads(
            self.store,
            user_id,
            chat_id,
            settings=self.memory_settings,
            tokenizer=self.tokenizer,
            pending=pending,
        )

    async def get_memory(self, user_id: str | bytes, chat_id: str | bytes) -> str:
        """The chat's memory as JSON (MetaGPT's get_memory)."""
        return (await self.load_memory(user_id, chat_id)).model_dump_json()

    async def pending(self, user_id: str | bytes, chat_id: str | bytes) -> str | None:
        """The user's text still waiting for an answer (a turn that failed), if any."""
        return (await self.load_memory(user_id, chat_id)).last_talk

    def _lock(self, user_id: str | bytes, chat_id: str | bytes) -> AbstractAsyncContextManager[None]:
        """The chat's lock: calls on one chat in this process run one at a time."""
        return self._locks.hold((raw_id(user_id, "user_id"), raw_id(chat_id, "chat_id")))

    @contextlib.asynccontextmanager
    async def _chat(
        self, user_id: str | bytes, chat_id: str | bytes, pending: str | None = None
    ) -> AsyncIterator[BrainMemory]:
        """Hold the chat's lock and load its memory (saving `pending` as the text to answer)."""
        async with self._lock(user_id, chat_id):
            yield await self.load_memory(user_id, chat_id, pending=pending)

    # ------------------------------------------------------------------ turns

    async def chat(self, user_id: str, chat_id: str, text: str) -> str:
        """One turn for (user_id, chat_id); the whole answer."""
        return "".join([piece async for piece in self.chat_stream(user_id, chat_id, text)])

    async def chat_stream(self, user_id: str, chat_id: str, text: str) -> AsyncIterator[str]:
        """One turn, streamed. `InputError` (nothing stored, nothing sent) for bad ids or text."""
        Conversation(user_id, chat_id)
        text = check_text(text, self.memory_settings.max_message_bytes)
        async with self._chat(user_id, chat_id, pending=text) as memory:  # saved at once: a crash or a
            async for piece in self._turn(memory):  # failed call keeps it pending
                yield piece

    async def retry_stream(self, user_id: str, chat_id: str) -> AsyncIterator[str]:
        """Answer the pending text of a failed turn; else take back the last answer and its question (the
        newest two turns not taken back, even when a summary already covers them) and answer that question
        again. `InputError` when there is nothing to retry."""
        async with self._chat(user_id, chat_id) as memory:
            if memory.last_talk is None:
                last = [t.message for t in await memory.last_turns(2)]
                if len(last) < 2 or last[-1].role != "assistant" or last[-2].role != "user":
                    raise InputError("nothing to retry")
                question = last[-2].content
                await self._take_back(memory, 2)
                memory.set_last_talk(question)
                await memory.dumps()
            async for piece in self._turn(memory):
                yield piece

    async def _turn(self, memory: BrainMemory) -> AsyncIterator[str]:
        text = await self.refine_memory(memory)
        if text is None:
            return
        turn = Turn(memory=memory, text=text)
        try:
            with telemetry.span("brain.turn", {"brain.memory.mode": self.mode}) as span:
                async for piece in self._answer(turn):
                    turn.pieces.append(piece)
                    yield piece
                await self._commit(turn)
                if span is not None:
                    span.set_attribute("brain.turn.llm_calls", turn.calls)
                    span.set_attribute("gen_ai.usage.input_tokens", turn.usage.prompt_tokens)
                    span.set_attribute("gen_ai.usage.output_tokens", turn.usage.completion_tokens)
        except BaseException as exc:
            if isinstance(exc, Exception):
                telemetry.count_error("turn")
            memory.restore_last_talk()  # the store never lost it; it stays pending for a retry
            raise

    @property
    def window(self) -> Window:
        """The prompt's history window: every unsummarized turn must fit in it."""
        return Window.of(self.memory_settings, self.context_window)

    async def refine_memory(self, memory: BrainMemory) -> str | None:
        """Take the pending talk; first, when the unsummarized turns no longer fit the prompt's window, fold
        the oldest into the summary (the fact worker usually did it earlier): nothing falls out of view."""
        if memory.summary_due(self.window):
            await self._summarize(memory)
        return memory.pop_last_talk()

    async def _summarize(self, memory: BrainMemory) -> None:
        keep = self.window.share(self.memory_settings.keep_recent_share)
        try:
            await memory.summarize(self.summarizer, self.memory_settings.summary_max_words, keep_recent=keep)
        except BrainError as exc:  # the answer can still be given from the window; try again next turn
            _log.warning("summarizing a chat failed, will retry next turn: %s", exc)

    async def _answer(self, turn: Turn) -> AsyncIterator[str]:
        """The answer's text as it streams."""
        memory = turn.memory
        prompt = render_talk(
            persona=self.persona,
            text=turn.text,
            tokenizer=self.tokenizer,
            history_budget=int(self.context_window * self.memory_settings.prompt_history_share),
            knowledge=memory.get_knowledge(),
            summary=memory.historical_summary,
            history=memory.history,
            history_tokens=memory.history_tokens,
            facts=await self.relevant_facts(memory.user_id, turn.text),
        )
        async for piece in self._talk(turn, prompt):
            yield piece

    async def _talk(
        self, turn: Turn, prompt: list[ChatMessage], refit: Refit | None = None
    ) -> AsyncIterator[str]:
        """The talk action's answer for `turn`, as it streams (tool rounds go to `turn.trail`)."""
        async for event in self.talk_action.stream(self.llm, prompt, trail=turn.trail, refit=refit):
            if isinstance(event, TextDelta):
                yield event.text
                continue
            turn.spend(event)
            if not event.tool_calls and not turn.pieces and event.content:
                yield event.content  # a model that answered without streaming text

    async def relevant_facts(self, user_id: str | bytes, text: str) -> list[str]:
        """The user's current facts relevant to `text`, for the prompt (none when facts are off)."""
        facts = self.memory_settings.facts
        if not facts.enabled or self.runtime.tiers is None or not facts.prompt_facts:
            return []
        tiers, graph = self.runtime.tiers, self.memory_settings.graph
        found = await tiers.facts.search(user_id, text, limit=facts.prompt_facts)
        if graph.enabled and searchable(text):  # facts linked through the graph to what the best ones name
            links = await graph_links(tiers.graph, user_id, text, [f.id for f in found], graph)
            if links:
                found = await tiers.facts.search(user_id, text, limit=facts.prompt_facts, linked=links)
        return [f.text for f in found]

    async def _queue_facts(self, memory: BrainMemory) -> None:
        """Hand the chat's new turns to the fact workers (one XADD). A failure only delays them: the next
        turn's entry covers these turns too."""
        if not self.memory_settings.facts.enabled or self.runtime.tiers is None:
            return
        try:
            await self.runtime.tiers.fact_queue.push(memory.user_id, memory.chat_id, memory.turn_count)
        except StoreError as exc:
            _log.warning("queueing turns for fact extraction failed (the next turn retries): %s", exc)

    async def _commit(self, turn: Turn) -> None:
        """Store the question and the answer in one atomic write (clears the pending talk)."""
        turn.memory.add_usage(turn.calls, turn.usage)
        turn.memory.add_talk(Message(content=turn.text, sent_from="user"))
        turn.memory.add_answer(
            Message(content="".join(turn.pieces), sent_from=self.name, cause_by="TalkAction")
        )
        await turn.memory.dumps()
        await self._queue_facts(turn.memory)

    async def _take_back(self, memory: BrainMemory, n: int) -> list[Message]:
        """Take back the newest `n` turns of a loaded chat (the tiered mode also clears recall)."""
        return await memory.pop(n)

    async def _written(self, memory: BrainMemory, progress: Progress | None = None) -> None:
        """Called after turns were written outside a normal turn (the tiered mode indexes them)."""

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


Assistant._modes["brain"] = Assistant
