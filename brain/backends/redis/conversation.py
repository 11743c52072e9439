"""`ConversationStore` on Redis: a list of turns (never trimmed), an id hash for idempotent appends, a meta
hash, the pending text of a turn in progress.

Records: `brain.backends.redis.conversation_records`; the ids hash and the pending key:
`brain.backends.redis.conversation_scripts`.

Every operation is one Lua script call on one conversation's hash-tagged keys: one round trip, atomic,
Cluster-safe. Loading reads the metadata and the newest unsummarized turns only, never the whole past.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, cast

from brain.backends.redis.client import RedisClient, Refused
from brain.backends.redis.conversation_records import (
    KNOWLEDGE,
    bucket_seq,
    knowledge_record,
    packed_id,
    parse,
    parse_meta,
    parse_turns,
    remember_written,
    turn_record,
)
from brain.backends.redis.conversation_scripts import COMMIT_SUMMARY, DROP_TEXT, HIDE, LOAD, SET_TITLE, WRITE
from brain.backends.redis.fence import Fencing, RedisErasureStore, fenced
from brain.backends.redis.queue import RedisFactQueue
from brain.backends.redis.queue_scripts import then_push
from brain.errors import ArchivedError, ConflictError, ErasedError, InputError, StoreError
from brain.keys import (
    ConversationKeys,
    archived_key,
    chat_bases,
    conversation_keys,
    encode_id,
    erasure_key,
    raw_id,
    readable_id,
)
from brain.llm.usage import Usage
from brain.message import SCHEMA_VERSION, Message
from brain.storage import fence
from brain.storage.conversation import Conversation, StoredState, Turn, WriteBatch, WriteResult
from brain.storage.fence import Ticket
from brain.telemetry import TracedScript

__all__ = ["RedisMemoryStore"]


class RedisMemoryStore:
    """A `ConversationStore` over an injected async Redis client (which the caller owns). With the
    backend's fact `queue`, a write asked to queue the chat pushes it in the same script on a standalone
    server (`queue_scripts.then_push`; on Cluster the queue's slot is another: the caller pushes)."""

    def __init__(
        self,
        client: RedisClient,
        *,
        prefix: str = "brain",
        ttl_seconds: int | None = None,
        max_message_bytes: int = 1_048_576,
        fencing: Fencing | None = None,
        erasure: RedisErasureStore | None = None,
        queue: RedisFactQueue | None = None,
    ) -> None:
        self._client, self._queue = client, queue
        self._fencing = fencing or Fencing(client, prefix)
        self._erasure = erasure
        self.prefix = prefix
        self.ttl = ttl_seconds or 0
        self.max_message_bytes = max_message_bytes
        self._load = TracedScript(client.register_script(LOAD), "chat.load")
        self._write = TracedScript(client.register_script(fenced(WRITE)), "chat.write")
        self._write_push = TracedScript(client.register_script(fenced(then_push(WRITE))), "chat.write_push")
        self._commit = TracedScript(client.register_script(fenced(COMMIT_SUMMARY)), "chat.commit_summary")
        self._title = TracedScript(client.register_script(fenced(SET_TITLE)), "chat.set_title")
        self._hide = TracedScript(client.register_script(fenced(HIDE)), "chat.hide")
        self._drop = TracedScript(client.register_script(fenced(DROP_TEXT)), "chat.drop_text")

    def keys(self, conv: Conversation) -> ConversationKeys:
        return conversation_keys(self.prefix, conv.user_id, conv.chat_id)

    async def _run(
        self,
        script: Any,
        keys: ConversationKeys,
        args: list[Any],
        user_id: str | bytes | None = None,
        names: list[str] | None = None,
    ) -> Any:
        """Call a script on the chat's keys (or `names`); fenced when it writes for `user_id`."""
        try:
            if user_id is None:
                return await script(keys=names or list(keys.all), args=args)
            return await self._fencing.call(script, names or list(keys.all), args, user_id)
        except Refused as exc:
            if exc.code == "BRAIN_ARCHIVED":
                raise ArchivedError(f"{keys.base}: the user's memory is in the cold archive") from None
            if exc.code == "BRAIN_CONFLICT":
                raise ConflictError(f"{keys.base}: {exc.detail}") from exc
            if exc.code == "BRAIN_CORRUPT":
                raise StoreError(
                    f"corrupt record in {keys.meta}: {exc.detail}; it was left as it is"
                ) from exc
            if exc.code == "BRAIN_SCHEMA":
                raise StoreError(
                    f"{keys.meta} was written with schema version {exc.detail.split()[-1]}; "
                    f"this brain-assistant reads up to {SCHEMA_VERSION}: upgrade it"
                ) from exc
            raise

    async def load(
        self,
        conv: Conversation,
        *,
        window_turns: int,
        knowledge_items: int,
        pending: str | None = None,
        refuse_archived: bool = False,
    ) -> StoredState:
        keys = self.keys(conv)
        if pending is not None and len(pending.encode("utf-8", "surrogatepass")) > self.max_message_bytes:
            raise InputError(
                f"the pending text is larger than memory.max_message_bytes = {self.max_message_bytes}"
            )
        saving = "" if pending is None else "set"
        args = [self.ttl, SCHEMA_VERSION, raw_id(conv.user_id), raw_id(conv.chat_id), saving, pending or ""]
        args += [repr(time.time()), max(window_turns, 0), max(knowledge_items, 0)]
        cluster, marker = self._fencing.cluster, archived_key(self.prefix, conv.user_id)
        if cluster and refuse_archived and await self._client.hget(marker, "state") is not None:  # apart
            raise ArchivedError(f"{keys.base}: the user's memory is in the cold archive")
        before = await self._epoch(conv) if cluster else 0
        names = list(keys.all) if cluster else [*keys.all, erasure_key(self.prefix, conv.user_id)]
        names += [marker] if refuse_archived and not cluster else []
        found = await self._run(self._load, keys, args, names=names)
        raw_meta, start, window, knowledge, length, hidden, epoch, existed, talk = found
        epoch = int(epoch) if not cluster else before
        if cluster and pending is not None and not int(existed):
            await self._created(conv, before)
        if not raw_meta:
            return StoredState(exists=False, epoch=epoch)
        meta = parse_meta(keys, raw_meta, int(length), talk or None)
        turns = parse_turns(keys.turns, window, int(start))
        if hidden:
            gone = {int(h) for h in hidden}
            turns = [t for t in turns if t.seq not in gone]
        records = parse(KNOWLEDGE, keys.knowledge, knowledge) if knowledge else ()
        return StoredState(
            exists=True, meta=meta, window=tuple(turns), knowledge=tuple(r.msg for r in records), epoch=epoch
        )

    async def _epoch(self, conv: Conversation) -> int:
        if self._erasure is None:
            return 0
        return (await self._erasure.ticket(conv.user_id)).epoch

    async def _created(self, conv: Conversation, epoch: int) -> None:
        """On Cluster a ticket is read apart from the call that creates a chat: when the user was erased in
        between, the erasure may have missed the new chat, so it is erased here and fenced, and the work
        that began before the erasure stops (`ErasedError`)."""
        if self._erasure is None:
            return
        now = await self._erasure.erased_since(Ticket(conv.user_id, epoch, conv.chat_id))
        if not now:
            return
        await self.delete(conv)
        bases = chat_bases(self.prefix, conv.user_id, conv.chat_id)
        await self._erasure.fence(conv.user_id, bases, None, now)
        raise ErasedError(f"chat {conv.label} was erased while this turn began: nothing was kept")

    async def write(self, conv: Conversation, batch: WriteBatch) -> WriteResult:
        keys = self.keys(conv)
        args: list[Any] = [
            self.ttl,
            SCHEMA_VERSION,
            raw_id(conv.user_id),
            raw_id(conv.chat_id),
            "set"
            if batch.set_last_talk and batch.last_talk is not None
            else "clear"
            if batch.set_last_talk
            else "",
            batch.last_talk or "",
            repr(time.time()),
            len(batch.turns),
        ]
        written = []
        for message, tokens in batch.turns:
            record = turn_record(message, tokens)
            if len(record) > self.max_message_bytes + 4096:
                raise InputError(
                    f"message {message.id} is {len(message.content.encode())} bytes; "
                    f"memory.max_message_bytes is {self.max_message_bytes}"
                )
            args += [message.id, packed_id(message.id), record, tokens]
            written.append((record, tokens, message))
        args.append(len(batch.knowledge))
        for message in batch.knowledge:
            args += [message.id, knowledge_record(message)]
        usage = batch.usage or Usage(prompt_tokens=0, completion_tokens=0)
        args += [batch.calls, usage.prompt_tokens, usage.completion_tokens, len(batch.spent)]
        for row in batch.spent:
            args += [row.model, row.calls, row.prompt_tokens, row.completion_tokens]
        queue = self._queue if batch.queue_facts and not self._fencing.cluster else None
        if queue is None:
            found = [0, *await self._run(self._write, keys, args, conv.user_id)]
        else:  # [keys, queue keys], [args, queue args] -> [pushed, the write's reply...]
            head, tail = queue.push_parts(conv.user_id, conv.chat_id)
            found = await self._run(self._write_push, keys, args + tail, conv.user_id, [*keys.all, *head])
        queued, version, added, window_tokens, turn_count, *seqs = found
        # a turn already stored under its id keeps its own record: the one made here is never read back
        remember_written(written, [int(s) for s in seqs])
        held = fence.current()
        if self._fencing.cluster and int(version) == 1 and held is not None and held.covers(conv.user_id):
            await self._created(conv, held.epoch)
        return WriteResult(
            version=int(version),
            seqs=tuple(int(s) for s in seqs),
            added=int(added),
            window_tokens=int(window_tokens),
            turn_count=int(turn_count),
            queued=int(queued) == 1,
        )

    async def read_turns(self, conv: Conversation, start: int, count: int) -> list[Turn]:
        keys = self.keys(conv)
        start = max(start, 1)
        if count <= 0:
            return []
        async with self._client.pipeline(transaction=False) as pipe:
            pipe.lrange(keys.turns, start - 1, start - 2 + count)
            pipe.smembers(keys.hidden)
            for key in keys.all if self.ttl else ():
                pipe.expire(key, self.ttl)
            raw, hidden, *_ = await pipe.execute()
        gone = {int(h) for h in hidden}
        return [
            replace(t, hidden=True) if t.seq in gone else t for t in parse_turns(keys.turns, raw, start - 1)
        ]

    async def turns_at(self, conv: Conversation, seqs: Sequence[int]) -> list[Turn]:
        seqs = [s for s in seqs if s >= 1]  # LINDEX counts a negative index from the end
        if not seqs:
            return []
        keys = self.keys(conv)
        async with self._client.pipeline(transaction=False) as pipe:
            for seq in seqs:
                pipe.lindex(keys.turns, seq - 1)
            pipe.smembers(keys.hidden)
            *raws, hidden = await pipe.execute()
        gone = {int(h) for h in hidden}
        found = [(seq, raw) for seq, raw in zip(seqs, raws, strict=True) if raw is not None]
        return [
            replace(turn, hidden=True) if turn.seq in gone else turn
            for seq, raw in found
            for turn in parse_turns(keys.turns, [raw], seq - 1)
        ]

    async def seq_of(self, conv: Conversation, message_id: str) -> int | None:
        packed = packed_id(message_id)
        fields = [message_id[:1], "t:" + message_id] if packed else ["t:" + message_id]
        found = await self._client.hmget(self.keys(conv).ids, fields)
        bucket = found[0] if packed else None
        seq = bucket_seq(bucket if isinstance(bucket, bytes) else None, packed)
        if seq is None and found[-1] is not None:
            seq = int(found[-1])
        return seq

    async def read_knowledge(self, conv: Conversation, start: int, count: int) -> list[Message]:
        keys = self.keys(conv)
        if count <= 0:
            return []
        first = max(start, 1) - 1
        raw = await self._client.lrange(keys.knowledge, first, first + count - 1)
        return [r.msg for r in parse(KNOWLEDGE, keys.knowledge, cast(list[bytes], raw), first)]

    async def hide_turns(self, conv: Conversation, seqs: Sequence[int]) -> int:
        return int(await self._run(self._hide, self.keys(conv), [self.ttl, *seqs], conv.user_id))

    async def drop_text(self, conv: Conversation, upto: int) -> int:
        return int(await self._run(self._drop, self.keys(conv), [max(upto, 0), self.ttl], conv.user_id))

    async def commit_summary(
        self, conv: Conversation, *, summary: str, upto: int, expected_upto: int, tokens: int
    ) -> int:
        keys = self.keys(conv)
        args = [summary, upto, expected_upto, tokens, repr(time.time()), self.ttl]
        return int(await self._run(self._commit, keys, args, conv.user_id))

    async def set_title(self, conv: Conversation, title: str) -> None:
        await self._run(self._title, self.keys(conv), [title, self.ttl], conv.user_id)

    async def delete(self, conv: Conversation) -> bool:
        return bool(await self._client.delete(*self.keys(conv).all))

    async def list_chats(self, user_id: str | bytes) -> list[str | bytes]:
        pattern = f"{self.prefix}:{{{encode_id(user_id, 'user_id')}.*}}:meta"
        metas = [k async for k in self._client.scan_iter(match=pattern, count=1_000)]
        chats = [await self._client.hget(key, "chat_id") for key in metas]
        return [readable_id(c if isinstance(c, bytes) else c.encode()) for c in chats if c is not None]
