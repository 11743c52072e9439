"""`RedisFactQueue`: the queue of turns waiting for fact extraction as one Redis Stream per deployment
(`brain.keys.fact_queue_key`) and a consumer group, so any number of workers share the work."""

from __future__ import annotations

from typing import Any, cast

from brain.backends.redis.client import RedisClient
from brain.errors import StoreError
from brain.keys import fact_queue_key, raw_id, readable_id
from brain.search.filters import text
from brain.storage.queue import QueueEntry

__all__ = ["RedisFactQueue"]

GROUP = "facts"


class RedisFactQueue:
    """A `FactQueue`: push turns on the reply path (one XADD); read, reclaim and acknowledge them in
    workers."""

    def __init__(self, client: RedisClient, *, prefix: str = "brain") -> None:
        self._client = client
        self.key = fact_queue_key(prefix)
        self._group_ready = False

    async def push(self, user_id: str | bytes, chat_id: str | bytes, upto: int) -> None:
        fields = {"user": raw_id(user_id, "user_id"), "chat": raw_id(chat_id, "chat_id"), "upto": upto}
        await self._client.xadd(self.key, fields)  # type: ignore[arg-type]

    async def ensure_group(self) -> None:
        if self._group_ready:
            return
        try:
            await self._client.xgroup_create(self.key, GROUP, id="0", mkstream=True)
        except StoreError as exc:
            if "BUSYGROUP" not in str(exc):
                raise
        self._group_ready = True

    async def read(self, consumer: str, count: int, block_ms: int | None) -> list[QueueEntry]:
        """New entries for `consumer` (waiting up to `block_ms` for the first; None: do not wait)."""
        await self.ensure_group()
        reply = cast(
            list[Any],
            await self._client.xreadgroup(GROUP, consumer, {self.key: ">"}, count=count, block=block_ms),
        )
        return [e for _, entries in reply or [] for e in _entries(entries)]

    async def reclaim(self, consumer: str, min_idle_ms: int, count: int) -> list[QueueEntry]:
        """Entries another consumer took and left unacknowledged for `min_idle_ms`, now `consumer`'s."""
        await self.ensure_group()
        reply = await self._client.xautoclaim(
            self.key, GROUP, consumer, min_idle_ms, start_id="0-0", count=count
        )
        return _entries(reply[1])

    async def done(self, ids: list[str]) -> int:
        """Acknowledge and drop entries (whose turns were applied, or erased); how many were dropped."""
        if not ids:
            return 0
        await self._client.xack(self.key, GROUP, *ids)
        return int(await self._client.xdel(self.key, *ids))

    async def drop(self, user_id: str | bytes, chat_id: str | bytes | None = None) -> int:
        """Drop every entry of `user_id` (of one chat with `chat_id`), read or not, for erasure; returns how
        many. A worker still holding one finds the chat gone and applies nothing. A full XRANGE: not for hot
        paths."""
        user = raw_id(user_id, "user_id")
        chat = raw_id(chat_id, "chat_id") if chat_id is not None else None
        dropped, start = 0, "-"
        while True:
            page = cast(list[Any], await self._client.xrange(self.key, min=start, count=1_000))
            if not page:
                return dropped
            mine = [text(eid) for eid, fields in page if _names(fields, user, chat)]
            if mine:
                await self.ensure_group()  # the stream may never have been read by a worker
                dropped += await self.done(mine)
            start = "(" + text(page[-1][0])

    async def pending(self) -> int:
        """Entries read but not acknowledged yet (all consumers)."""
        await self.ensure_group()
        info = await self._client.xpending(self.key, GROUP)
        return int(info["pending"] if isinstance(info, dict) else info[0])

    async def backlog(self) -> int:
        """Entries in the stream (read or not, not yet acknowledged and dropped)."""
        return int(await self._client.xlen(self.key))


def _fields(fields: dict[Any, Any]) -> dict[str, Any]:
    return {(k.decode() if isinstance(k, bytes) else k): v for k, v in fields.items()}


def _names(fields: dict[Any, Any], user: bytes, chat: bytes | None) -> bool:
    data = {k: raw_id(v) for k, v in _fields(fields).items()}
    return data.get("user") == user and (chat is None or data.get("chat") == chat)


def _entries(raw: list[Any]) -> list[QueueEntry]:
    out = []
    for entry_id, fields in raw:
        if not fields:  # deleted meanwhile
            continue
        data = _fields(fields)
        eid = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
        out.append(
            QueueEntry(
                id=eid,
                user_id=readable_id(data["user"]),
                chat_id=readable_id(data["chat"]),
                upto=int(data["upto"]),
            )
        )
    return out
