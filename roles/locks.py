"""Per-key locks that do not outlive their use: a key's lock exists only while a call holds or awaits it."""

from __future__ import annotations

import asyncio
from collections.abc import Hashable
from types import TracebackType

__all__ = ["KeyedLocks"]

_Entry = tuple[asyncio.Lock, list[int]]  # the lock, and how many calls hold or await it


class KeyedLocks:
    """`async with locks.hold(key)`: calls with the same key run one at a time; the table holds only keys
    in use, so serving millions of chats over months does not grow it."""

    def __init__(self) -> None:
        self._entries: dict[Hashable, _Entry] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def hold(self, key: Hashable) -> _Hold:
        """The key's lock, held inside the `async with` (a plain object, not a generator: it is taken by
        every turn, and a generator costs the loop's bookkeeping of it)."""
        return _Hold(self._entries, key)


class _Hold:
    __slots__ = ("_entries", "_entry", "_key")

    def __init__(self, entries: dict[Hashable, _Entry], key: Hashable) -> None:
        self._entries, self._key = entries, key
        self._entry: _Entry | None = None

    async def __aenter__(self) -> None:
        entry = self._entries.get(self._key)
        if entry is None:
            entry = self._entries[self._key] = (asyncio.Lock(), [0])
        self._entry = entry
        entry[1][0] += 1
        try:
            await entry[0].acquire()
        except BaseException:  # cancelled while waiting: no longer a user of the key
            self._leave()
            raise

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        assert self._entry is not None
        try:
            self._entry[0].release()
        finally:
            self._leave()

    def _leave(self) -> None:
        assert self._entry is not None
        users = self._entry[1]
        users[0] -= 1
        if users[0] == 0:
            del self._entries[self._key]
