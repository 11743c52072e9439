"""`RedisFactQueue`: the queue of turns waiting for fact extraction as one Redis Stream per deployment
(`brain.keys.fact_queue_key`) and a consumer group, so any number of workers share the work; beside it, in
the same slot, the dead letters (`fact_dead_letters_key`: id -> JSON record, ids base64 in it) and each
chat's tries (`fact_tries_key`: `queue_chat_field` -> count)."""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any, cast

from brain.backends.redis.client import RedisClient
from brain.backends.redis.fence import Fencing, fenced
from brain.errors import ErasedError, StoreError
from brain.keys import (
    erasure_key,
    fact_dead_letters_key,
    fact_queue_key,
    fact_tries_key,
    queue_chat_field,
    raw_id,
    readable_id,
)
from brain.search.filters import text
from brain.storage import fence
from brain.storage.queue import DeadLetter, QueueEntry, dead_letter, entry_order
from brain.telemetry import TracedScript

__all__ = ["RedisFactQueue"]

GROUP = "facts"

# KEYS: dead letters, stream, tries; ARGV: group, letter id, record, tries field, entry ids...
_PARK = """
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
for i = 5, #ARGV do
  redis.call('XACK', KEYS[2], ARGV[1], ARGV[i])
  redis.call('XDEL', KEYS[2], ARGV[i])
end
redis.call('HDEL', KEYS[3], ARGV[4])
return 1
"""

# KEYS: tries; ARGV: field
_TRIED = "return redis.call('HINCRBY', KEYS[1], ARGV[1], 1)"

# KEYS: dead letters, stream, tries; ARGV: per letter, its id, user, chat, upto, tries field
_REQUEUE = """
local count = 0
for i = 1, #ARGV, 5 do
  if redis.call('HDEL', KEYS[1], ARGV[i]) == 1 then
    redis.call('XADD', KEYS[2], '*', 'user', ARGV[i + 1], 'chat', ARGV[i + 2], 'upto', ARGV[i + 3])
    redis.call('HDEL', KEYS[3], ARGV[i + 4])
    count = count + 1
  end
end
return count
"""


class RedisFactQueue:
    """A `FactQueue`: push turns on the reply path (one XADD); read, reclaim and acknowledge them in
    workers."""

    def __init__(self, client: RedisClient, *, prefix: str = "brain", fencing: Fencing | None = None) -> None:
        self._client, self.prefix = client, prefix
        self.key = fact_queue_key(prefix)
        self.dead_key, self.tries_key = fact_dead_letters_key(prefix), fact_tries_key(prefix)
        self._fencing = fencing or Fencing(client, prefix)
        self._park = TracedScript(client.register_script(fenced(_PARK)), "queue.park")
        self._tried = TracedScript(client.register_script(fenced(_TRIED)), "queue.tried")
        self._requeue = TracedScript(client.register_script(_REQUEUE), "queue.requeue")
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
        """Drop every entry of `user_id` (of one chat with `chat_id`), read or not, and its dead letters and
        tries, for erasure; returns how many entries and dead letters. A worker still holding an entry
        finds the chat gone and applies nothing. A full XRANGE and HSCANs: not for hot paths."""
        user = raw_id(user_id, "user_id")
        chat = raw_id(chat_id, "chat_id") if chat_id is not None else None
        dead = [d.id for d in await self._letters() if _names_letter(d, user, chat)]
        dropped = int(await self._client.hdel(self.dead_key, *dead)) if dead else 0
        if chat is not None:
            await self._client.hdel(self.tries_key, queue_chat_field(user, chat))
        else:
            match = queue_chat_field(user) + "*"
            fields = [f async for f, _ in self._client.hscan_iter(self.tries_key, match=match, count=1_000)]
            if fields:
                await self._client.hdel(self.tries_key, *fields)
        start = "-"
        while True:
            page = cast(list[Any], await self._client.xrange(self.key, min=start, count=1_000))
            if not page:
                return dropped
            mine = [text(eid) for eid, fields in page if _names(fields, user, chat)]
            if mine:
                await self.ensure_group()  # the stream may never have been read by a worker
                dropped += await self.done(mine)
            start = "(" + text(page[-1][0])

    async def tried(self, user_id: str | bytes, chat_id: str | bytes) -> int:
        """One more failed try of the chat's batch (HINCRBY, behind the erasure fence, checked after the
        write on Cluster as `park` is); the tries so far."""
        field = queue_chat_field(user_id, chat_id)
        count = int(await self._fencing.call(self._tried, [self.tries_key], [field], user_id))
        await self._undo_if_erased(user_id, self.tries_key, field)
        return count

    async def untried(self, user_id: str | bytes, chat_id: str | bytes) -> None:
        await self._client.hdel(self.tries_key, queue_chat_field(user_id, chat_id))

    async def park(self, entries: Sequence[QueueEntry], reason: str, attempts: int) -> DeadLetter:
        """One script, behind the erasure fence: the record written, the entries acknowledged and deleted,
        the chat's tries forgotten. On Cluster, where the script cannot read the user's erasure record
        (another slot), the record is read right after: an erasure that began before that read either ran
        its `drop` after the write (which deletes the letter) or is seen here (the letter is deleted and
        `ErasedError` raised)."""
        letter = dead_letter(entries, reason, attempts)
        await self.ensure_group()
        field = queue_chat_field(letter.user_id, letter.chat_id)
        args = [GROUP, letter.id, _record(letter), field, *(e.id for e in entries)]
        keys = [self.dead_key, self.key, self.tries_key]
        await self._fencing.call(self._park, keys, args, letter.user_id)
        await self._undo_if_erased(letter.user_id, self.dead_key, letter.id)
        return letter

    async def _undo_if_erased(self, user_id: str | bytes, key: str, field: str) -> None:
        """On Cluster, after a fenced write of `field` to the hash `key`: when the held ticket's user or
        chat was erased since, delete the field and raise `ErasedError` (standalone, the script checked)."""
        held = fence.applying(user_id)
        if not self._fencing.cluster or held is None:
            return
        found = await self._client.hmget(erasure_key(self.prefix, held.user_id), list(held.fields))
        if any(int(f or 0) > held.epoch for f in found):
            await self._client.hdel(key, field)
            raise ErasedError("the memory this work was for was erased meanwhile: nothing was kept")

    async def parked(self, limit: int = 100, user_id: str | bytes | None = None) -> list[DeadLetter]:
        user = raw_id(user_id, "user_id") if user_id is not None else None
        found = [d for d in await self._letters() if user is None or _names_letter(d, user, None)]
        return sorted(found, key=lambda d: (d.at, entry_order(d.id)))[: max(limit, 0)]

    async def dead(self) -> int:
        return int(await self._client.hlen(self.dead_key))

    async def requeue(self, ids: Sequence[str] | None = None) -> int:
        """Each letter's entry added and the letter removed in one script: a letter re-queued by two callers
        at once is queued once."""
        letters, wanted = await self._letters(), set(ids or ())
        chosen = letters if ids is None else [d for d in letters if d.id in wanted]
        args: list[Any] = []
        for d in chosen:
            user, chat = raw_id(d.user_id), raw_id(d.chat_id)
            args += [d.id, user, chat, d.upto, queue_chat_field(user, chat)]
        if not args:
            return 0
        return int(await self._requeue(keys=[self.dead_key, self.key, self.tries_key], args=args))

    async def _letters(self) -> list[DeadLetter]:
        """Every dead letter (an HSCAN)."""
        found = []
        async for dead_id, raw in self._client.hscan_iter(self.dead_key, count=1_000):
            found.append(_letter(text(dead_id), raw))
        return found

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


def _names_letter(letter: DeadLetter, user: bytes, chat: bytes | None) -> bool:
    return raw_id(letter.user_id) == user and (chat is None or raw_id(letter.chat_id) == chat)


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def _record(letter: DeadLetter) -> str:
    """A dead letter as stored: JSON, the ids in base64 (they may be any bytes)."""
    data = letter.model_dump(exclude={"id", "user_id", "chat_id"})
    data |= {"user": _b64(raw_id(letter.user_id)), "chat": _b64(raw_id(letter.chat_id))}
    return json.dumps(data, ensure_ascii=False)


def _letter(dead_id: str, raw: Any) -> DeadLetter:
    """A stored dead letter; `StoreError` when it cannot be read."""
    try:
        data = json.loads(raw)
        user, chat = (readable_id(base64.b64decode(data.pop(k), validate=True)) for k in ("user", "chat"))
        return DeadLetter.model_validate({**data, "id": dead_id, "user_id": user, "chat_id": chat})
    except (ValueError, TypeError, KeyError) as exc:
        raise StoreError(f"unreadable dead letter {dead_id!r}: {type(exc).__name__}") from None


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
