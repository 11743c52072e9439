"""Per-key locks that do not outlive their use: a key's lock exists only while a call holds or awaits it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Hashable

__all__ = ["KeyedLocks"]


class KeyedLocks:
    """`async with locks.hold(key)`: calls with the same key run one at a time; the table holds only keys
    in use, so serving millions of chats over months does not grow it."""

    def __init__(self) -> None:
        self._entries: dict[Hashable, tuple[asyncio.Lock, list[int]]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    @contextlib.asynccontextmanager
    async def hold(self, key: Hashable) -> AsyncIterator[None]:
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = (asyncio.Lock(), [0])
        lock, users = entry
        users[0] += 1
        try:
            async with lock:
                yield
        finally:
            users[0] -= 1
            if users[0] == 0:
                del self._entries[key]
