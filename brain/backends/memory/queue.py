"""`MemoryFactQueue`: the fact queue in memory, with the Redis stream's semantics (one consumer group): ids
`<ms>-<n>` in push order, new entries delivered once, pending ones reclaimed when idle, `done` acknowledges
and deletes. Not a user's data in the keyspace: like the Redis stream, it is one per deployment."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from brain.errors import InputError
from brain.keys import raw_id, readable_id
from brain.storage.queue import QueueEntry

__all__ = ["MemoryFactQueue"]

_Id = tuple[int, int]


@dataclass(frozen=True)
class _Entry:
    user: bytes
    chat: bytes
    upto: int


@dataclass(frozen=True)
class _Delivery:
    consumer: str
    at_ms: float


class MemoryFactQueue:
    """A `FactQueue` in this process: entries and the group's pending list, for one event loop."""

    def __init__(self) -> None:
        self._entries: dict[_Id, _Entry] = {}  # in id order: ids only grow
        self._last: _Id = (0, 0)  # the newest id handed out
        self._delivered: _Id = (0, 0)  # the group's last delivered id
        self._pending: dict[_Id, _Delivery] = {}
        self._waiters: list[asyncio.Future[None]] = []

    async def push(self, user_id: str | bytes, chat_id: str | bytes, upto: int) -> None:
        entry = _Entry(raw_id(user_id, "user_id"), raw_id(chat_id, "chat_id"), upto)
        ms = int(time.time() * 1000)
        self._last = (ms, 0) if ms > self._last[0] else (self._last[0], self._last[1] + 1)
        self._entries[self._last] = entry
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._waiters.clear()

    async def read(self, consumer: str, count: int, block_ms: int | None) -> list[QueueEntry]:
        if count < 1:
            raise InputError(f"read at least one entry, not {count}")
        if block_ms is not None and block_ms < 0:
            raise InputError(f"block_ms must be None or at least 0, not {block_ms}")
        loop = asyncio.get_running_loop()
        deadline = None if not block_ms else loop.time() + block_ms / 1000  # 0 waits for ever, as BLOCK 0
        while True:
            taken = self._take(consumer, count)
            if taken or block_ms is None:
                return taken
            timeout = None if deadline is None else deadline - loop.time()
            if timeout is not None and timeout <= 0:
                return []
            waiter = loop.create_future()
            self._waiters.append(waiter)
            try:
                await asyncio.wait([waiter], timeout=timeout)
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
                waiter.cancel()

    def _take(self, consumer: str, count: int) -> list[QueueEntry]:
        now = _now_ms()
        taken: list[QueueEntry] = []
        for entry_id, entry in self._entries.items():
            if len(taken) == count:
                break
            if entry_id > self._delivered:
                self._delivered = entry_id
                self._pending[entry_id] = _Delivery(consumer, now)
                taken.append(_public(entry_id, entry))
        return taken

    async def reclaim(self, consumer: str, min_idle_ms: int, count: int) -> list[QueueEntry]:
        if count < 1:
            raise InputError(f"reclaim at least one entry, not {count}")
        now = _now_ms()
        claimed: list[QueueEntry] = []
        for entry_id in sorted(self._pending):
            if len(claimed) == count:
                break
            if now - self._pending[entry_id].at_ms < min_idle_ms:
                continue
            entry = self._entries.get(entry_id)
            if entry is None:  # deleted while pending: the group forgets it, as XAUTOCLAIM does
                del self._pending[entry_id]
                continue
            self._pending[entry_id] = _Delivery(consumer, now)
            claimed.append(_public(entry_id, entry))
        return claimed

    async def done(self, ids: list[str]) -> int:
        return self._done({_parse(i) for i in ids})

    def _done(self, ids: set[_Id]) -> int:
        dropped = 0
        for entry_id in ids:
            self._pending.pop(entry_id, None)
            dropped += self._entries.pop(entry_id, None) is not None
        return dropped

    async def drop(self, user_id: str | bytes, chat_id: str | bytes | None = None) -> int:
        user = raw_id(user_id, "user_id")
        chat = raw_id(chat_id, "chat_id") if chat_id is not None else None
        return self._done(
            {i for i, e in self._entries.items() if e.user == user and (chat is None or e.chat == chat)}
        )

    async def pending(self) -> int:
        return len(self._pending)

    async def backlog(self) -> int:
        return len(self._entries)


def _now_ms() -> float:
    return time.monotonic() * 1000


def _public(entry_id: _Id, entry: _Entry) -> QueueEntry:
    return QueueEntry(
        id=f"{entry_id[0]}-{entry_id[1]}",
        user_id=readable_id(entry.user),
        chat_id=readable_id(entry.chat),
        upto=entry.upto,
    )


def _parse(entry_id: str) -> _Id:
    """An entry id as the stream takes it: `<ms>-<n>`, or `<ms>` for `<ms>-0`."""
    ms, dash, seq = entry_id.partition("-")
    if not all(part.isascii() and part.isdigit() for part in ((ms, seq) if dash else (ms,))):
        raise InputError(f"bad fact queue entry id {entry_id!r}")
    return int(ms), int(seq or 0)
