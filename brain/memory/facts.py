"""Fact memory: what a user told us that stays true until it changes. Stored per user under one hash tag
(`brain.keys.facts_base`): the facts, a content-hash index, a BM25 (+ vector) search index, and an audit
stream. Nothing is ever hard-deleted: a fact that changes or stops being true is retired (`expired_at`,
`invalid_at`, `superseded_by`) and stays readable for history and "as of" questions. Every change is one Lua
call that also appends its audit event, so the record and its audit never disagree.
"""

from __future__ import annotations

import hashlib
import json
import time
import unicodedata
import uuid
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from redis.exceptions import RedisError, ResponseError

from brain.errors import ConflictError, InputError, StoreError
from brain.keys import encode_id, facts_base
from brain.llm.protocol import Embed, embed_one
from brain.memory.fact_scripts import ADD, RESTORE, RETIRE
from brain.search.index import IndexedDoc, IndexScripts, SearchIndex
from brain.store.connection import RedisClient
from brain.telemetry import TracedScript

__all__ = ["AuditEvent", "Fact", "FactStore", "audit_fields", "fact_hash", "held_at"]

Event = Literal["ADD", "UPDATE", "DELETE", "ROLLBACK"]


def fact_hash(text: str) -> str:
    """Hash of a fact's normalized text (NFKC, case-folded, spaces collapsed, end punctuation dropped)."""
    norm = " ".join(unicodedata.normalize("NFKC", text).casefold().split()).rstrip(".!?。！？ ")
    return hashlib.sha256(norm.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def held_at(
    when: float, valid_at: float | None, invalid_at: float | None, created_at: float, expired_at: float | None
) -> bool:
    """Whether something bi-temporal held at `when`: from when it became true (or, unknown, when we learned
    it) until it stopped (or, unknown, until we retired it). Pure."""
    start = valid_at if valid_at is not None else created_at
    end = invalid_at if invalid_at is not None else expired_at
    return start <= when and (end is None or when < end)


def audit_fields(event: str, actor: str, reason: str, source: Sequence[str], **extra: str) -> list[str]:
    """An audit event's fields as the scripts take them (name, value, …); facts' and graph relations' events
    share the stream and this shape."""
    fields = {"event": event, "actor": actor, "reason": reason, "source_turns": json.dumps(list(source))}
    return [part for key, value in {**fields, **extra}.items() for part in (key, value)]


class Fact(BaseModel):
    """One fact. `valid_at`/`invalid_at`: when it is true in the world (as far as the conversation says);
    `created_at`/`expired_at`: when we learned it and when we retired it (seconds since the epoch)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(default_factory=lambda: uuid.uuid4().hex, min_length=1, max_length=64)
    text: str = Field(min_length=1, max_length=4_000)
    category: str = "misc"
    agent_id: str | None = None
    run_id: str | None = None
    valid_at: float | None = None
    invalid_at: float | None = None
    created_at: float = Field(default_factory=time.time)
    expired_at: float | None = None
    superseded_by: str | None = None
    source_turns: tuple[str, ...] = ()
    hash: str = ""

    @property
    def current(self) -> bool:
        """Not retired."""
        return self.expired_at is None

    def true_at(self, when: float) -> bool:
        """Whether the fact held at `when`, as far as we know now."""
        return held_at(when, self.valid_at, self.invalid_at, self.created_at, self.expired_at)


class AuditEvent(BaseModel):
    """One change to fact memory, as the audit stream keeps it."""

    model_config = ConfigDict(frozen=True)

    id: str  # the stream entry id
    event: Event
    fact_id: str
    old_fact_id: str = ""
    old_text: str = ""
    new_text: str = ""
    actor: str = ""
    reason: str = ""
    source_turns: tuple[str, ...] = ()
    at: float = 0.0
    undoes: str = ""  # for ROLLBACK: the event it undid
    subject: Literal["fact", "relation"] = "fact"  # relation events: `fact_id` is a graph relation's id


class FactStore:
    """Users' facts in Redis (the client is injected). Every write is atomic with its audit event."""

    def __init__(
        self,
        client: RedisClient,
        *,
        prefix: str = "brain",
        embed: Embed | None = None,
        scripts: IndexScripts | None = None,
    ) -> None:
        self._client = client
        self.prefix = prefix
        self.embed = embed
        self._add = TracedScript(client.register_script(ADD), "facts.add")
        self._retire = TracedScript(client.register_script(RETIRE), "facts.retire")
        self._restore = TracedScript(client.register_script(RESTORE), "facts.restore")
        self._scripts = scripts or IndexScripts(client)

    def _key(self, user_id: str | bytes, part: str) -> str:
        return f"{facts_base(self.prefix, user_id)}:{part}"

    def _keys(self, user_id: str | bytes) -> list[str]:
        """The keys every fact script takes: facts, state, hashes, audit."""
        return [self._key(user_id, part) for part in ("facts", "state", "hash", "audit")]

    def index(self, user_id: str | bytes) -> SearchIndex:
        return SearchIndex(self._client, facts_base(self.prefix, user_id), scripts=self._scripts)

    async def _call(self, what: str, script: Any, user_id: str | bytes, args: list[Any]) -> Any:
        try:
            return await script(keys=self._keys(user_id), args=args)
        except ResponseError as exc:
            if "BRAIN_MISSING" in str(exc):
                raise InputError(f"{what}: there is no fact {args[0]!r}") from None
            if "BRAIN_RETIRED" in str(exc):
                raise ConflictError(f"{what}: fact {args[3]!r} was retired meanwhile") from None
            raise StoreError(f"{what} failed: {exc}") from exc
        except (RedisError, OSError) as exc:
            raise StoreError(f"{what} failed: {type(exc).__name__}: {exc}") from exc

    async def add(
        self, user_id: str | bytes, fact: Fact, *, actor: str = "", reason: str = "", replaces: str = ""
    ) -> tuple[Fact, bool]:
        """Store `fact` (retiring `replaces`, when given, as superseded by it). Returns the stored fact and
        whether it is new: a current fact with the same normalized text is returned instead (no change)."""
        fact = fact.model_copy(update={"hash": fact_hash(fact.text)})
        event = "UPDATE" if replaces else "ADD"
        audit = audit_fields(
            event, actor, reason, fact.source_turns, new_text=fact.text, old_fact_id=replaces
        )
        args = [fact.id, fact.model_dump_json(), fact.hash, replaces, repr(fact.created_at), *audit]
        existing, _ = await self._call("adding a fact", self._add, user_id, args)
        if existing:
            same = await self.get(user_id, existing.decode() if isinstance(existing, bytes) else existing)
            if same is None:
                raise StoreError(f"fact hash index points at a missing fact {existing!r}")
            return same, False
        doc = IndexedDoc(id=fact.id, text=fact.text, tags=(fact.category,), ts=fact.created_at)
        await self.index(user_id).add(doc, await embed_one(self.embed, fact.text))
        return fact, True

    async def retire(
        self,
        user_id: str | bytes,
        fact_id: str,
        *,
        actor: str = "",
        reason: str = "",
        source: Sequence[str] = (),
    ) -> bool:
        """Retire a current fact (it stops being true now); False when it was retired already."""
        audit = audit_fields("DELETE", actor, reason, source)
        return bool(
            await self._call("retiring a fact", self._retire, user_id, [fact_id, repr(time.time()), *audit])
        )

    async def get(self, user_id: str | bytes, fact_id: str) -> Fact | None:
        facts = await self.get_many(user_id, [fact_id])
        return facts[0] if facts else None

    async def get_many(self, user_id: str | bytes, ids: Sequence[str]) -> list[Fact]:
        if not ids:
            return []
        facts_key, state_key = self._keys(user_id)[:2]
        try:
            async with self._client.pipeline(transaction=False) as pipe:
                pipe.hmget(facts_key, list(ids))
                pipe.hmget(state_key, list(ids))
                raw, states = await pipe.execute()
        except (RedisError, OSError) as exc:
            raise StoreError(f"reading facts failed: {exc}") from exc
        return [_parse(r, s) for r, s in zip(raw, states, strict=True) if r is not None]

    async def all(self, user_id: str | bytes, *, current_only: bool = True) -> list[Fact]:
        """Every fact of the user (current ones only by default), oldest first."""
        facts_key, state_key = self._keys(user_id)[:2]
        try:
            raw = await self._client.hgetall(facts_key)
            states = await self._client.hgetall(state_key)
        except (RedisError, OSError) as exc:
            raise StoreError(f"reading facts failed: {exc}") from exc
        facts = sorted((_parse(v, states.get(k)) for k, v in raw.items()), key=lambda f: (f.created_at, f.id))
        return [f for f in facts if f.current or not current_only]

    async def search(
        self,
        user_id: str | bytes,
        query: str,
        *,
        limit: int = 10,
        as_of: float | None = None,
        category: str | None = None,
        vector: Sequence[float] | None = None,
        linked: Sequence[str] = (),
    ) -> list[Fact]:
        """Facts matching `query` (BM25, fused with vectors when embeddings are on; `vector` is the query's
        embedding when the caller has it): current ones, or the ones true at `as_of`; best first. None for
        a query with nothing to search for. `linked` facts (e.g. from graph memory) are raised."""
        if vector is None:
            vector = await embed_one(self.embed, query)
        hits = await self.index(user_id).related(
            query,
            tags=[category] if category else (),
            limit=max(limit * 2, 10),
            vector=vector,
            ids_only=vector is None and not linked,
            linked=linked,
        )
        facts = {f.id: f for f in await self.get_many(user_id, [h.doc.id for h in hits])}
        found = [facts[h.doc.id] for h in hits if h.doc.id in facts]
        return [f for f in found if (f.true_at(as_of) if as_of is not None else f.current)][:limit]

    async def by_hash(self, user_id: str | bytes, hashes: Sequence[str]) -> dict[str, str]:
        """Current fact ids by content hash, for the hashes that have one: a current fact's own text, or a
        wording `alias`ed to a current fact."""
        if not hashes:
            return {}
        _, state, own, _ = self._keys(user_id)
        try:
            pipe = self._client.pipeline(transaction=False)
            pipe.hmget(own, list(hashes))
            pipe.hmget(self._key(user_id, "alias"), list(hashes))
            direct, aliased = await pipe.execute()
            found = {h: r for h, r in zip(hashes, direct, strict=True) if r}
            alias = {h: a for h, a in zip(hashes, aliased, strict=True) if a and h not in found}
            if alias:
                retired = await self._client.hmget(state, list(alias.values()))
                found.update({h: a for (h, a), r in zip(alias.items(), retired, strict=True) if not r})
        except (RedisError, OSError) as exc:
            raise StoreError(f"reading fact hashes failed: {exc}") from exc
        return {h: (r.decode() if isinstance(r, bytes) else r) for h, r in found.items()}

    async def alias(self, user_id: str | bytes, text: str, fact_id: str) -> None:
        """Remember that `text` says what fact `fact_id` says: while that fact is current, the same
        wording again is an exact duplicate (no LLM call)."""
        key = self._key(user_id, "alias")
        try:
            await self._client.hset(key, fact_hash(text), fact_id)
        except (RedisError, OSError) as exc:
            raise StoreError(f"writing a fact alias failed: {exc}") from exc

    async def batch_facts(self, user_id: str | bytes, batch: str) -> list[str] | None:
        """The facts a batch with content hash `batch` gave when it was last applied (None: never)."""
        key = self._key(user_id, "batches")
        try:
            raw = await self._client.hget(key, batch)
        except (RedisError, OSError) as exc:
            raise StoreError(f"reading fact batches failed: {exc}") from exc
        return None if raw is None else list(json.loads(raw))

    async def set_batch_facts(self, user_id: str | bytes, batch: str, fact_ids: Sequence[str]) -> None:
        key = self._key(user_id, "batches")
        try:
            await self._client.hset(key, batch, json.dumps(sorted(set(fact_ids))))
        except (RedisError, OSError) as exc:
            raise StoreError(f"writing fact batches failed: {exc}") from exc

    async def history(self, user_id: str | bytes, fact_id: str | None = None) -> list[AuditEvent]:
        """The audit events of one fact (or of all), oldest first."""
        try:
            entries = await self._client.xrange(self._keys(user_id)[3]) or []
        except (RedisError, OSError) as exc:
            raise StoreError(f"reading the fact audit failed: {exc}") from exc
        events = [_event(entry_id or b"0-0", fields or {}) for entry_id, fields in entries]
        return events if fact_id is None else [e for e in events if fact_id in (e.fact_id, e.old_fact_id)]

    async def rollback(self, user_id: str | bytes, event_id: str, *, actor: str = "") -> list[AuditEvent]:
        """Undo one change, itself audited (ROLLBACK events, returned): an ADD retires the fact, an UPDATE
        retires the new fact and restores the old one, a DELETE restores the fact."""
        event = next((e for e in await self.history(user_id) if e.id == event_id), None)
        if event is None:
            raise InputError(f"there is no fact event {event_id!r}")
        await self.undo(user_id, event, actor=actor)
        return [e for e in await self.history(user_id) if e.event == "ROLLBACK" and e.undoes == event_id]

    async def undo(self, user_id: str | bytes, event: AuditEvent, *, actor: str = "") -> None:
        """Undo `event` (one of the user's, as `history` gave it), audited; what `rollback` does once the
        event is found."""
        if event.subject == "relation":
            raise InputError(f"event {event.id} changed the graph: undo it with GraphStore.rollback")
        if event.event == "ROLLBACK":
            raise ConflictError(
                "a rollback is not undone by another rollback; undo the original change again"
            )
        audit = audit_fields("ROLLBACK", actor, f"rollback of {event.id}", (), undoes=event.id)
        if event.event in {"ADD", "UPDATE"}:
            await self._call(
                "rolling back", self._retire, user_id, [event.fact_id, repr(time.time()), *audit]
            )
        if event.event in {"UPDATE", "DELETE"}:
            target = event.old_fact_id if event.event == "UPDATE" else event.fact_id
            if await self._call("rolling back", self._restore, user_id, [target, *audit]) < 0:
                raise ConflictError(f"fact {target} cannot come back: another current fact says the same")

    async def progress(self, user_id: str | bytes, chat_id: str | bytes) -> int:
        """The last turn of the chat whose facts were applied (0: none yet)."""
        key = self._key(user_id, "progress")
        try:
            return int(await self._client.hget(key, encode_id(chat_id, "chat_id")) or 0)
        except (RedisError, OSError) as exc:
            raise StoreError(f"reading fact progress failed: {exc}") from exc

    async def set_progress(self, user_id: str | bytes, chat_id: str | bytes, upto: int) -> None:
        key = self._key(user_id, "progress")
        try:
            await self._client.hset(key, encode_id(chat_id, "chat_id"), upto)
        except (RedisError, OSError) as exc:
            raise StoreError(f"writing fact progress failed: {exc}") from exc


def _parse(raw: bytes | str, state: bytes | str | None) -> Fact:
    try:
        fact = Fact.model_validate_json(raw)
        if not state:
            return fact
        expired, invalid, superseded = (state.decode() if isinstance(state, bytes) else state).split("|")
        return fact.model_copy(
            update={
                "expired_at": float(expired),
                "invalid_at": fact.invalid_at if fact.invalid_at is not None else float(invalid),
                "superseded_by": superseded or None,
            }
        )
    except (ValidationError, ValueError) as exc:
        raise StoreError(f"corrupt fact record: {exc}; it was left as it is") from exc


def _event(entry_id: bytes | str, fields: dict[Any, Any]) -> AuditEvent:
    data = {
        (k.decode() if isinstance(k, bytes) else k): (v.decode() if isinstance(v, bytes) else v)
        for k, v in fields.items()
    }
    eid = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    source = json.loads(data.pop("source_turns", "[]") or "[]")
    return AuditEvent(id=eid, at=int(eid.split("-")[0]) / 1000, source_turns=tuple(source), **data)
