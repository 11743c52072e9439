"""How a conversation's records look in Redis (`brain.backends.redis.conversation`). Pure.

Turn records are `{"v":1,"tok":n,"msg":{...}}` with the message's default-valued fields left out: any reader
of schema 1 fills them in, and the records of older versions, which wrote every field, read the same. Ids
of 32 hex digits are packed in the ids hash (`brain.backends.redis.conversation_scripts`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from brain.backends.redis.packed_ids import hex_bytes
from brain.errors import StoreError
from brain.keys import ConversationKeys
from brain.llm.usage import Usage
from brain.message import SCHEMA_VERSION, Message
from brain.process_caches import remember
from brain.storage.conversation import ConversationMeta, Turn

__all__ = [
    "KNOWLEDGE",
    "KnowledgeRecord",
    "bucket_seq",
    "knowledge_record",
    "message_json",
    "packed_id",
    "parse",
    "parse_meta",
    "parse_turns",
    "remember_written",
    "turn_record",
]


class TurnRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    v: int
    tok: int
    msg: Message
    dropped: bool = False  # retention dropped its text (`conversation_scripts.DROP_TEXT`)


class KnowledgeRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    v: int
    msg: Message


TURNS = TypeAdapter(list[TurnRecord])
KNOWLEDGE = TypeAdapter(list[KnowledgeRecord])


def packed_id(message_id: str) -> bytes:
    """How the ids hash keeps a message id of 32 lowercase hex digits: its 16 bytes (b"" for any other id,
    kept as text). Pure."""
    return hex_bytes(message_id)


def bucket_seq(bucket: bytes | None, packed: bytes) -> int | None:
    """The sequence number of `packed` in an ids-hash bucket (16-byte id, 4-byte big-endian sequence
    number, repeated), None when it is not there. Pure."""
    at = 0
    while bucket and packed:
        at = bucket.find(packed, at)
        if at < 0:
            return None
        if at % 20 == 0:
            return int.from_bytes(bucket[at + 16 : at + 20], "big")
        at += 1
    return None


_DEFAULTS = tuple(
    (name, info.default)
    for name, info in Message.model_fields.items()
    if not info.is_required() and info.default_factory is None
)
_EMPTY = tuple(name for name, info in Message.model_fields.items() if info.default_factory in (dict, list))
_SERIALIZER = Message.__pydantic_serializer__


def message_json(message: Message) -> bytes:
    """`message` as records keep it: the JSON of `model_dump_json(exclude_defaults=True)`, byte for byte,
    without calling the id's and the time's default factories (which that compares with: a random id and
    a clock read a record). Pure."""
    values = message.__dict__
    left = {name for name, default in _DEFAULTS if values[name] == default}
    left.update(name for name in _EMPTY if not values[name])
    return _SERIALIZER.to_json(message, exclude=left)  # a subclass's own fields are not Message's: left out


def knowledge_record(message: Message) -> bytes:
    """A knowledge item as the knowledge list keeps it (a `KnowledgeRecord`): default-valued message
    fields left out."""
    return b'{"v":%d,"msg":%s}' % (SCHEMA_VERSION, message_json(message))


def turn_record(message: Message, tokens: int) -> bytes:
    """A turn as the turns list keeps it (a `TurnRecord`, not dropped): default-valued message fields left
    out."""
    return b'{"v":%d,"tok":%d,"msg":%s}' % (SCHEMA_VERSION, tokens, message_json(message))


def parse_meta(
    keys: ConversationKeys, raw: list[bytes], turn_count: int, pending: bytes | None = None
) -> ConversationMeta:
    fields = {raw[i].decode(): raw[i + 1] for i in range(0, len(raw), 2)}
    try:
        version = int(fields.get("v", b"0"))
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{keys.meta} was written with schema version {version}; this brain-assistant reads up to "
                f"{SCHEMA_VERSION}: upgrade it"
            )
        if version < 1:
            raise ValueError("no schema version")
        return ConversationMeta(
            summary=fields.get("summary", b"").decode(),
            summary_upto=int(fields.get("summary_upto", b"0")),
            turn_count=turn_count,
            window_tokens=int(fields.get("window_tokens", b"0")),
            version=int(fields.get("version", b"0")),
            last_talk=pending.decode() if pending is not None else _legacy_talk(fields),
            title=fields.get("title", b"").decode(),
            calls=int(fields.get("usage_calls", b"0")),
            dropped_upto=int(fields.get("dropped_upto", b"0")),
            usage=Usage(
                prompt_tokens=int(fields.get("usage_prompt_tokens", b"0")),
                completion_tokens=int(fields.get("usage_completion_tokens", b"0")),
            ),
        )
    except (ValueError, UnicodeDecodeError, ValidationError) as exc:
        raise StoreError(f"corrupt record in {keys.meta}: {exc}; it was left as it is") from exc


def _legacy_talk(fields: dict[str, bytes]) -> str | None:
    """The pending text an older version kept in the meta hash."""
    return fields["last_talk"].decode() if "last_talk" in fields else None


# Parsed turns by their record's exact bytes (a turn found at another place gets that place's sequence
# number). A chat's window is read again on every turn, mostly unchanged; records are immutable and keyed by
# their whole content, and turns are frozen, so sharing them between calls and tenants gives each caller
# exactly what its own bytes hold. Emptied with the process's other caches of text (`brain.process_caches`:
# on an erasure, and by age). Bounded: cleared when full, by count or by the records' bytes (a message may
# be 1 MB: 20,000 long ones would hold gigabytes). Every cached turn is a few objects the garbage
# collector's full collections go over: at 50,000 a long-lived library process under Python's default
# collector spent ~12% more CPU a turn than at 20,000 (benchmarks/concurrency.py run 12 times in one
# process), which still holds the windows of 500 chats.
_PARSED_MAX = 20_000
_PARSED_BYTES = 64 * 2**20


@dataclass(slots=True, weakref_slot=True, eq=False)
class _ParsedTurns:
    turns: dict[bytes, Turn] = field(default_factory=dict)  # by the record's bytes: the turn where first read
    size: int = 0  # the bytes of the records held

    def cache_clear(self) -> None:
        self.turns.clear()
        self.size = 0


_PARSED = remember(_ParsedTurns())


def parse_turns(key: str, raw: list[bytes], offset: int) -> list[Turn]:
    """The turns of `raw` (records at sequence numbers `offset + 1`, …), parsed or as held."""
    held = _PARSED.turns.get
    turns: list[Turn | None] = []
    missing: list[int] = []
    seq = offset
    for record in raw:
        seq += 1
        turn = held(record)
        if turn is None:
            missing.append(len(turns))
        elif turn.seq != seq:  # the same record at another place (another chat's): there, its own
            turn = replace(turn, seq=seq)
        turns.append(turn)
    if missing:
        try:
            parsed: list[TurnRecord] = parse(TURNS, key, [raw[i] for i in missing], offset)
        except StoreError:
            parse(TURNS, key, raw, offset)  # the same error, naming the record's real index
            raise
        for i, r in zip(missing, parsed, strict=True):
            turns[i] = Turn(offset + 1 + i, r.tok, r.msg, dropped=r.dropped)
        _keep([(raw[i], turns[i]) for i in missing])  # type: ignore[misc]  # filled above
    return turns  # type: ignore[return-value]  # every one filled


def remember_written(written: Sequence[tuple[bytes, int, Message]], seqs: Sequence[int]) -> None:
    """The turns a write stored (each `(record, tokens, message)`, at `seqs`), kept as `parse_turns`
    keeps what it parses: the chat's next load reads those records back and finds them here, not parsing
    them again. A message whose record would not give it back as it is (one with metadata: a tuple in
    it comes back a list) is left to be parsed."""
    _keep(
        [
            (record, Turn(seq, tokens, message))
            for (record, tokens, message), seq in zip(written, seqs, strict=True)
            if not message.metadata
        ]
    )


def _keep(entries: list[tuple[bytes, Turn]]) -> None:
    cache = _PARSED
    size = sum(len(record) for record, _ in entries)
    if not entries or size > _PARSED_BYTES:  # more than the whole cache may hold: none of it is kept
        return
    if len(cache.turns) + len(entries) > _PARSED_MAX or cache.size + size > _PARSED_BYTES:
        cache.cache_clear()
    cache.size += size
    cache.turns.update(entries)


def parse(adapter: TypeAdapter[Any], key: str, raw: list[bytes], offset: int = 0) -> list[Any]:
    """Parse all records in one call; on failure, find and name the bad one."""
    try:
        records: list[Any] = adapter.validate_json(b"[" + b",".join(raw) + b"]")
    except (ValidationError, ValueError):
        for i, item in enumerate(raw):
            try:
                adapter.validate_json(b"[" + item + b"]")
            except (ValidationError, ValueError) as exc:
                raise StoreError(
                    f"corrupt record in {key} at index {offset + i}: {_first_error(exc)}; "
                    "it was left as it is"
                ) from exc
        raise StoreError(f"corrupt records in {key}; they were left as they are") from None
    for i, record in enumerate(records):
        if record.v > SCHEMA_VERSION:
            raise StoreError(
                f"record in {key} at index {offset + i} has schema version {record.v}; "
                f"this brain-assistant reads up to {SCHEMA_VERSION}: upgrade it"
            )
    return records


def _first_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        err = exc.errors()[0]
        return f"{'.'.join(map(str, err['loc'][1:])) or 'record'}: {err['msg']}"
    return str(exc)[:200]
