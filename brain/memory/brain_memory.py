"""`BrainMemory`: MetaGPT's brain memory (same names, same meaning), incremental and safe on any store.

State lives in this model; storage is an injected `MemoryStore`; LLM work is in `actions`. New turns are
kept as pending until `dumps()` writes them in one atomic call; `is_dirty` is cleared only then. Raw turns
are never destroyed: summarizing moves them out of the active window, the store keeps them.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, Self

from pydantic import BaseModel, ConfigDict, PrivateAttr

from brain.errors import InputError, LLMError, StoreError
from brain.keys import conversation_keys
from brain.llm.tokens import OFFLINE_ENCODING, Tokenizer
from brain.llm.usage import SummaryStats, Usage
from brain.memory.window import Window, older_than_recent
from brain.message import Message, speaker
from brain.settings import MemorySettings
from brain.storage.conversation import Conversation, MemoryStore, StoredState, Turn, WriteBatch
from brain.storage.fence import Ticket
from brain.storage.usage import ModelUsage

__all__ = ["BrainMemory", "Summarize"]

_ALL = 2**62  # "to the end" for paged reads
_SETTINGS = MemorySettings()  # frozen: shared by every memory not given its own


@dataclass(slots=True)
class _State:
    """What a `BrainMemory` keeps beside its fields: its store, settings and tokenizer, what `dumps` has not
    written yet, and each turn's sequence number and token count. One private attribute, not one each:
    pydantic makes every private attribute's default on every construction (~0.7 us apiece)."""

    store: MemoryStore | None = None
    settings: MemorySettings = _SETTINGS
    tokenizer: Tokenizer | None = None
    pending: list[tuple[Message, int]] = field(default_factory=list)
    pending_ids: set[str] = field(default_factory=set)
    pending_knowledge: list[Message] = field(default_factory=list)
    pending_calls: int = 0
    pending_usage: Usage | None = None
    pending_spent: tuple[ModelUsage, ...] = ()
    seqs: dict[str, int] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=dict)  # message id -> stored token count
    saved_talk: str | None = None
    in_flight: str | None = None
    answered: bool = False
    epoch: int = 0
    queued: bool = False


class Summarize(Protocol):
    """Condenses transcript lines into about `max_words` words (the LLM work is in `actions`)."""

    async def __call__(
        self, lines: Sequence[str], max_words: int, keep_language: bool
    ) -> tuple[str, SummaryStats]: ...


class BrainMemory(BaseModel):
    """One conversation's memory: the active window of turns, knowledge, and the rolling summary."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")  # no field silently dropped

    user_id: str | bytes = "default"
    chat_id: str | bytes = "default"
    history: list[Message] = []
    knowledge: list[Message] = []
    historical_summary: str = ""
    last_history_id: str = ""
    is_dirty: bool = False
    last_talk: str | None = None
    cacheable: bool = True
    summary_upto: int = 0
    window_tokens: int = 0
    turn_count: int = 0
    version: int = 0
    title: str = ""
    calls: int = 0  # LLM calls spent on this chat's answers (stored with the chat)
    usage: Usage = Usage(prompt_tokens=0, completion_tokens=0)

    _s: _State = PrivateAttr(default_factory=_State)
    last_summary_stats: SummaryStats | None = None

    @property
    def _state(self) -> _State:
        """`_s`, read from pydantic's store of private attributes directly: a read of `self._s` first fails
        the plain lookup (an AttributeError made, its message formatted, and caught), then asks pydantic."""
        return self.__pydantic_private__["_s"]  # type: ignore[no-any-return,index]

    def __copy__(self) -> Self:
        """A shallow copy (`model_copy`) with its own private state: its pending turns and counts change
        apart from this one's (the lists inside are shared, as a shallow copy shares them)."""
        copied = super().__copy__()
        copied._s = copy.copy(self._state)
        return copied

    # ------------------------------------------------------------------ loading and saving

    @classmethod
    async def loads(
        cls,
        store: MemoryStore,
        user_id: str | bytes,
        chat_id: str | bytes,
        *,
        settings: MemorySettings | None = None,
        tokenizer: Tokenizer | None = None,
        pending: str | None = None,
        refuse_archived: bool = False,
    ) -> BrainMemory:
        """The conversation's metadata, newest unsummarized turns and knowledge; never the whole past.
        With `pending`, the user's new text is saved as `last_talk` in the same call (a turn's start).
        `refuse_archived` as `ConversationStore.load`'s (passed only when set).

        A missing conversation gives an empty memory; a failed read raises `StoreError`, never an empty one.
        """
        settings = settings or _SETTINGS
        conv = Conversation(user_id=user_id, chat_id=chat_id)
        state: StoredState = await store.load(
            conv,
            window_turns=settings.window_max_turns,
            knowledge_items=settings.knowledge_max_items,
            pending=pending,
            **({"refuse_archived": True} if refuse_archived else {}),
        )
        meta = state.meta
        history: list[Message] = []
        seqs: dict[str, int] = {}
        tokens: dict[str, int] = {}
        for turn in state.window:  # one pass over the window (it is read again every turn)
            message = turn.message
            history.append(message)
            seqs[message.id] = turn.seq
            tokens[message.id] = turn.tokens
        memory = cls(
            user_id=user_id,
            chat_id=chat_id,
            history=history,
            knowledge=list(state.knowledge),
            historical_summary=meta.summary,
            last_history_id=state.window[-1].message.id if state.window else "",
            last_talk=meta.last_talk,
            summary_upto=meta.summary_upto,
            window_tokens=meta.window_tokens,
            turn_count=meta.turn_count,
            version=meta.version,
            title=meta.title,
            calls=meta.calls,
            usage=meta.usage,
        )
        memory._bind(store, settings, tokenizer)
        private = memory._state
        private.seqs, private.tokens = seqs, tokens
        private.saved_talk, private.epoch = meta.last_talk, state.epoch
        return memory

    @property
    def ticket(self) -> Ticket:
        """The erasure ticket of work that began with this memory's load (`brain.storage.fence`): hold it
        for what that work writes, so an erasure of the chat or the user meanwhile drops it."""
        return Ticket(self.user_id, self._state.epoch, self.chat_id)

    def _bind(self, store: MemoryStore, settings: MemorySettings, tokenizer: Tokenizer | None) -> None:
        state = self._state
        state.store, state.settings, state.tokenizer = store, settings, tokenizer

    @property
    def tokenizer(self) -> Tokenizer:
        state = self._state
        tokenizer = state.tokenizer
        if tokenizer is None:
            tokenizer = state.tokenizer = Tokenizer.for_model("", OFFLINE_ENCODING)
        return tokenizer

    def _bound(self) -> tuple[MemoryStore, Conversation]:
        store = self._state.store
        if store is None:
            raise StoreError(
                "this BrainMemory is not bound to a store: create it with BrainMemory.loads(...)"
            )
        return store, Conversation(user_id=self.user_id, chat_id=self.chat_id)

    def _talk_target(self) -> str | None:
        """What last_talk should be in the store: a popped talk stays until an answer commits."""
        state = self._state
        if state.in_flight is not None and not state.answered:
            return state.saved_talk
        return self.last_talk

    async def dumps(self, *, queue_facts: bool = False) -> bool:
        """Write pending turns, knowledge and last_talk in one atomic call. True when nothing is left
        unsaved; False when `cacheable` is off. `StoreError` leaves everything pending and dirty. With
        `queue_facts`, the store queues the chat for fact extraction in the same call where it can
        (`facts_queued`)."""
        state = self._state
        talk = self._talk_target()
        state.queued = False
        if not self.is_dirty and talk == state.saved_talk:
            return True
        if not self.cacheable:
            return False
        store, conv = self._bound()
        batch = WriteBatch(
            turns=tuple(state.pending),
            knowledge=tuple(state.pending_knowledge),
            set_last_talk=talk != state.saved_talk,
            last_talk=talk,
            calls=state.pending_calls,
            usage=state.pending_usage,
            spent=state.pending_spent,
            queue_facts=queue_facts,
        )
        result = await store.write(conv, batch)
        state.queued = result.queued
        state.pending_calls, state.pending_usage, state.pending_spent = 0, None, ()
        seqs = state.seqs
        for (message, _), seq in zip(state.pending, result.seqs, strict=True):
            seqs[message.id] = seq
        state.pending, state.pending_knowledge, state.pending_ids = [], [], set()
        state.saved_talk = talk
        if state.answered:
            state.in_flight, state.answered = None, False
        self.version, self.window_tokens, self.turn_count = (
            result.version,
            result.window_tokens,
            result.turn_count,
        )
        self.is_dirty = False
        return True

    @property
    def facts_queued(self) -> bool:
        """Whether the last `dumps` queued the chat for fact extraction with its write (up to
        `turn_count`): then nobody pushes it apart."""
        return self._state.queued

    # ------------------------------------------------------------------ MetaGPT's surface

    def add_talk(self, msg: Message) -> None:
        """Add the user's message to history."""
        self.add_history(_with_role(msg, "user"))

    def add_answer(self, msg: Message) -> None:
        """Add the assistant's answer; a popped last_talk is cleared when this commits."""
        self.add_history(_with_role(msg, "assistant"))
        self._state.answered = True

    def add_history(self, msg: Message) -> None:
        """Append a turn; a message id already present is ignored (appends are idempotent)."""
        state = self._state
        msg = _message(msg)
        size = len(msg.content.encode("utf-8", "surrogatepass"))
        limit = state.settings.max_message_bytes
        if size > limit:
            raise InputError(f"message {msg.id} is {size} bytes; memory.max_message_bytes is {limit}")
        pending_ids = state.pending_ids
        if msg.id in state.seqs or msg.id in pending_ids:
            return
        self.history.append(msg)
        tokens = state.tokens[msg.id] = self.tokenizer.count_turn(msg.content)
        state.pending.append((msg, tokens))
        pending_ids.add(msg.id)
        self.last_history_id = msg.id
        self.is_dirty = True

    def add_usage(self, calls: int, usage: Usage, spent: Sequence[ModelUsage] = ()) -> None:
        """LLM calls and tokens an answer cost (and, in `spent`, what its work cost per model: the chat's
        usage rows); stored with the chat by the next `dumps()`, in the same write."""
        state = self._state
        state.pending_usage = usage if state.pending_usage is None else state.pending_usage + usage
        state.pending_calls += calls
        state.pending_spent += tuple(spent)
        self.calls += calls
        self.usage += usage
        self.is_dirty = True

    def add_knowledge(self, msg: Message) -> None:
        msg = _message(msg)
        if any(
            k.id == msg.id for k in self.knowledge
        ):  # knowledge is small: at most knowledge_max_items loaded
            return
        self.knowledge.append(msg)
        self._state.pending_knowledge.append(msg)
        self.is_dirty = True

    def get_knowledge(self) -> str:
        return "\n".join(k.content for k in self.knowledge)

    def exists(self, text: str) -> bool:
        return any(m.content == text for m in reversed(self.history))

    def set_last_talk(self, text: str | None) -> None:
        """Set the pending user utterance; saved by the next `dumps()`."""
        self.last_talk = text
        state = self._state
        state.in_flight, state.answered = None, False

    def pop_last_talk(self) -> str | None:
        """Take the pending utterance. The store keeps it until an answer is committed, so a failed turn
        can be retried (`restore_last_talk()` in this process, or by loading again)."""
        text, self.last_talk = self.last_talk, None
        if text is not None:
            state = self._state
            state.in_flight, state.answered = text, False
        return text

    def restore_last_talk(self) -> None:
        state = self._state
        if state.in_flight is not None and self.last_talk is None:
            self.last_talk, state.in_flight = state.in_flight, None

    @property
    def history_tokens(self) -> list[int]:
        """Token cost of each turn in `history`, as stored (no re-counting)."""
        tokens = self._state.tokens
        counted: list[int] = []
        tokenizer: Tokenizer | None = None  # reached only for a turn stored without its count
        for message in self.history:
            n = tokens.get(message.id)
            if not n:
                tokenizer = tokenizer or self.tokenizer
                n = tokenizer.count_turn(message.content)
            counted.append(n)
        return counted

    @property
    def is_history_available(self) -> bool:
        return bool(self.history or self.historical_summary)

    @property
    def history_text(self) -> str:
        """Summary, then the window's turns with speaker labels, except the newest (the current talk)."""
        lines = (
            [f"Summary of earlier conversation: {self.historical_summary}"] if self.historical_summary else []
        )
        lines += [f"{speaker(m)}: {m.content}" for m in self.history[:-1]]
        return "\n".join(lines)

    @staticmethod
    def to_redis_key(prefix: str, user_id: str | bytes, chat_id: str | bytes) -> str:
        """The conversation's key base; ids are encoded so no id can break or collide with a key."""
        return conversation_keys(prefix, user_id, chat_id).base

    def summary_due(self, window: Window) -> bool:
        """Whether the unsummarized turns no longer fit `window` (see `brain.memory.window`)."""
        return window.exceeded_by(self.turn_count - self.summary_upto, self.window_tokens)

    async def read_history(self, start: int = 1, count: int = 100) -> list[Turn]:
        """Stored raw turns, paged by sequence number (1 is the first turn ever)."""
        store, conv = self._bound()
        return await store.read_turns(conv, start, count)

    async def last_turns(self, n: int) -> list[Turn]:
        """The newest `n` stored turns not taken back, oldest first: in the window, or already folded into
        the summary (a summary never deletes raw turns). "The last answer", "the last question" and "the last
        n turns" of `/retry`, `/rewrite` and `/pop` are these, whether or not a summary came in between."""
        if n <= 0:
            return []
        await self.dumps()
        if len(self.history) >= n:  # the window is the newest stored turns not taken back: no read
            tokens = self.history_tokens[-n:]
            return [
                Turn(seq=self._state.seqs[m.id], tokens=t, message=m)
                for m, t in zip(self.history[-n:], tokens, strict=True)
            ]
        found: list[Turn] = []
        end = self.turn_count
        while end > 0 and len(found) < n:
            start = max(end - max(n, 50) + 1, 1)
            page = await self.read_history(start, end - start + 1)
            found = [t for t in page if not t.hidden] + found
            end = start - 1
        return found[-n:]

    async def pop(self, n: int = 1) -> list[Message]:
        """Take back the newest `n` turns not taken back yet (`last_turns`): they stay stored, flagged
        hidden, out of the window and of every later prompt. A turn the summary already covers is taken back
        the same way; the summary, written before, is not rewritten."""
        taken = await self.last_turns(n)
        if taken:
            store, conv = self._bound()
            self.version = await store.hide_turns(conv, [t.seq for t in taken])
            unsummarized = [t for t in taken if t.seq > self.summary_upto]
            self.window_tokens = max(self.window_tokens - sum(t.tokens for t in unsummarized), 0)
            gone = {t.message.id for t in unsummarized}
            self.history = [m for m in self.history if m.id not in gone]
            self.last_history_id = self.history[-1].id if self.history else ""
        return [t.message for t in taken]

    async def set_history_summary(self, summary: str) -> None:
        """Make `summary` cover every stored turn up to the newest one this memory has written."""
        if not summary.strip():
            raise InputError("a summary must not be empty")
        await self.dumps()
        upto = max(self._state.seqs.values(), default=self.summary_upto)
        turns = await self.read_history(self.summary_upto + 1, upto - self.summary_upto)
        await self._commit_summary(summary, upto, sum(t.tokens for t in turns))

    async def _commit_summary(self, summary: str, upto: int, tokens: int) -> None:
        store, conv = self._bound()
        self.version = await store.commit_summary(
            conv, summary=summary, upto=upto, expected_upto=self.summary_upto, tokens=tokens
        )
        self.historical_summary, self.summary_upto = summary, upto
        self.window_tokens = max(self.window_tokens - tokens, 0)
        self.history = [m for m in self.history if self._state.seqs.get(m.id, upto + 1) > upto]

    async def summarize(
        self,
        summarizer: Summarize,
        max_words: int = 200,
        keep_language: bool = False,
        limit: int = -1,
        keep_recent: int | Window = 0,
    ) -> str:
        """Fold the unsummarized turns (and the old summary) into a new summary and commit it atomically.
        `summarizer` does the LLM work (`actions.Summarizer`).

        With `limit > 0` and fewer tokens than that, returns the text unchanged with no LLM call. An empty
        memory returns "". The newest turns that fit `keep_recent` (a `Window`, or tokens) stay unsummarized.
        Any failure (LLM, empty or over-long output, a concurrent summary) leaves memory and store as is.
        """
        await self.dumps()
        keep = keep_recent if isinstance(keep_recent, Window) else Window(turns=_ALL, tokens=keep_recent)
        turns = older_than_recent(await self.read_history(self.summary_upto + 1, _ALL), keep)
        if not turns:
            return self.historical_summary
        lines = [f"Summary so far: {self.historical_summary}"] if self.historical_summary else []
        lines += [f"{speaker(t.message)}: {t.message.content}" for t in turns if not t.hidden]
        if limit > 0 and self.tokenizer.count("\n".join(lines)) < limit:
            return "\n".join(lines)
        summary, self.last_summary_stats = await summarizer(lines, max_words, keep_language)
        if not summary.strip():
            raise LLMError("the summary came back empty; memory left unchanged")
        for t in turns:
            self._state.seqs.setdefault(t.message.id, t.seq)
        await self._commit_summary(summary, turns[-1].seq, sum(t.tokens for t in turns))
        return summary

    async def set_title(self, title: str) -> None:
        """Store the conversation's title (made by `actions.title`)."""
        if not title.strip():
            raise InputError("a title must not be empty")
        await self.dumps()
        store, conv = self._bound()
        await store.set_title(conv, title.strip())
        self.title = title.strip()

    @staticmethod
    def extract_info(input_string: str, pattern: str = r"\[([A-Z]+)\]:\s*(.+)") -> tuple[str | None, str]:
        """`("TAG", rest)` for text like `[TAG]: rest` (rest may span lines), else `(None, input_string)`."""
        match = re.match(pattern, input_string, re.DOTALL)
        return (match.group(1), match.group(2)) if match else (None, input_string)

    @staticmethod
    def split_texts(
        text: str, window_size: int, overlap: int = 0, tokenizer: Tokenizer | None = None
    ) -> list[str]:
        """`text` in windows of at most `window_size` tokens, each starting `overlap` tokens early."""
        return (tokenizer or Tokenizer.for_model("", OFFLINE_ENCODING)).split(text, window_size, overlap)


def _message(value: Any) -> Message:
    if not isinstance(value, Message):
        raise InputError(f"expected a brain Message, got {type(value).__name__}")
    return value


def _with_role(value: Any, role: str) -> Message:
    """The message with `role` (itself when it has it: messages are frozen)."""
    message = _message(value)
    return message if message.role == role else message.model_copy(update={"role": role})
