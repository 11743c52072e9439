"""The queue of turns waiting for fact extraction (`FactQueue`): any number of workers, in this process or
elsewhere, share the work. An entry says "chat (user, chat) has turns up to `upto`"; a worker that dies
leaves its entries pending, and another one reclaims them."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

__all__ = ["FactQueue", "QueueEntry"]


class QueueEntry(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    user_id: str | bytes
    chat_id: str | bytes
    upto: int


@runtime_checkable
class FactQueue(Protocol):
    """Pushed on the reply path (one cheap write); read, reclaimed and acknowledged by workers. Every method
    raises `StoreError` when the store cannot answer."""

    async def push(self, user_id: str | bytes, chat_id: str | bytes, upto: int) -> None: ...

    async def read(self, consumer: str, count: int, block_ms: int | None) -> list[QueueEntry]:
        """Up to `count` (>= 1) entries no consumer has read yet, now `consumer`'s, oldest first (waiting up
        to `block_ms` for the first; 0: until one comes; None: do not wait). Ids come back as
        `brain.keys.readable_id` gives them (str when valid UTF-8)."""
        ...

    async def reclaim(self, consumer: str, min_idle_ms: int, count: int) -> list[QueueEntry]:
        """Entries read but left unacknowledged for at least `min_idle_ms`, now `consumer`'s."""
        ...

    async def done(self, ids: list[str]) -> int:
        """Acknowledge and drop entries (applied, or erased); how many were dropped."""
        ...

    async def drop(self, user_id: str | bytes, chat_id: str | bytes | None = None) -> int:
        """Drop every entry of `user_id` (of one chat with `chat_id`), read or not, for erasure; how many.
        Not for hot paths."""
        ...

    async def pending(self) -> int:
        """Entries read but not acknowledged yet (all consumers)."""
        ...

    async def backlog(self) -> int:
        """Entries in the queue, read or not, not yet dropped."""
        ...
