"""`RedisFactQueue`: the queue of turns waiting for fact extraction as one Redis Stream per deployment
(`brain.keys.fact_queue_key`) and a consumer group, so any number of workers share the work; beside it, in
the same slot, the dead letters (`fact_dead_letters_key`: id -> JSON record, ids base64 in it), each chat's
tries (`fact_tries_key`: `queue_chat_field` -> count), the chats waiting while the stream is full
(`fact_overflow_key`) and the counters of the bounds (`fact_queue_counts_key`): see
`brain.backends.redis.queue_scripts`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from brain.backends.redis import queue_records as stored
from brain.backends.redis.client import RedisClient
from brain.backends.redis.fence import Fencing, fenced
from brain.backends.redis.queue_records import QueueCounters
from brain.backends.redis.queue_scripts import DONE, PARK, PUSH, REFILL, REQUEUE, TRIED
from brain.errors import ErasedError, StoreError
from brain.keys import (
    erasure_key,
    fact_dead_letters_key,
    fact_overflow_key,
    fact_queue_counts_key,
    fact_queue_key,
    fact_tries_key,
    queue_chat_field,
    raw_id,
)
from brain.search.filters import text
from brain.storage import fence
from brain.storage.queue import DeadLetter, QueueEntry, dead_letter, entry_order
from brain.telemetry import TracedScript

__all__ = ["QueueCounters", "RedisFactQueue"]

GROUP = "facts"
_PAGE = 500


class RedisFactQueue:
    """A `FactQueue`: push turns on the reply path (one script); read, reclaim and acknowledge them in
    workers. Bounded: at most `max_len` entries, then chats wait coalesced in the overflow (at most
    `max_len` chats), and at most `dead_letters_max` dead letters (`brain.backends.redis.queue_scripts`)."""

    def __init__(
        self,
        client: RedisClient,
        *,
        prefix: str = "brain",
        fencing: Fencing | None = None,
        max_len: int = 10_000,
        dead_letters_max: int = 1_000,
    ) -> None:
        self._client, self.prefix = client, prefix
        self.max_len, self.dead_letters_max = max_len, dead_letters_max
        self.key = fact_queue_key(prefix)
        self.dead_key, self.tries_key = fact_dead_letters_key(prefix), fact_tries_key(prefix)
        self.overflow_key, self.counts_key = fact_overflow_key(prefix), fact_queue_counts_key(prefix)
        self._fencing = fencing or Fencing(client, prefix)
        self._push = TracedScript(client.register_script(PUSH), "queue.push")
        self._done = TracedScript(client.register_script(DONE), "queue.done")
        self._refill = TracedScript(client.register_script(REFILL), "queue.refill")
        self._park = TracedScript(client.register_script(fenced(PARK)), "queue.park")
        self._tried = TracedScript(client.register_script(fenced(TRIED)), "queue.tried")
        self._requeue = TracedScript(client.register_script(REQUEUE), "queue.requeue")
        self._group_ready = False

    async def push(self, user_id: str | bytes, chat_id: str | bytes, upto: int) -> None:
        """One entry; when the stream is full (or chats already wait), the chat's record in the overflow
        instead (counted `deferred`); with the overflow full too, nothing (counted `dropped`)."""
        user, chat = raw_id(user_id, "user_id"), raw_id(chat_id, "chat_id")
        args = [
            self.max_len,
            user,
            chat,
            upto,
            queue_chat_field(user, chat),
            stored.waiting(user, chat, upto),
        ]
        await self._push(keys=[self.key, self.overflow_key, self.counts_key], args=args)

    def push_parts(self, user_id: str | bytes, chat_id: str | bytes) -> tuple[list[str], list[Any]]:
        """The KEYS and ARGV that a write script made with `queue_scripts.then_push` takes last, to push
        the chat up to its turn count as `push` does."""
        user, chat = raw_id(user_id, "user_id"), raw_id(chat_id, "chat_id")
        args = [self.max_len, user, chat, queue_chat_field(user, chat), stored.waiting_tail(user, chat)]
        return [self.key, self.overflow_key, self.counts_key], args

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
        return [e for _, entries in reply or [] for e in stored.entries(entries)]

    async def reclaim(self, consumer: str, min_idle_ms: int, count: int) -> list[QueueEntry]:
        """Entries another consumer took and left unacknowledged for `min_idle_ms`, now `consumer`'s."""
        await self.ensure_group()
        reply = await self._client.xautoclaim(
            self.key, GROUP, consumer, min_idle_ms, start_id="0-0", count=count
        )
        return stored.entries(reply[1])

    async def done(self, ids: list[str]) -> int:
        """Acknowledge and drop entries (whose turns were applied, or erased); how many were dropped. Then,
        when chats wait in the overflow and the stream has room, they move in (as many as fit)."""
        await self.ensure_group()
        gone, refill = await self._done(keys=[self.key, self.overflow_key], args=[GROUP, self.max_len, *ids])
        if int(refill):
            await self._move_waiting()
        return int(gone)

    async def _move_waiting(self) -> int:
        """Chats from the overflow into the stream, in HSCAN order, while there is room; how many."""
        moved, cursor = 0, 0
        while True:
            cursor, page = cast(
                tuple[int, dict[Any, Any]], await self._client.hscan(self.overflow_key, cursor, count=_PAGE)
            )
            args: list[Any] = [self.max_len]
            for field, record in page.items():
                user, chat = stored.waiter(record)
                args += [field, user, chat]
            if len(args) > 1:
                done = int(await self._refill(keys=[self.key, self.overflow_key], args=args))
                moved += done
                if done < (len(args) - 1) // 3:
                    return moved  # the stream is full again (or a record went meanwhile)
            if not cursor:
                return moved

    async def drop(self, user_id: str | bytes, chat_id: str | bytes | None = None) -> int:
        """Drop every entry of `user_id` (of one chat with `chat_id`), read or not, and its dead letters and
        tries, for erasure; returns how many entries and dead letters. A worker still holding an entry
        finds the chat gone and applies nothing. A full XRANGE and HSCANs: not for hot paths."""
        user = raw_id(user_id, "user_id")
        chat = raw_id(chat_id, "chat_id") if chat_id is not None else None
        dead = [d.id for d in await self._letters() if stored.names_letter(d, user, chat)]
        dropped = int(await self._client.hdel(self.dead_key, *dead)) if dead else 0
        if chat is not None:
            await self._client.hdel(self.tries_key, queue_chat_field(user, chat))
            dropped += int(await self._client.hdel(self.overflow_key, queue_chat_field(user, chat)))
        else:
            match = queue_chat_field(user) + "*"
            for key in (self.tries_key, self.overflow_key):
                fields = [f async for f, _ in self._client.hscan_iter(key, match=match, count=1_000)]
                if fields:
                    removed = int(await self._client.hdel(key, *fields))
                    dropped += removed if key == self.overflow_key else 0
        start = "-"
        while True:
            page = cast(list[Any], await self._client.xrange(self.key, min=start, count=1_000))
            if not page:
                return dropped
            mine = [text(eid) for eid, fields in page if stored.names(fields, user, chat)]
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
        args = [
            GROUP,
            letter.id,
            stored.record(letter),
            field,
            self.dead_letters_max,
            *(e.id for e in entries),
        ]
        keys = [self.dead_key, self.key, self.tries_key, self.counts_key]
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
        found = [d for d in await self._letters() if user is None or stored.names_letter(d, user, None)]
        return sorted(found, key=lambda d: (d.at, entry_order(d.id)))[: max(limit, 0)]

    async def dead(self) -> int:
        return int(await self._client.hlen(self.dead_key))

    async def requeue(self, ids: Sequence[str] | None = None) -> int:
        """Each letter's entry added (or its chat's record in the overflow, as `push` does) and the letter
        removed in one script: a letter re-queued by two callers at once is queued once; one that finds
        the stream and the overflow full stays a letter."""
        letters, wanted = await self._letters(), set(ids or ())
        chosen = letters if ids is None else [d for d in letters if d.id in wanted]
        args: list[Any] = [self.max_len]
        for d in chosen:
            user, chat = raw_id(d.user_id), raw_id(d.chat_id)
            args += [
                d.id,
                user,
                chat,
                d.upto,
                queue_chat_field(user, chat),
                stored.waiting(user, chat, d.upto),
            ]
        if len(args) == 1:
            return 0
        keys = [self.dead_key, self.key, self.tries_key, self.overflow_key]
        return int(await self._requeue(keys=keys, args=args))

    async def _letters(self) -> list[DeadLetter]:
        """Every dead letter (an HSCAN)."""
        found = []
        async for dead_id, raw in self._client.hscan_iter(self.dead_key, count=1_000):
            found.append(stored.letter(text(dead_id), raw))
        return found

    async def pending(self) -> int:
        """Entries read but not acknowledged yet (all consumers)."""
        await self.ensure_group()
        info = await self._client.xpending(self.key, GROUP)
        return int(info["pending"] if isinstance(info, dict) else info[0])

    async def backlog(self) -> int:
        """Entries in the stream (read or not, not yet acknowledged and dropped)."""
        return int(await self._client.xlen(self.key))

    async def counters(self) -> QueueCounters:
        """What waits and how often the bounds acted (the counters since the deployment began)."""
        pending = await self.pending()
        async with self._client.pipeline(transaction=False) as pipe:
            pipe.xlen(self.key)
            pipe.hlen(self.overflow_key)
            pipe.hlen(self.dead_key)
            pipe.hmget(self.counts_key, ["deferred", "dropped", "dead_trimmed"])
            backlog, overflow, dead, (deferred, dropped, trimmed) = await pipe.execute()
        return QueueCounters(
            backlog=int(backlog),
            pending=pending,
            overflow=int(overflow),
            dead=int(dead),
            deferred=int(deferred or 0),
            dropped=int(dropped or 0),
            dead_trimmed=int(trimmed or 0),
            max_len=self.max_len,
            dead_letters_max=self.dead_letters_max,
        )
