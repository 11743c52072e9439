"""`TurnEngine`: one object answering any number of users and chats at once.

It holds only what every call shares (the runtime, persona, skills, the talk action, the memory mode); each
call's state is a local `Turn` passed along. Turns of one chat in this process run one at a time (a lock
that exists only while the chat is busy); other processes may serve the same chat, since memory is loaded
per turn and appends are idempotent.

One LLM call per ordinary turn; summaries only when the budget says so. Input is checked before any write or
LLM call; a failed turn leaves memory as it was and the user's text pending (`retry_stream` answers it).
What a turn spends (calls and tokens, per model) is returned with it and added to the user's usage.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Coroutine
from contextlib import AbstractAsyncContextManager
from typing import Any

from actions.base import Persona
from actions.relate import context_of, points_back, relate_and_rewrite
from actions.summarizer import Summarizer
from actions.talk import Refit, TalkAction
from brain import telemetry
from brain.errors import ArchivedError, BrainError, ConfigError, InputError, TooLargeError
from brain.keys import check_id, raw_id
from brain.llm.protocol import LLM, ChatMessage, TextDelta
from brain.llm.tokens import Tokenizer
from brain.llm.usage import Spending, spending
from brain.memory.brain_memory import BrainMemory
from brain.memory.steps import exchange_turns
from brain.memory.tiers import Tiers
from brain.memory.usage import model_usage, record_spending
from brain.memory.window import Window
from brain.message import Message, check_text
from brain.runtime import Runtime
from brain.storage import fence
from brain.storage.conversation import Conversation
from brain.storage.facts import Fact
from roles.access import check_new_chat
from roles.after_commit import AfterCommit
from roles.backoff import TurnBackoff
from roles.locks import KeyedLocks
from roles.modes.brain import BrainMode
from roles.overflow import answer_recovering
from roles.prompt_facts import PromptFacts
from roles.skills import Skills
from roles.turn import Turn, answer_id

__all__ = ["TurnEngine"]

_PROMPT_HEAD = 1_024  # tokens kept for the persona, instructions and memory beside a message (at most)

_log = logging.getLogger("brain.assistant")
_NEWEST_EXCHANGE = 2 + 4 * 32
"""Turns read to find the newest exchange: its question, answer and the steps of many tool rounds."""


def _chat_key(user_id: str | bytes, chat_id: str | bytes) -> tuple[bytes, bytes]:
    """A chat as the engine's per-chat tables (locks, summary backoff) know it."""
    return raw_id(user_id, "user_id"), raw_id(chat_id, "chat_id")


class TurnEngine:
    """Turns for every user and chat of one runtime, in the memory `mode` (a strategy, `roles.modes`)."""

    def __init__(
        self, runtime: Runtime, mode: BrainMode, *, persona: Persona, skills: Skills | None = None
    ) -> None:
        mode.check(runtime)
        self.runtime, self.mode, self.persona = runtime, mode, persona
        self.memory_settings = runtime.settings.memory
        self.context_window = runtime.settings.llm.context_window
        self.skills = skills or Skills()
        self.talk_action = TalkAction(
            self.skills.specs,
            self.skills.invoke if self.skills else None,
            self.memory_settings.max_tool_steps,
        )
        self.summarizer = Summarizer.from_settings(
            runtime.memory_llm, runtime.tokenizer, self.memory_settings
        )
        self._locks = KeyedLocks()
        self.summary_backoff = TurnBackoff()
        self.after_commit = AfterCommit()
        self.prompt_facts = PromptFacts(runtime)

    @property
    def llm(self) -> LLM:
        return self.runtime.llm

    @property
    def tokenizer(self) -> Tokenizer:
        return self.runtime.tokenizer

    @property
    def speaker(self) -> str:
        return self.persona.name

    @property
    def window(self) -> Window:
        """The prompt's history window: every unsummarized turn must fit in it."""
        return Window.of(self.memory_settings, self.context_window)

    @property
    def tiers(self) -> Tiers:
        """The memory tiers (core blocks, archival, recall, facts, graph): `ConfigError` without a backend."""
        if self.runtime.tiers is None:
            raise ConfigError("memory beyond chats (facts, core blocks, archival, recall) needs a backend")
        return self.runtime.tiers

    @property
    def busy_chats(self) -> int:
        """Chats with a call running or waiting in this process (the lock table's size)."""
        return len(self._locks)

    # ------------------------------------------------------------------ memory

    async def load_memory(
        self,
        user_id: str | bytes,
        chat_id: str | bytes,
        *,
        pending: str | None = None,
        kind: type[BrainMemory] = BrainMemory,
    ) -> BrainMemory:
        """(user_id, chat_id)'s memory (a `kind`), loaded fresh from the store; the caller keeps it.
        `pending` is saved as the text waiting for an answer in the same call. A user in the cold archive
        is brought back first (`present`): the backend's own store finds it in the load itself (refused
        before anything is written, then brought back and loaded again), another store is not asked."""
        if self.own_store and self.tiers.cold is not None:
            with contextlib.suppress(ArchivedError):
                return await self._loads(kind, user_id, chat_id, pending, refuse_archived=True)
        await self.present(user_id)
        return await self._loads(kind, user_id, chat_id, pending)

    def _loads(
        self,
        kind: type[BrainMemory],
        user_id: str | bytes,
        chat_id: str | bytes,
        pending: str | None,
        refuse_archived: bool = False,
    ) -> Coroutine[Any, Any, BrainMemory]:
        """`kind.loads` of the chat with this engine's store, settings and tokenizer. A plain function
        handing back the call, not a partial or a coroutine of its own: nothing more is held while the
        load waits."""
        return kind.loads(
            self.runtime.store,
            user_id,
            chat_id,
            settings=self.memory_settings,
            tokenizer=self.tokenizer,
            pending=pending,
            refuse_archived=refuse_archived,
        )

    async def present(self, user_id: str | bytes) -> None:
        """The user's memory brought back from the cold archive first, when it is there (`Tiers.present`)."""
        if self.runtime.tiers is not None:
            await self.runtime.tiers.present(user_id)

    def lock(self, user_id: str | bytes, chat_id: str | bytes) -> AbstractAsyncContextManager[None]:
        """The chat's lock: calls on one chat in this process run one at a time."""
        return self._locks.hold(_chat_key(user_id, chat_id))

    @contextlib.asynccontextmanager
    async def chat_memory(
        self, user_id: str | bytes, chat_id: str | bytes, pending: str | None = None
    ) -> AsyncIterator[BrainMemory]:
        """Hold the chat's lock and load its memory (saving `pending` as the text to answer)."""
        async with self.lock(user_id, chat_id):
            backend, ticket = self.runtime.backend, None
            if backend is not None and backend.conversations is not self.runtime.store:
                ticket = await backend.erasure.ticket(user_id, chat_id)
            memory = await self.load_memory(user_id, chat_id, pending=pending)
            # writes of work begun before an erasure are dropped (a store of the backend's own gives the
            # ticket with the load; a conversation store apart from it, before)
            with fence.holding(ticket or memory.ticket):
                yield memory

    # ------------------------------------------------------------------ turns

    async def chat(self, user_id: str, chat_id: str, text: str, *, message_id: str | None = None) -> str:
        """One turn for (user_id, chat_id); the whole answer."""
        pieces: list[str] = []
        async for piece in self.chat_stream(user_id, chat_id, text, message_id=message_id):
            pieces.append(piece)  # not a comprehension: that would be a function and a coroutine a turn
        return "".join(pieces)

    async def chat_stream(
        self, user_id: str, chat_id: str, text: str, *, message_id: str | None = None
    ) -> AsyncGenerator[str, None]:
        """One turn, streamed. `InputError` (nothing stored, nothing sent) for bad ids or text.

        `message_id` (the caller's idempotency key) becomes the question's id: a call retried with the same
        one (after a timeout, a lost connection) finds the answer stored the first time and gives it again,
        without a model call, and never stores the turn twice."""
        check_new_chat(user_id, chat_id)
        Conversation(user_id, chat_id)
        text = check_text(text, self.memory_settings.max_message_bytes)
        if message_id is not None:
            check_id(message_id, "message_id")
        self.check_fits(text)
        if message_id is not None:
            stored = await self.answered(user_id, chat_id, message_id)
            if stored is not None:
                yield stored
                return
        async with self.chat_memory(user_id, chat_id, pending=text) as memory:  # saved at once: a crash or
            async for piece in self._turn(memory, message_id):  # a failed call keeps it pending
                yield piece

    async def answered(self, user_id: str | bytes, chat_id: str | bytes, message_id: str) -> str | None:
        """The stored answer to the question with `message_id`, or None when none was stored."""
        conv, store = Conversation(user_id, chat_id), self.runtime.store
        await self.present(user_id)
        seq = await store.seq_of(conv, answer_id(message_id))
        found = await store.read_turns(conv, seq, 1) if seq is not None else []
        if not found:
            return None
        return found[0].message.content or ""

    def fits(self, text: str) -> bool:
        """Whether a message of `text` can be answered (`check_fits` would not refuse it)."""
        try:
            self.check_fits(text)
        except TooLargeError:
            return False
        return True

    def check_fits(self, text: str) -> None:
        """`TooLargeError` (nothing stored, nothing sent) for a message that cannot fit the model's context
        window with the answer's room and the prompt's own head (persona, instructions, memory) beside it."""
        # the answer's room and the prompt's head, but never more than half the window (small windows)
        reserve = min(self.memory_settings.reply_tokens + _PROMPT_HEAD, self.context_window // 2)
        room = self.context_window - reserve
        if len(text) * 4 <= room:  # a token is at least one UTF-8 byte: most texts need no count
            return
        tokens = self.tokenizer.count(text)
        if tokens > room:
            raise TooLargeError(
                f"the message is {tokens} tokens; the model's context window of {self.context_window} leaves "
                f"room for {max(room, 0)} beside the answer and the prompt: shorten it, or load it into "
                "archival memory (brain memory load)"
            )

    async def retry_stream(self, user_id: str, chat_id: str) -> AsyncIterator[str]:
        """Answer the pending text of a failed turn; else take back the last exchange (its question, the
        steps kept with it and its answer: the newest turns not taken back, even when a summary already
        covers them) and answer that question again. `InputError` when there is nothing to retry."""
        async with self.chat_memory(user_id, chat_id) as memory:
            if memory.last_talk is None:
                newest = await memory.last_turns(_NEWEST_EXCHANGE)
                count, _ = exchange_turns(newest, 1)  # the question, its kept steps, the answer
                last = [t.message for t in newest[len(newest) - count :]]
                if len(last) < 2 or last[-1].role != "assistant" or last[0].role != "user":
                    raise InputError("nothing to retry")
                question = last[0].content
                await self.mode.take_back(self, memory, count)
                memory.set_last_talk(question)
                await memory.dumps()
            async for piece in self._turn(memory):
                yield piece

    async def _turn(self, memory: BrainMemory, message_id: str | None = None) -> AsyncIterator[str]:
        # Every call made for the turn (summaries, tools, the answer) is stored with the turn itself;
        # calls a turn makes after its write, or a failed turn's, cost a write of their own.
        with spending() as spent:
            turn = await self.refine(memory)
            if turn is None:
                await self.record_usage(memory.user_id, memory.chat_id, spent)
                return
            turn.message_id = message_id
            async for piece in self.answer_turn(turn, spent):
                yield piece

    async def refine(self, memory: BrainMemory) -> Turn | None:
        """refine_memory: the mode takes the pending talk (folding the summary first when due) and a
        follow-up is made self-contained (`resolve`); the turn to answer, or None when nothing is pending."""
        text = await self.mode.refine(self, memory)
        if text is None:
            return None
        return Turn(memory=memory, text=text, resolved=await self.resolve(memory, text))

    async def answer_turn(self, turn: Turn, spent: Spending) -> AsyncIterator[str]:
        """Answer a refined turn (its text already taken from the pending talk) and commit it; on failure
        the text stays pending. What it spends goes to `spent`."""
        memory = turn.memory
        try:
            with telemetry.span("brain.turn", {"brain.memory.mode": self.mode.name}) as span:
                async for piece in answer_recovering(self, self.mode, self.summarizer, turn):
                    turn.pieces.append(piece)
                    yield piece
                await self._commit(turn, spent)
                if span is not None:
                    span.set_attribute("brain.turn.llm_calls", turn.calls)
                    span.set_attribute("gen_ai.usage.input_tokens", turn.usage.prompt_tokens)
                    span.set_attribute("gen_ai.usage.output_tokens", turn.usage.completion_tokens)
        except BaseException as exc:
            if isinstance(exc, Exception):
                telemetry.count_error("turn")
            memory.restore_last_talk()  # the store never lost it; it stays pending for a retry
            await self.record_usage(memory.user_id, memory.chat_id, spent)  # failed calls cost too
            raise

    async def resolve(self, memory: BrainMemory, text: str) -> str | None:
        """`text` made self-contained when it may point back at the conversation (MetaGPT's is_related and
        rewrite, in one memory-model call; none when the lexical check rules it out or the setting or mode
        turns it off). None when unrelated or already self-contained; a failed call is logged and the turn
        goes on with the text as written."""
        if not (self.memory_settings.rewrite_followups and self.mode.resolves):
            return None
        if not (memory.history or memory.historical_summary) or not points_back(text):
            return None
        context = context_of(memory.historical_summary, memory.history)
        try:
            rewritten = await relate_and_rewrite(self.runtime.memory_llm, text, context)
        except BrainError as exc:
            _log.warning("rewriting a follow-up failed, answering it as written: %s", exc)
            return None
        return rewritten if rewritten.strip() != text.strip() else None

    async def summarize(self, memory: BrainMemory, *, forced: bool = False) -> None:
        """Fold the oldest unsummarized turns into the summary, keeping `keep_recent_share` of the window; a
        failure is logged and the answer is given from the window. After failures in a row the chat waits
        more turns before the next try (`summary_backoff`), unless `forced` (a prompt that overflowed)."""
        key = _chat_key(memory.user_id, memory.chat_id)
        if not forced and self.summary_backoff.waiting(key, memory.turn_count):
            return
        keep = self.window.share(self.memory_settings.keep_recent_share)
        try:
            await memory.summarize(
                self.summarizer, self.memory_settings.summary_max_words, keep_language=True, keep_recent=keep
            )
        except BrainError as exc:
            wait = self.summary_backoff.failed(key, memory.turn_count)
            failures = self.summary_backoff.failures(key)
            message = "summarizing a chat failed (%d in a row); tried again in %d exchange(s): %s"
            _log.warning(message, failures, wait, exc)
        else:
            self.summary_backoff.succeeded(key)

    async def talk(
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

    async def relevant_facts(
        self, user_id: str | bytes, text: str, chat_id: str | bytes | None = None
    ) -> list[str]:
        """The texts of the user's current facts relevant to `text` (`recalled_facts`)."""
        return [f.text for f in await self.recalled_facts(user_id, text, chat_id)]

    async def recalled_facts(
        self, user_id: str | bytes, text: str, chat_id: str | bytes | None = None
    ) -> list[Fact]:
        """The user's current facts relevant to `text`, for the prompt of a turn in `chat_id` (only those
        the chat's agent may see: `roles.access.agent_sees`); none when facts are off. While the user's
        facts do not change, the same question in the same chat is answered from a cache
        (`roles.prompt_facts`)."""
        return await self.prompt_facts.recall(user_id, text, chat_id)

    async def queue_facts(self, memory: BrainMemory) -> None:
        """Hand the chat's new turns to the fact workers (one write; run it through `after_commit`: a
        failure only delays them, and the next turn's entry covers these turns too). Nothing when the
        turn's write queued them already (`BrainMemory.facts_queued`)."""
        if not self.memory_settings.facts.enabled or self.runtime.tiers is None or memory.facts_queued:
            return
        await self.runtime.tiers.fact_queue.push(memory.user_id, memory.chat_id, memory.turn_count)

    @property
    def own_store(self) -> bool:
        """Whether the chats' store is the backend's own, beside the fact queue and cold archive its tiers
        use: a turn's write may queue the chat for facts (`WriteBatch.queue_facts`) and its load may find
        the user in the cold archive itself (`refuse_archived`), with no round trip of their own."""
        backend, tiers = self.runtime.backend, self.runtime.tiers
        return (
            backend is not None
            and tiers is not None
            and backend.conversations is self.runtime.store
            and tiers.fact_queue is backend.queue
        )

    async def record_usage(self, user_id: str | bytes, chat_id: str | bytes, spent: Spending) -> None:
        """Add what was spent to the user's usage in the backend (per chat and model)."""
        usage = self.runtime.backend.usage if self.runtime.backend is not None else None
        await record_spending(usage, user_id, chat_id, spent)

    async def _commit(self, turn: Turn, spent: Spending) -> None:
        """Store the question, the answer and what the turn spent in one atomic write (clears the pending
        talk); then what follows the write (the fact queue, the mode's own work), whose calls are counted
        on their own."""
        memory = turn.memory
        memory.add_usage(turn.calls, turn.usage, model_usage(spent))
        ids = {} if turn.message_id is None else {"id": turn.message_id}
        memory.add_talk(Message(content=turn.text, sent_from="user", **ids))
        for step in self.mode.steps(self, turn):  # what the agent did between question and answer
            memory.add_history(step)
        turn.answer = Message(
            role="assistant",
            content="".join(turn.pieces),
            sent_from=self.speaker,
            cause_by="TalkAction",
            **({} if turn.message_id is None else {"id": answer_id(turn.message_id)}),
        )
        memory.add_answer(turn.answer)
        await memory.dumps(queue_facts=self.own_store and self.memory_settings.facts.enabled)
        spent.clear()  # written with the turn: a failure after this point does not count it again
        # committed: what follows never fails the turn (its steps are tried again in the background)
        # partials, not lambdas: a lambda would make this call's locals cells, held by every turn in flight
        after = self.after_commit
        await after.run("queueing for facts", functools.partial(self.queue_facts, memory))
        await after.run("the memory mode's step", functools.partial(self.mode.committed, self, turn))
        usage = functools.partial(self.record_usage, memory.user_id, memory.chat_id, spent)
        await after.run("recording usage", usage)
