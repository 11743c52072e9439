"""`MemoryFactQueue`: the fact queue in memory, with the Redis stream's semantics (one consumer group): ids
`<ms>-<n>` in push order, new entries delivered once, pending ones reclaimed when idle, `done` acknowledges
and deletes; dead letters and each chat's tries beside them. Not a user's data in the keyspace: like the
Redis stream, it is one per deployment."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass

from brain.backends.memory.keyspace import Keyspace
from brain.errors import InputError
from brain.keys import raw_id, readable_id
from brain.storage.queue import DeadLetter, QueueEntry, dead_letter, entry_order

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
    """A `FactQueue` in this process: entries and the group's pending list, for one event loop. Given the
    backend's `space`, a `park` or `tried` under a ticket an erasure has passed is refused, as on Redis."""

    def __init__(self, space: Keyspace | None = None) -> None:
        self._space = space
        self._entries: dict[_Id, _Entry] = {}  # in id order: ids only grow
        self._last: _Id = (0, 0)  # the newest id handed out
        self._delivered: _Id = (0, 0)  # the group's last delivered id
        self._pending: dict[_Id, _Delivery] = {}
        self._waiters: list[asyncio.Future[None]] = []
        self._dead: dict[str, DeadLetter] = {}
        self._tries: dict[tuple[bytes, bytes], int] = {}

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

        def named(u: bytes, c: bytes) -> bool:
            return u == user and (chat is None or c == chat)

        for key in [k for k in self._tries if named(*k)]:
            del self._tries[key]
        dead = [i for i, d in self._dead.items() if named(raw_id(d.user_id), raw_id(d.chat_id))]
        for dead_id in dead:
            del self._dead[dead_id]
        return len(dead) + self._done({i for i, e in self._entries.items() if named(e.user, e.chat)})

    async def tried(self, user_id: str | bytes, chat_id: str | bytes) -> int:
        key = (raw_id(user_id, "user_id"), raw_id(chat_id, "chat_id"))
        if self._space is not None:
            self._space.check(user_id)
        self._tries[key] = self._tries.get(key, 0) + 1
        return self._tries[key]

    async def untried(self, user_id: str | bytes, chat_id: str | bytes) -> None:
        self._tries.pop((raw_id(user_id, "user_id"), raw_id(chat_id, "chat_id")), None)

    async def park(self, entries: Sequence[QueueEntry], reason: str, attempts: int) -> DeadLetter:
        letter = dead_letter(entries, reason, attempts)
        if self._space is not None:
            self._space.check(letter.user_id)
        self._done({_parse(e.id) for e in entries})
        self._tries.pop((raw_id(letter.user_id), raw_id(letter.chat_id)), None)
        self._dead[letter.id] = letter
        return letter

    async def parked(self, limit: int = 100, user_id: str | bytes | None = None) -> list[DeadLetter]:
        user = raw_id(user_id, "user_id") if user_id is not None else None
        found = [d for d in self._dead.values() if user is None or raw_id(d.user_id) == user]
        return sorted(found, key=lambda d: (d.at, entry_order(d.id)))[: max(limit, 0)]

    async def dead(self) -> int:
        return len(self._dead)

    async def requeue(self, ids: Sequence[str] | None = None) -> int:
        chosen = list(self._dead) if ids is None else [i for i in dict.fromkeys(ids) if i in self._dead]
        for dead_id in chosen:
            letter = self._dead.pop(dead_id)
            self._tries.pop((raw_id(letter.user_id), raw_id(letter.chat_id)), None)
            await self.push(letter.user_id, letter.chat_id, letter.upto)
        return len(chosen)

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
