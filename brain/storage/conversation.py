"""Conversation memory: the `ConversationStore` and `SummaryStore` protocols and their records.

A store keeps, per conversation: every turn ever appended (never trimmed), knowledge, and a metadata
record (summary and how far it reaches, counters, last_talk, title). Appends are idempotent by message id.
A retention policy (`brain.memory.retention`) may drop the text of the oldest turns once the summary and
the facts cover them: each keeps its place, id, role, time and token count, flagged `dropped`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from brain.keys import encode_id
from brain.llm.usage import Usage
from brain.message import Message
from brain.storage.usage import ModelUsage

__all__ = [
    "Conversation",
    "ConversationMeta",
    "ConversationStore",
    "MemoryStore",
    "StoredState",
    "SummaryStore",
    "Turn",
    "WriteBatch",
    "WriteResult",
    "without_text",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


@dataclass(frozen=True)
class Conversation:
    """(user_id, chat_id); both are validated here, so a bad id fails (`InputError`) before any I/O."""

    user_id: str | bytes
    chat_id: str | bytes

    def __post_init__(self) -> None:
        encode_id(self.user_id, "user_id")
        encode_id(self.chat_id, "chat_id")

    @property
    def label(self) -> str:
        return f"{self.user_id!r}/{self.chat_id!r}"


@dataclass(frozen=True, slots=True)
class Turn:
    """A stored turn: its 1-based sequence number in the conversation, token count and message."""

    seq: int
    tokens: int
    message: Message
    hidden: bool = False
    dropped: bool = False  # its text was dropped by retention: `message` keeps id, role and time only


class ConversationMeta(BaseModel):
    model_config = _FROZEN

    summary: str = ""
    summary_upto: int = 0  # turns with seq <= summary_upto are covered by `summary`
    turn_count: int = 0
    window_tokens: int = 0  # tokens of the turns after summary_upto
    version: int = 0  # bumped by every write
    last_talk: str | None = None
    title: str = ""
    usage: Usage = Usage(prompt_tokens=0, completion_tokens=0)  # LLM tokens of the chat's answers so far
    calls: int = 0  # LLM calls of the chat's answers so far
    dropped_upto: int = 0  # turns with seq <= dropped_upto lost their text to retention (<= summary_upto)


class StoredState(BaseModel):
    """What `load` returns: metadata, the newest unsummarized turns, the newest knowledge."""

    model_config = _FROZEN

    exists: bool
    meta: ConversationMeta = ConversationMeta()
    window: tuple[Turn, ...] = ()  # hidden turns left out
    knowledge: tuple[Message, ...] = ()
    epoch: int = 0  # the user's erasure count when loaded: the ticket of work that begins with this load


class WriteBatch(BaseModel):
    """One atomic write: new turns (with token counts), knowledge, and optionally last_talk."""

    model_config = _FROZEN

    turns: tuple[tuple[Message, int], ...] = ()
    knowledge: tuple[Message, ...] = ()
    set_last_talk: bool = False
    last_talk: str | None = None
    calls: int = 0  # LLM calls and tokens spent on these turns, added to the chat's usage
    usage: Usage | None = None
    spent: tuple[ModelUsage, ...] = ()  # the same per model, added to the chat's `UsageStore` rows
    # then the chat queued for fact extraction up to its turn count, in the same call where the store can
    # (the same backend's `FactQueue`; `WriteResult.queued` says whether it did: if not, the caller pushes)
    queue_facts: bool = False


class WriteResult(BaseModel):
    model_config = _FROZEN

    version: int
    seqs: tuple[int, ...]  # one per batch turn: where it is stored (an earlier seq if it already was)
    added: int = Field(description="turns and knowledge records that were new")
    window_tokens: int = 0  # tokens of the unsummarized turns after this write
    turn_count: int = 0
    queued: bool = False  # the batch's `queue_facts` was done with the write


def without_text(message: Message) -> Message:
    """What a turn whose text retention dropped keeps of its message: id, role, sender, cause and time,
    with empty content. Pure."""
    kept = message.model_dump(include={"id", "role", "sent_from", "cause_by", "created_at"})
    return Message.model_validate({**kept, "content": ""})


@runtime_checkable
class SummaryStore(Protocol):
    """A conversation's rolling summary and title (kept with its metadata). `StoreError` when the store
    cannot answer."""

    async def commit_summary(
        self, conv: Conversation, *, summary: str, upto: int, expected_upto: int, tokens: int
    ) -> int:
        """Set the summary to cover turns <= `upto` if it still covers exactly `expected_upto`;
        subtract `tokens` from the window count. Returns the new version; `ConflictError` otherwise."""
        ...

    async def set_title(self, conv: Conversation, title: str) -> None: ...


@runtime_checkable
class ConversationStore(SummaryStore, Protocol):
    """Storage of conversations. Every method raises `StoreError` when the store cannot answer."""

    async def load(
        self,
        conv: Conversation,
        *,
        window_turns: int,
        knowledge_items: int,
        pending: str | None = None,
        refuse_archived: bool = False,
    ) -> StoredState:
        """Metadata, the newest `window_turns` unsummarized turns, the newest knowledge, and the user's
        erasure count (`epoch`, read no later than anything that call wrote). With `pending`, first save it
        as `last_talk` in the same atomic call (a turn's start: one round trip); `ErasedError` when the user
        was erased while that call began (nothing kept). With `refuse_archived`, `ArchivedError` (nothing
        written) when the user's memory is in the backend's cold archive, checked in the same call where
        the store can (a store without a cold archive ignores it)."""
        ...

    async def write(self, conv: Conversation, batch: WriteBatch) -> WriteResult:
        """Append the batch atomically (turns idempotent by id). Its `spent` joins the chat's usage rows,
        where the same backend's `UsageStore` reads them, in the same atomic write. Like every write of a
        user's memory, `ErasedError` (nothing written) under a ticket (`brain.storage.fence`) that an
        erasure of the user or the chat made stale."""
        ...

    async def read_turns(self, conv: Conversation, start: int, count: int) -> list[Turn]:
        """Turns with seq in [start, start + count), oldest first."""
        ...

    async def turns_at(self, conv: Conversation, seqs: Sequence[int]) -> list[Turn]:
        """The turns with these seqs, in the order given; a seq with no turn is left out (one round trip:
        what the search index reads its hits' text from)."""
        ...

    async def seq_of(self, conv: Conversation, message_id: str) -> int | None:
        """Where the turn with `message_id` is stored (its seq), or None when no turn has that id (what
        makes a retried call with the same message id find the turn it already stored)."""
        ...

    async def hide_turns(self, conv: Conversation, seqs: Sequence[int]) -> int:
        """Take turns back (they stay stored, flagged hidden, out of the window). Returns the version."""
        ...

    async def drop_text(self, conv: Conversation, upto: int) -> int:
        """Drop the raw text of turns [1, `upto`], atomically: each keeps its seq, id, role, sender, cause,
        time, token count and hidden flag, its content emptied and its metadata gone, flagged `dropped`;
        the ids hash and window are untouched. Idempotent: returns how many turns lost their text now (0
        on a repeat). `ConflictError` when the chat does not exist or the summary does not reach `upto`."""
        ...

    async def read_knowledge(self, conv: Conversation, start: int, count: int) -> list[Message]:
        """Knowledge records [start, start + count), 1-based, oldest first."""
        ...

    async def delete(self, conv: Conversation) -> bool:
        """Delete everything stored for the conversation; whether there was anything."""
        ...

    async def list_chats(self, user_id: str | bytes) -> list[str | bytes]:
        """The chat ids of every stored conversation of `user_id` (str when valid UTF-8, else bytes)."""
        ...


MemoryStore = ConversationStore
"""The name the conversation store had before every memory kind had a protocol of its own."""
