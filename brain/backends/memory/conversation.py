"""`InMemoryStore`: a `ConversationStore` in memory with the Redis store's semantics, for tests and tiny
embedded uses. Each conversation is one value of a `Keyspace`, named as its Redis keys are."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import replace

from brain.backends.memory.keyspace import Keyspace
from brain.backends.memory.usage import add_usage
from brain.errors import ConflictError, InputError
from brain.keys import conversation_keys, encode_id, raw_id, readable_id
from brain.llm.usage import Usage
from brain.message import Message
from brain.storage import fence
from brain.storage.conversation import (
    Conversation,
    ConversationMeta,
    StoredState,
    Turn,
    WriteBatch,
    WriteResult,
    without_text,
)

__all__ = ["InMemoryStore"]


class _Record:
    def __init__(self, chat_id: str | bytes) -> None:
        self.chat_id = chat_id
        self.meta = ConversationMeta()
        self.turns: list[Turn] = []
        self.ids: dict[str, int] = {}
        self.knowledge: list[Message] = []
        self.hidden: set[int] = set()


class InMemoryStore:
    """A `ConversationStore` in memory, with the same semantics as the Redis store."""

    def __init__(
        self, max_message_bytes: int = 1_048_576, *, space: Keyspace | None = None, prefix: str = "brain"
    ) -> None:
        self._space = space or Keyspace()
        self.prefix = prefix
        self.max_message_bytes = max_message_bytes

    def _key(self, conv: Conversation) -> str:
        # As in Redis: an id is its bytes, so "a" and b"a" are the same conversation.
        return f"{conversation_keys(self.prefix, conv.user_id, conv.chat_id).base}:chat"

    def _get(self, conv: Conversation) -> _Record | None:
        return self._space.get(self._key(conv), _Record)

    async def load(
        self,
        conv: Conversation,
        *,
        window_turns: int,
        knowledge_items: int,
        pending: str | None = None,
        refuse_archived: bool = False,  # no cold archive here
    ) -> StoredState:
        if pending is not None:  # a turn's start: it takes its ticket here, it is checked against none
            with fence.holding(None):
                await self.write(conv, WriteBatch(set_last_talk=True, last_talk=pending))
        epoch = self._space.erasures.get(raw_id(conv.user_id), {}).get("n", 0)
        record = self._get(conv)
        if record is None:
            return StoredState(exists=False, epoch=epoch)
        start = max(record.meta.summary_upto, len(record.turns) - window_turns)
        return StoredState(
            exists=True,
            meta=record.meta,
            window=tuple(t for t in record.turns[start:] if t.seq not in record.hidden),
            knowledge=tuple(record.knowledge[-knowledge_items:] if knowledge_items > 0 else ()),
            epoch=epoch,
        )

    async def write(self, conv: Conversation, batch: WriteBatch) -> WriteResult:
        self._space.check(conv.user_id)
        for message, _ in batch.turns:
            if len(message.content.encode("utf-8", "surrogatepass")) > self.max_message_bytes:
                raise InputError(f"message {message.id} is larger than {self.max_message_bytes} bytes")
        chat_id = readable_id(raw_id(conv.chat_id))
        record = self._space.setdefault(self._key(conv), lambda: _Record(chat_id))
        seqs, added, tokens = [], 0, 0
        for message, count in batch.turns:
            seq = record.ids.get("t:" + message.id)
            if seq is None:
                record.turns.append(
                    Turn(seq=len(record.turns) + 1, tokens=count, message=copy.deepcopy(message))
                )
                seq = record.ids["t:" + message.id] = len(record.turns)
                added, tokens = added + 1, tokens + count
            seqs.append(seq)
        for message in batch.knowledge:
            if "k:" + message.id not in record.ids:
                record.ids["k:" + message.id] = 0
                record.knowledge.append(message)
                added += 1
        meta = record.meta
        update: dict[str, object] = {
            "turn_count": len(record.turns),
            "window_tokens": meta.window_tokens + tokens,
            "version": meta.version + 1,
        }
        if batch.set_last_talk:
            update["last_talk"] = batch.last_talk
        if batch.calls:
            update["calls"] = meta.calls + batch.calls
            update["usage"] = meta.usage + (batch.usage or Usage(prompt_tokens=0, completion_tokens=0))
        record.meta = meta.model_copy(update=update)
        name = f"{conversation_keys(self.prefix, conv.user_id, conv.chat_id).base}:usage"
        for row in batch.spent:
            add_usage(
                self._space,
                name,
                conv.chat_id,
                row.model,
                row.calls,
                row.prompt_tokens,
                row.completion_tokens,
            )
        return WriteResult(
            version=record.meta.version,
            seqs=tuple(seqs),
            added=added,
            window_tokens=record.meta.window_tokens,
            turn_count=len(record.turns),
        )

    async def read_turns(self, conv: Conversation, start: int, count: int) -> list[Turn]:
        record = self._get(conv)
        if record is None or count <= 0:
            return []
        turns = record.turns[max(start, 1) - 1 : max(start, 1) - 1 + count]
        return [replace(t, hidden=t.seq in record.hidden) for t in turns]

    async def turns_at(self, conv: Conversation, seqs: Sequence[int]) -> list[Turn]:
        record = self._get(conv)
        if record is None:
            return []
        held = [record.turns[s - 1] for s in seqs if 1 <= s <= len(record.turns)]
        return [replace(t, hidden=t.seq in record.hidden) for t in held]

    async def seq_of(self, conv: Conversation, message_id: str) -> int | None:
        record = self._get(conv)
        return None if record is None else record.ids.get("t:" + message_id)

    async def read_knowledge(self, conv: Conversation, start: int, count: int) -> list[Message]:
        record = self._get(conv)
        return (
            []
            if record is None or count <= 0
            else record.knowledge[max(start, 1) - 1 : max(start, 1) - 1 + count]
        )

    async def hide_turns(self, conv: Conversation, seqs: Sequence[int]) -> int:
        self._space.check(conv.user_id)
        record = self._get(conv)
        if record is None:
            raise ConflictError(f"{conv.label}: conversation does not exist")
        if any(not 1 <= s <= len(record.turns) for s in seqs):
            raise ConflictError(f"{conv.label}: no such turn among {list(seqs)}")
        tokens = sum(
            record.turns[s - 1].tokens for s in set(seqs) - record.hidden if s > record.meta.summary_upto
        )
        record.hidden |= set(seqs)
        meta = record.meta
        record.meta = meta.model_copy(
            update={"window_tokens": max(meta.window_tokens - tokens, 0), "version": meta.version + 1}
        )
        return record.meta.version

    async def drop_text(self, conv: Conversation, upto: int) -> int:
        self._space.check(conv.user_id)
        record = self._get(conv)
        if record is None:
            raise ConflictError(f"{conv.label}: conversation does not exist")
        meta = record.meta
        if upto > meta.summary_upto:
            raise ConflictError(f"{conv.label}: the summary reaches turn {meta.summary_upto}, not {upto}")
        if upto <= meta.dropped_upto:
            return 0
        for turn in record.turns[meta.dropped_upto : upto]:
            if not turn.dropped:
                record.turns[turn.seq - 1] = replace(turn, message=without_text(turn.message), dropped=True)
        record.meta = meta.model_copy(update={"dropped_upto": upto, "version": meta.version + 1})
        return upto - meta.dropped_upto

    async def commit_summary(
        self, conv: Conversation, *, summary: str, upto: int, expected_upto: int, tokens: int
    ) -> int:
        self._space.check(conv.user_id)
        record = self._get(conv)
        if record is None or record.meta.summary_upto != expected_upto:
            raise ConflictError(f"{conv.label}: the summary changed meanwhile; reload and summarize again")
        if not expected_upto <= upto <= len(record.turns):
            raise ConflictError(f"{conv.label}: summary reaches turn {upto} of {len(record.turns)}")
        meta = record.meta
        record.meta = meta.model_copy(
            update={
                "summary": summary,
                "summary_upto": upto,
                "window_tokens": max(meta.window_tokens - tokens, 0),
                "version": meta.version + 1,
            }
        )
        return record.meta.version

    async def set_title(self, conv: Conversation, title: str) -> None:
        self._space.check(conv.user_id)
        record = self._get(conv)
        if record is None:
            raise ConflictError(f"{conv.label}: conversation does not exist")
        record.meta = record.meta.model_copy(update={"title": title, "version": record.meta.version + 1})

    async def delete(self, conv: Conversation) -> bool:
        """The chat and its usage rows (as on Redis, they live and die together)."""
        base = conversation_keys(self.prefix, conv.user_id, conv.chat_id).base
        return self._space.delete(self._key(conv), f"{base}:usage") > 0

    async def list_chats(self, user_id: str | bytes) -> list[str | bytes]:
        pattern = f"{self.prefix}:{{{encode_id(user_id, 'user_id')}.*}}:chat"
        records = [self._space.get(name, _Record) for name in self._space.matching([pattern])]
        return [r.chat_id for r in records if r is not None]
