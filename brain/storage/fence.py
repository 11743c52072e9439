"""Erasure fences: work for a user holds a `Ticket` (the user's erasure count when it began) and every write
it makes is dropped, atomically inside the store, when the user or the chat was erased since.

An erasure first bumps the user's count, then deletes; a write carrying an older ticket finds the bump
(`ErasedError`, nothing written), so work in flight cannot write erased memory back, whichever finishes
first. The ticket of the work running now is held in a context variable (`holding`): tasks started inside
inherit it, so a turn's background work carries the turn's ticket without passing it along.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from brain.keys import raw_id, scope_field

__all__ = ["ErasureStore", "Ticket", "applying", "current", "erased_fields", "holding"]


@dataclass(frozen=True, slots=True)
class Ticket:
    """Work for `user_id` (in `chat_id`, when it is a chat's) that began when the user's erasure count was
    `epoch`."""

    user_id: str | bytes
    epoch: int
    chat_id: str | bytes | None = None
    fields: tuple[str, ...] = field(init=False, compare=False, repr=False)
    """The erasure record's fields whose later bump drops this work's writes."""

    def __post_init__(self) -> None:
        fields = ("*",) if self.chat_id is None else ("*", scope_field(self.chat_id))
        object.__setattr__(self, "fields", fields)

    def covers(self, user_id: str | bytes) -> bool:
        """Whether the ticket is `user_id`'s."""
        return self.user_id == user_id or raw_id(self.user_id) == raw_id(user_id)


_TICKET: contextvars.ContextVar[Ticket | None] = contextvars.ContextVar("brain_ticket", default=None)


def current() -> Ticket | None:
    """The ticket of the work running in this context, if any."""
    return _TICKET.get()


def applying(user_id: str | bytes | None) -> Ticket | None:
    """The held ticket a write for `user_id` is checked against (any write's, with None: a store that
    does not know whose write it is); None when there is none or it is another user's."""
    held = _TICKET.get()
    if held is None or (user_id is not None and not held.covers(user_id)):
        return None
    return held


def erased_fields(chat_ids: Sequence[str | bytes] | None) -> list[str]:
    """The erasure record's fields an erasure of `chat_ids` (None: the whole user) sets. Pure."""
    return ["*"] if chat_ids is None else [scope_field(c) for c in chat_ids]


def holding(ticket: Ticket | None) -> contextlib.AbstractContextManager[None]:
    """Hold `ticket` for the writes made inside (and in tasks started inside). Restores what was held
    before by value, not by token, so it is safe in an async generator resumed by another task."""
    return _Holding(ticket)


class _Holding:
    """`holding`'s context: one small object a turn, not a generator and its context manager."""

    __slots__ = ("_before", "_ticket")

    def __init__(self, ticket: Ticket | None) -> None:
        self._ticket: Ticket | None = ticket
        self._before: Ticket | None = None

    def __enter__(self) -> None:
        self._before = _TICKET.get()
        _TICKET.set(self._ticket)

    def __exit__(self, *exc: object) -> None:
        _TICKET.set(self._before)


@runtime_checkable
class ErasureStore(Protocol):
    """Each user's erasure record. Every method raises `StoreError` when the store cannot answer."""

    async def ticket(self, user_id: str | bytes, chat_id: str | bytes | None = None) -> Ticket:
        """A ticket for work beginning now."""
        ...

    async def begin(self, user_id: str | bytes, chat_ids: Sequence[str | bytes] | None = None) -> int:
        """Record an erasure before deleting anything: of the whole user (None), or of `chat_ids`. From
        now on every write carrying an earlier ticket for what is erased is dropped. Returns the new
        count."""
        ...

    async def fence(
        self, user_id: str | bytes, bases: Sequence[str], chat_ids: Sequence[str | bytes] | None, epoch: int
    ) -> int:
        """Where scripts cannot read the record itself (Cluster), copy the erasure `epoch` into each
        namespace of `bases` (expiring after the backend's fence lifetime); how many were written."""
        ...
