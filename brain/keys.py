"""Every Redis key and index namespace brain-assistant uses, for every tier. Pure.

User and chat ids are encoded (base64url, or a SHA-256 digest for long ids) so that no id can break a key,
match a glob, or collide with another tenant's keys. Each namespace is one hash tag (one Cluster slot):

- conversation (turns, ids, knowledge, hidden turns, meta: summary, title; usage per model): `P:{U.C}:<part>`
- recall memory of a conversation (BM25 postings, vectors): `P:{r.U.C}:<part>`
- archival memory of a user: `P:{idx.<enc("archival:" user)>}:<part>`
- core memory blocks of a scope (a user, an agent, a shared name): `P:{core.<enc(scope)>}:blocks`; a user's
  own copy of an agent's or a shared scope's blocks (`tenant_scope`) in the user's:
  `P:{core.<enc(user scope)>}:t.<enc(scope)>`
- fact memory of a user (facts, their index, hashes, audit stream): `P:{f.U}:<part>`
- block memory of a session (history FIFO, archive, block state, vectors): `P:{m.U.C}:<part>`
- procedural memory of an agent (its stored procedures, searchable): `P:{proc.<enc(agent)>}:<part>`
- a framework's key-value store (an agent framework adapter's items, searchable): `P:{kv.<enc(name)>}:<part>`
- the erasure record of a user (content-free: counters only): `P:{x.<digest>}:erased`; on Cluster, its
  copy in every erased namespace's own slot: `<namespace>:fence`
- API keys of the service (records by id, ids by secret digest): `P:{apikeys}:<part>`, and each key's
  request counter per rate window: `P:{rate.<key id>}:<window>`
- the fact queue of the deployment (its stream, its dead letters, each chat's tries): `P:{queue}:facts...`
- the cold-archive marker of a user whose memory was moved out of Redis: `P:{a.U}:archived`

An encoded id starts with `b` or `h` and never contains `.`, so the tags of different kinds, users and chats
cannot meet, and `user_patterns` finds exactly one user's keys with a SCAN.
"""

from __future__ import annotations

import base64
import functools
import hashlib

from pydantic import BaseModel, ConfigDict

from brain.errors import InputError
from brain.process_caches import remember

__all__ = [
    "ConversationKeys",
    "agent_scope",
    "api_keys_base",
    "archival_base",
    "archive_name",
    "archived_key",
    "blocks_base",
    "chat_bases",
    "check_id",
    "conversation_ids",
    "conversation_keys",
    "core_key",
    "encode_id",
    "erasure_key",
    "fact_dead_letters_key",
    "fact_overflow_key",
    "fact_queue_counts_key",
    "fact_queue_key",
    "fact_tries_key",
    "facts_base",
    "fence_key",
    "graph_base",
    "key_family",
    "legacy_recall_base",
    "log_tag",
    "namespace_base",
    "procedures_base",
    "queue_chat_field",
    "rate_key",
    "raw_id",
    "readable_id",
    "recall_base",
    "scope_field",
    "shared_scope",
    "store_base",
    "tenant_scope",
    "user_bases",
    "user_patterns",
    "user_scope",
]

_MAX_INLINE = 96  # ids longer than this (in bytes) are hashed instead of inlined


def raw_id(value: str | bytes, what: str = "id") -> bytes:
    """The bytes of an id (`"a"` and `b"a"` are the same id); `InputError` for a wrong type or size."""
    if isinstance(value, str):
        raw = value.encode("utf-8", "surrogatepass")
    elif isinstance(value, bytes):
        raw = value
    else:
        raise InputError(f"{what} must be str or bytes, not {type(value).__name__}")
    if not raw:
        raise InputError(f"{what} must not be empty")
    if len(raw) > 65_536:
        raise InputError(f"{what} is {len(raw)} bytes; ids are limited to 64 KiB")
    return raw


def check_id(value: str, what: str = "id") -> str:
    """An id as a person or a request names it (a command-line option, a URL path, a tool argument): 1 to 256
    characters, neither blank nor padded with whitespace, without '/' (ids are URL path segments) and without
    control, invisible or lone surrogate characters: every id made so can be named again everywhere. Returns
    it; `InputError` naming `what` (never echoing the value). Pure."""
    if not isinstance(value, str):
        raise InputError(f"{what} must be a string, not {type(value).__name__}")
    if not value.strip():
        raise InputError(f"{what} must not be blank")
    if value != value.strip():
        raise InputError(f"{what} must not start or end with whitespace")
    if len(value) > 256 or "/" in value:
        raise InputError(f"{what} must be at most 256 characters and hold no '/' (ids are URL path segments)")
    if not value.isprintable():
        raise InputError(f"{what} must not hold control or invisible characters or lone surrogates")
    return value


def readable_id(raw: bytes) -> str | bytes:
    """A stored raw id as callers gave it: str when it is valid UTF-8, else the bytes."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw


def encode_id(value: str | bytes, what: str = "id") -> str:
    """A key-safe, collision-free encoding of an id (`[A-Za-z0-9_-]` only, starting with b or h)."""
    if type(value) in (str, bytes) and 0 < len(value) <= 256:  # the ids every turn names again: remembered
        return _encode_short(value, what)
    return _encode(value, what)


@remember
@functools.lru_cache(maxsize=65_536)
def _encode_short(value: str | bytes, what: str) -> str:
    return _encode(value, what)


def _encode(value: str | bytes, what: str) -> str:
    raw = raw_id(value, what)
    if len(raw) <= _MAX_INLINE:
        return "b" + base64.urlsafe_b64encode(raw).decode().rstrip("=")
    return "h" + hashlib.sha256(raw).hexdigest()


class ConversationKeys(BaseModel):
    """The keys of one conversation."""

    model_config = ConfigDict(frozen=True)

    base: str

    @property
    def meta(self) -> str:
        """Hash: schema version, summary, summary_upto, counters, title, usage (and `last_talk` when an
        older version wrote it: now `pending`)."""
        return f"{self.base}:meta"

    @property
    def turns(self) -> str:
        """List of every turn ever appended, oldest first; never trimmed."""
        return f"{self.base}:turns"

    @property
    def ids(self) -> str:
        """Hash: message id -> sequence number (1-based), for idempotent appends (32-hex ids packed in
        buckets: `brain.backends.redis.conversation_scripts`)."""
        return f"{self.base}:ids"

    @property
    def knowledge(self) -> str:
        """List of knowledge records."""
        return f"{self.base}:knowledge"

    @property
    def hidden(self) -> str:
        """Set of sequence numbers of turns taken back (/pop, /retry): kept, but out of the window."""
        return f"{self.base}:hidden"

    @property
    def usage(self) -> str:
        """Hash: LLM calls and tokens spent for the chat, per model (`brain.storage.UsageStore`)."""
        return f"{self.base}:usage"

    @property
    def pending(self) -> str:
        """String: the pending user text of a turn in progress (`last_talk`); deleted when it is done."""
        return f"{self.base}:pending"

    @functools.cached_property
    def all(self) -> tuple[str, str, str, str, str, str, str]:
        return (self.meta, self.turns, self.ids, self.knowledge, self.hidden, self.usage, self.pending)


def conversation_keys(prefix: str, user_id: str | bytes, chat_id: str | bytes) -> ConversationKeys:
    """Keys of (user_id, chat_id) under `prefix` (e.g. `brain`), hash-tagged per conversation: one frozen
    value per chat for the ids every turn names again (`encode_id`'s)."""
    if type(user_id) in (str, bytes) and type(chat_id) in (str, bytes) and len(user_id) + len(chat_id) <= 256:
        return _chat_keys(prefix, user_id, chat_id)
    return _conversation_keys(prefix, user_id, chat_id)


@remember
@functools.lru_cache(maxsize=16_384)
def _chat_keys(prefix: str, user_id: str | bytes, chat_id: str | bytes) -> ConversationKeys:
    return _conversation_keys(prefix, user_id, chat_id)


def _conversation_keys(prefix: str, user_id: str | bytes, chat_id: str | bytes) -> ConversationKeys:
    user = encode_id(user_id, "user_id")
    chat = encode_id(chat_id, "chat_id")
    return ConversationKeys(base=f"{prefix}:{{{user}.{chat}}}")


def conversation_ids(base: str, prefix: str) -> tuple[str | bytes, str | bytes] | None:
    """The (user_id, chat_id) whose `conversation_keys(prefix, ...).base` is `base`; None for any other
    text, and for a base naming a long id (those are hashed, not encoded). Pure."""
    head, tail = f"{prefix}:{{", "}"
    if not (base.startswith(head) and base.endswith(tail)):
        return None
    user, _, chat = base[len(head) : -len(tail)].partition(".")
    try:
        user_id, chat_id = _decode_id(user), _decode_id(chat)
        found = conversation_keys(prefix, user_id, chat_id).base == base
    except (ValueError, InputError):
        return None
    return (user_id, chat_id) if found else None


def _decode_id(encoded: str) -> str | bytes:
    """The id an inlined `encode_id` result stands for (`ValueError` for anything else)."""
    if not encoded.startswith("b"):
        raise ValueError("not an inlined id")
    return readable_id(base64.urlsafe_b64decode(encoded[1:] + "=" * (-len(encoded[1:]) % 4)))


def recall_base(prefix: str, user_id: str | bytes, chat_id: str | bytes) -> str:
    """Namespace of the recall index (every past turn, searchable) of one conversation."""
    return f"{prefix}:{{r.{encode_id(user_id, 'user_id')}.{encode_id(chat_id, 'chat_id')}}}"


def legacy_recall_base(prefix: str, user_id: str | bytes, chat_id: str | bytes) -> str:
    """Where brain-assistant 0.1 kept a chat's recall index (`recall:{user}:{chat}`, which two chats could
    share). Nothing is written there any more; erasure still removes what is left."""
    raw = b"recall:" + raw_id(user_id, "user_id") + b":" + raw_id(chat_id, "chat_id")
    return f"{prefix}:{{idx.{encode_id(raw, 'namespace')}}}"


def facts_base(prefix: str, user_id: str | bytes) -> str:
    """Namespace of a user's fact memory: the facts, their search index, content hashes, the audit stream."""
    return f"{prefix}:{{f.{encode_id(user_id, 'user_id')}}}"


def graph_base(prefix: str, user_id: str | bytes) -> str:
    """Namespace of a user's graph memory (entities, relations): inside fact memory's hash tag, so one
    script writes a relation and its event in the facts' audit stream, on Cluster too."""
    return f"{facts_base(prefix, user_id)}:g"


def blocks_base(prefix: str, user_id: str | bytes, chat_id: str | bytes) -> str:
    """Namespace of one session's memory blocks (`memory.mode: blocks` and `BlockMemory`)."""
    return f"{prefix}:{{m.{encode_id(user_id, 'user_id')}.{encode_id(chat_id, 'chat_id')}}}"


def procedures_base(prefix: str, agent: str | bytes) -> str:
    """Namespace of an agent's procedural memory (summaries of its past runs, searchable by task)."""
    return f"{prefix}:{{proc.{encode_id(agent, 'agent name')}}}"


def fact_queue_key(prefix: str) -> str:
    """The stream of turns waiting for fact extraction (one per deployment, read by a consumer group)."""
    return f"{prefix}:{{queue}}:facts"


def fact_dead_letters_key(prefix: str) -> str:
    """The hash of the fact queue's dead letters: dead letter id -> its record (who, which turns, why, when,
    after how many tries). In the queue stream's slot: a batch is parked and its entries acknowledged in
    one script."""
    return f"{fact_queue_key(prefix)}:dead"


def fact_tries_key(prefix: str) -> str:
    """The hash of how many times each chat's pending batch failed with a malformed reply
    (`queue_chat_field` -> count), in the queue stream's slot."""
    return f"{fact_queue_key(prefix)}:tries"


def fact_overflow_key(prefix: str) -> str:
    """The hash of the chats whose turns came while the fact queue was full (`queue_chat_field` -> "<upto>
    <user b64> <chat b64>", one per chat, the highest `upto`), moved into the stream as room frees up; in the
    queue stream's slot."""
    return f"{fact_queue_key(prefix)}:overflow"


def fact_queue_counts_key(prefix: str) -> str:
    """The hash of the fact queue's counters (`deferred`, `dropped`, `dead_trimmed`: how often the bounds
    acted, since the deployment began), in the queue stream's slot."""
    return f"{fact_queue_key(prefix)}:counts"


def queue_chat_field(user_id: str | bytes, chat_id: str | bytes | None = None) -> str:
    """A chat's field in the fact queue's per-chat hashes: `<user digest>.<chat digest>`, content-free (it
    spells neither id). With no `chat_id`, the prefix every field of the user's chats starts with (for
    HSCAN MATCH `<prefix>*`: digests are hex, never glob characters). Pure."""
    user = _digest(raw_id(user_id, "user_id")) + "."
    return user if chat_id is None else user + _digest(raw_id(chat_id, "chat_id"))


def log_tag(user_id: str | bytes, chat_id: str | bytes | None = None) -> str:
    """A short, content-free name of a user (and chat) for log lines: `u<digest>` or `u<digest>/c<digest>`,
    12 hex digits each, the same in every process; never the ids themselves. Pure."""
    user = "u" + _digest(raw_id(user_id, "user_id"))[:12]
    return user if chat_id is None else f"{user}/c{_digest(raw_id(chat_id, 'chat_id'))[:12]}"


def api_keys_base(prefix: str) -> str:
    """Namespace of the service's API keys (one hash tag: a key and its digest change in one transaction).
    Not a user's namespace: a whole user's erasure deletes their keys there (`ApiKeyStore.forget`)."""
    return f"{prefix}:{{apikeys}}"


def rate_key(prefix: str, key_id: str, window: int) -> str:
    """The request counter of one API key in one rate window (a key id is hex: nothing to encode)."""
    if not key_id.isalnum():
        raise InputError(f"bad API key id {key_id!r}")
    return f"{prefix}:{{rate.{key_id}}}:{window}"


def archival_base(prefix: str, user_id: str | bytes) -> str:
    """Namespace of a user's archival memory (passages and loaded documents)."""
    return f"{prefix}:{{idx.{encode_id(b'archival:' + raw_id(user_id, 'user_id'), 'user_id')}}}"


def store_base(prefix: str, name: str | bytes) -> str:
    """Namespace of the key-value store `name` of an agent framework adapter (`roles.integrations`): one
    search index holding every item of that store (one Cluster slot)."""
    return f"{prefix}:{{kv.{encode_id(name, 'store name')}}}"


def archived_key(prefix: str, user_id: str | bytes) -> str:
    """The hash marking a user whose memory is (being) moved to the cold archive: its state and the
    archive's name (`brain.backends.redis.archive`). Among the user's keys (`user_patterns`)."""
    return f"{prefix}:{{a.{encode_id(user_id, 'user_id')}}}:archived"


def archive_name(prefix: str, user_id: str | bytes) -> str:
    """The name of a user's file in the cold archive: a digest of the prefix and the id (it spells neither),
    the same in every process, so that an erasure finds it even without the marker. Pure."""
    raw = prefix.encode() + b"\x00" + raw_id(user_id, "user_id")
    return f"u{hashlib.sha256(raw).hexdigest()[:40]}.brain-archive"


def user_scope(user_id: str | bytes) -> bytes:
    """The core-memory scope of a user's own blocks (e.g. `human`)."""
    return b"user:" + raw_id(user_id, "user_id")


def agent_scope(name: str) -> bytes:
    """The core-memory scope of an agent's own blocks (e.g. `persona`)."""
    return b"agent:" + raw_id(name, "agent name")


def shared_scope(name: str) -> bytes:
    """The core-memory scope of a block several agents or users share (configured by name)."""
    return b"shared:" + raw_id(name, "shared block scope")


def tenant_scope(user_id: str | bytes, scope: bytes) -> bytes:
    """The core-memory scope of one user's own copy of the blocks of `scope` (an `agent_scope` or a
    `shared_scope`): its key is among the user's keys (`core_key`, `user_patterns`)."""
    user = raw_id(user_id, "user_id")
    return b"tenant:%d:" % len(user) + user + b":" + raw_id(scope, "scope")


def _tenant_parts(scope: str | bytes) -> tuple[bytes, bytes] | None:
    """(user id, scope) of a `tenant_scope`, exactly as it builds them; None for any other scope."""
    raw = raw_id(scope, "scope")
    if not raw.startswith(b"tenant:"):
        return None
    size, _, rest = raw[7:].partition(b":")
    if not (0 < len(size) <= 5 and size.isdigit()):
        return None
    user, base = rest[: int(size)], rest[int(size) + 1 :]
    if not (user and base) or tenant_scope(user, base) != raw:
        return None
    return user, base


def core_key(prefix: str, scope: str | bytes) -> str:
    """The hash of one core-memory scope's blocks; a `tenant_scope`'s hash is in its user's namespace."""
    tenant = _tenant_parts(scope)
    if tenant is not None:
        user, base = tenant
        return f"{prefix}:{{core.{encode_id(user_scope(user), 'scope')}}}:t.{encode_id(base, 'scope')}"
    return f"{prefix}:{{core.{encode_id(scope, 'scope')}}}:blocks"


def user_patterns(prefix: str, user_id: str | bytes) -> tuple[str, ...]:
    """SCAN patterns matching every key of one user and no other user's: conversations, recall indexes,
    archival memory, the user's core blocks and the cold-archive marker."""
    user = encode_id(user_id, "user_id")
    return (
        f"{prefix}:{{{user}.*",
        f"{prefix}:{{r.{user}.*",
        f"{prefix}:{{m.{user}.*",
        f"{archival_base(prefix, user_id)}:*",
        f"{facts_base(prefix, user_id)}:*",
        core_key(prefix, user_scope(user_id)),
        f"{prefix}:{{core.{encode_id(user_scope(user_id), 'scope')}}}:t.*",  # tenant_scope copies
        archived_key(prefix, user_id),
    )


def _digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()[:32]


@remember
@functools.lru_cache(maxsize=65_536)  # read by every write of a turn
def erasure_key(prefix: str, user_id: str | bytes) -> str:
    """The hash recording a user's erasures: `n` (how many so far; a ticket is its value when work begins),
    `*` (n at the last whole-user erasure) and one `scope_field` per erased chat. Named by a digest, not by
    the id: the only entry left of an erased user is content-free and does not spell their id."""
    return f"{prefix}:{{x.{_digest(raw_id(user_id, 'user_id'))}}}:erased"


@remember
@functools.lru_cache(maxsize=65_536)
def scope_field(chat_id: str | bytes | None) -> str:
    """The erasure record's field of one chat (`*` for the whole user, with None). Pure."""
    return "*" if chat_id is None else "c:" + _digest(raw_id(chat_id, "chat_id"))


def fence_key(base: str) -> str:
    """A namespace's copy of its user's erasure record, in the namespace's own Cluster slot (written by an
    erasure on Cluster, where a script cannot read another slot)."""
    return f"{base}:fence"


def namespace_base(key: str) -> str:
    """The namespace (`P:{tag}`) a key of `brain.keys` belongs to. Pure."""
    end = key.find("}")
    if key.find("{") < 0 or end < 0:
        raise InputError(f"{key!r} is not a brain-assistant key")
    return key[: end + 1]


_KINDS = (
    ("r.", "recall"),
    ("m.", "blocks"),
    ("f.", "facts"),
    ("idx.", "archival"),
    ("core.", "core"),
    ("proc.", "procedures"),
    ("kv.", "store"),
    ("queue", "queue"),
    ("apikeys", "api keys"),
    ("rate.", "rate limits"),
    ("x.", "erasure"),
    ("a.", "archive"),
)
_INDEX_PARTS = {"docs": "documents", "num": "documents", "len": "postings", "post": "postings",
                "lens": "postings", "ts": "postings", "tag": "postings", "time": "postings",
                "stats": "postings", "vec": "vectors", "vseq": "vectors"}  # fmt: skip


@remember
@functools.lru_cache(maxsize=65_536)  # read each time a namespace's index is opened (several per turn)
def key_family(key: str) -> str:
    """What a key of `brain.keys` holds, for storage accounting: its namespace's kind (`conversation`,
    `recall`, `archival`, `facts`, `graph`, `blocks`, `core`, `procedures`, `queue`, ...) and, inside a
    search index, the part (`recall.postings`, `facts.vectors`, `archival.documents`; `facts.audit`).
    `other` for a key of no namespace. Pure."""
    start, end = key.find("{"), key.find("}")
    if start < 0 or end < start:
        return "other"
    tag, part = key[start + 1 : end], key[end + 2 :].split(":", 1)[0]
    kind = next((name for mark, name in _KINDS if tag.startswith(mark)), "conversation")
    if kind == "facts" and part == "g":
        return "graph"
    if kind == "facts" and part == "audit":
        return "facts.audit"
    if kind in {"recall", "archival", "facts", "procedures", "store"} and part in _INDEX_PARTS:
        return f"{kind}.{_INDEX_PARTS[part]}"
    return "fences" if part == "fence" else kind


def chat_bases(prefix: str, user_id: str | bytes, chat_id: str | bytes) -> tuple[str, ...]:
    """Every namespace of one chat: the conversation, its recall index, its block memory."""
    return (
        conversation_keys(prefix, user_id, chat_id).base,
        recall_base(prefix, user_id, chat_id),
        blocks_base(prefix, user_id, chat_id),
    )


def user_bases(prefix: str, user_id: str | bytes) -> tuple[str, ...]:
    """The namespaces of a user as a whole: facts and graph, archival memory, core blocks (own copies too)."""
    return (
        facts_base(prefix, user_id),
        archival_base(prefix, user_id),
        namespace_base(core_key(prefix, user_scope(user_id))),
    )
