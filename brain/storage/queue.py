"""The queue of turns waiting for fact extraction (`FactQueue`): any number of workers, in this process or
elsewhere, share the work. An entry says "chat (user, chat) has turns up to `upto`"; a worker that dies
leaves its entries pending, and another one reclaims them.

A chat whose batch keeps getting a malformed reply is not retried for ever: each such failure is counted
(`tried`, a per-chat counter in the store, so the count survives a worker's restart and is shared by every
worker; failures to reach the model are not counted), and at `memory.facts.max_attempts` the chat's entries
are parked as a `DeadLetter` with the reason (`park`), until someone re-queues it (`requeue`)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, field_validator

from brain.errors import InputError
from brain.jsontext import without_surrogates
from brain.keys import raw_id

__all__ = ["REASON_CHARS", "DeadLetter", "FactQueue", "QueueEntry", "dead_letter", "entry_order"]

REASON_CHARS = 1_000
"""A dead letter's reason is kept to this many characters."""


class QueueEntry(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    user_id: str | bytes
    chat_id: str | bytes
    upto: int


class DeadLetter(BaseModel):
    """A chat's queued turns set aside after `attempts` malformed replies: nobody retries them until they
    are re-queued. `reason` says what came back (the last error, cut to `REASON_CHARS`, surrogate-free):
    it may quote the user's words, so it is shown only to the user's own scope and erased with the chat."""

    model_config = ConfigDict(frozen=True)

    id: str  # the id of the newest queue entry it replaced (`<ms>-<n>`)
    user_id: str | bytes
    chat_id: str | bytes
    upto: int  # the chat's turns up to this one were waiting
    reason: str
    attempts: int = Field(ge=1)
    at: float  # when it was parked (Unix time)

    @field_validator("reason")
    @classmethod
    def _bounded(cls, reason: str) -> str:
        return without_surrogates(reason[:REASON_CHARS])


def entry_order(entry_id: str) -> tuple[int, int]:
    """A queue entry's id, `<ms>-<n>`, as a sortable pair; `ValueError` for anything else. Pure."""
    ms, dash, seq = entry_id.partition("-")
    if not dash or not all(p.isascii() and p.isdigit() for p in (ms, seq)):
        raise ValueError(f"bad fact queue entry id {entry_id[:40]!r}")
    return int(ms), int(seq)


def dead_letter(entries: Sequence[QueueEntry], reason: str, attempts: int) -> DeadLetter:
    """The dead letter that replaces one chat's `entries` (parked now); `InputError` when there are none, or
    they name more than one chat, or an id is not an entry id. Pure but for the clock."""
    if not entries:
        raise InputError("park at least one queue entry")
    first = entries[0]
    chat = (raw_id(first.user_id, "user_id"), raw_id(first.chat_id, "chat_id"))
    if any((raw_id(e.user_id), raw_id(e.chat_id)) != chat for e in entries):
        raise InputError("the entries of a dead letter must all be one chat's")
    try:
        newest = max(entries, key=lambda e: entry_order(e.id))
    except ValueError as exc:
        raise InputError(str(exc)) from None
    return DeadLetter(
        id=newest.id,
        user_id=first.user_id,
        chat_id=first.chat_id,
        upto=max(e.upto for e in entries),
        reason=reason,
        attempts=attempts,
        at=time.time(),
    )


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
        """Drop every entry of `user_id` (of one chat with `chat_id`), read or not, and its dead letters and
        tries, for erasure; how many entries and dead letters. Not for hot paths."""
        ...

    async def tried(self, user_id: str | bytes, chat_id: str | bytes) -> int:
        """Count one more failed try of the chat's pending batch (a malformed reply); the tries so far.
        Under a held ticket of the user (`brain.storage.fence`) that an erasure has passed, `ErasedError`
        and nothing counted."""
        ...

    async def untried(self, user_id: str | bytes, chat_id: str | bytes) -> None:
        """Forget the chat's tries (its batch was applied)."""
        ...

    async def park(self, entries: Sequence[QueueEntry], reason: str, attempts: int) -> DeadLetter:
        """Set one chat's `entries` aside: acknowledge and drop them, record a `DeadLetter` (id: the newest
        entry's; `upto`: the highest) and forget the chat's tries, at once. `InputError` unless the entries
        are one chat's. Under a held ticket of the user that an erasure of the user or chat has passed,
        nothing of it stays and it raises `ErasedError` (the reason may hold the user's words)."""
        ...

    async def parked(self, limit: int = 100, user_id: str | bytes | None = None) -> list[DeadLetter]:
        """Dead letters (of `user_id` only, when given), oldest parked first, at most `limit`. A full read:
        for status and inspection, not hot paths."""
        ...

    async def dead(self) -> int:
        """How many dead letters there are (all users)."""
        ...

    async def requeue(self, ids: Sequence[str] | None = None) -> int:
        """Queue the dead letters `ids` (None: every one) again as one fresh entry each, their tries at zero,
        and remove them; how many were re-queued (unknown ids are skipped)."""
        ...

    async def pending(self) -> int:
        """Entries read but not acknowledged yet (all consumers)."""
        ...

    async def backlog(self) -> int:
        """Entries in the queue, read or not, not yet dropped."""
        ...
