"""Block storage: MemGPT-style core memory blocks per scope (`CoreBlockStore`), and one session's block
memory, the budgeted blocks' history (`BlockSessionStore`).

Core blocks: every edit checks the block's limit atomically, so concurrent edits of a shared block are
serialized and none can push a block past its limit. A scope is whoever owns the blocks (a user, an agent,
a team sharing a block; `brain.keys`).

A block session keeps a FIFO of chat history (`active`), the messages flushed out of it in order
(`archived`, never deleted by a flush) and a state of JSON fields (system messages, each block's state).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from brain.errors import InputError
from brain.llm.protocol import ChatMessage

__all__ = ["Block", "BlockLimitError", "BlockSessionStore", "CoreBlockStore", "Record"]


class Block(BaseModel):
    """A core memory block."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    label: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")
    value: str = ""
    limit: int = Field(2_000, ge=1, le=100_000)
    description: str = ""
    read_only: bool = False


class BlockLimitError(InputError):
    """An edit would push a block past its limit; the block is unchanged."""


@runtime_checkable
class CoreBlockStore(Protocol):
    """Core memory blocks per scope. Limits count characters (code points). Edits of a missing block,
    a read-only block, or text to replace that is not in the block are `InputError`s; an edit past the
    limit is a `BlockLimitError` saying how much room is left; nothing changes then. `StoreError` when the
    store cannot answer."""

    async def create(self, scope: str | bytes, block: Block, *, replace: bool = False) -> Block:
        """Store `block` (its value within its limit); an `InputError` when the label exists, unless
        `replace` (which overwrites any block, read-only ones included)."""
        ...

    async def set(self, scope: str | bytes, label: str, value: str) -> Block: ...

    async def append(self, scope: str | bytes, label: str, text: str) -> Block:
        """The value, a newline and `text` (just `text` for an empty block)."""
        ...

    async def replace(self, scope: str | bytes, label: str, old: str, new: str) -> Block:
        """The first occurrence of `old` (non-empty, matched exactly) replaced by `new`."""
        ...

    async def list(self, scope: str | bytes) -> list[Block]:
        """Every block of the scope, by label."""
        ...

    async def delete(self, scope: str | bytes, label: str) -> bool: ...

    async def drop(self, scope: str | bytes) -> int:
        """Delete every block of `scope`; how many there were."""
        ...


class Record(BaseModel):
    """One message of a block session's history with its token cost (and any reasoning, counted but not
    sent)."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    message: ChatMessage
    tokens: int
    reasoning: str = ""


@runtime_checkable
class BlockSessionStore(Protocol):
    """One session's block memory (cheap to build, per session). `StoreError` when the store cannot
    answer."""

    vectors_base: str
    """The namespace of the index of the session's flushed messages (the vector block's), among the
    user's names (`brain.keys.user_patterns`), so that erasing the user finds it."""

    async def append(self, records: Sequence[Record]) -> None:
        """Add records at the FIFO's end."""
        ...

    async def active(self) -> tuple[list[Record], list[bytes]]:
        """The FIFO's records, oldest first, and their stored form (what `flush` compares against)."""
        ...

    async def flush(self, head: bytes, count: int) -> int | None:
        """Atomically move the oldest `count` (>= 0) records to the archive if the FIFO still starts with
        `head`; the archive's new length, or None when another writer flushed first."""
        ...

    async def archived(self, start: int, stop: int = -1) -> list[Record]:
        """Archived records from `start` to `stop` inclusive (-1: the last), oldest first."""
        ...

    async def archived_count(self) -> int: ...

    async def get_state(self, field: str) -> Any:
        """A state field's JSON value; None when unset."""
        ...

    async def set_state(self, field: str, value: Any) -> None: ...

    async def claim(self, field: str, expected: int, new: int) -> bool:
        """Atomically move a counter field from `expected` (unset counts as 0) to `new`; False when it
        held something else."""
        ...

    async def drop_tail(self, exchanges: int) -> int:
        """Atomically remove the newest `exchanges` (>= 1) exchanges from the FIFO: back to and including the
        `exchanges`-th user message from the end (to the oldest user message when there are fewer; nothing
        without one); how many records went."""
        ...

    async def replace_answer(self, record: Record) -> bool:
        """Atomically put `record` in place of the FIFO's newest record if that is an assistant message;
        False otherwise."""
        ...

    async def drop(self) -> int:
        """Delete the session's history, archive and state; how many of the three existed."""
        ...
