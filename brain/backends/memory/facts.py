"""`MemoryFactStore`: users' facts in memory, laid out as the Redis store lays them out (one keyspace name
per part of `<facts base>`): `facts` id -> the fact as added (never changed), `state` id -> (expired_at,
invalid_at, superseded_by) for retired facts only, `hash` content hash -> the current fact's id, `alias`
hash -> fact id, `prov` id -> sources merged in later, `gen` the change counter, `batches`, `progress`.
A new fact's search entry goes to the fact index (`MemoryIndexStore` on the same base) in the same write.
Each write runs without an await, so it is atomic for callers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from brain.backends.memory.audit import AuditLog
from brain.backends.memory.index import MemoryIndexStore
from brain.backends.memory.keyspace import Keyspace
from brain.errors import ConflictError, NotFoundError, StaleIndexError
from brain.keys import encode_id, facts_base
from brain.storage.facts import AuditEntry, AuditEvent, Fact
from brain.storage.index import IndexEntry

__all__ = ["MemoryFactStore"]

State = tuple[float, float, str]
"""A retired fact's (expired_at, invalid_at, superseded_by or '')."""


class MemoryFactStore:
    """A `FactStore` in a `Keyspace`; its audit events go to `audit`, which the graph store shares."""

    def __init__(self, space: Keyspace, prefix: str, audit: AuditLog) -> None:
        self._space = space
        self._prefix = prefix
        self._audit = audit

    def _name(self, user_id: str | bytes, part: str) -> str:
        return f"{facts_base(self._prefix, user_id)}:{part}"

    def _read(self, user_id: str | bytes, part: str) -> dict[str, Any]:
        """A part as it is (empty when absent); creates nothing."""
        return self._space.get(self._name(user_id, part), dict) or {}

    def _write(self, user_id: str | bytes, part: str) -> dict[str, Any]:
        """A part to write to, created when absent: only for a write that follows at once."""
        return self._space.setdefault(self._name(user_id, part), dict)

    def _pop(self, user_id: str | bytes, part: str, field: str) -> None:
        """Remove `field` from a part, and the part's name once it holds nothing."""
        values = self._read(user_id, part)
        values.pop(field, None)
        if not values:
            self._space.delete(self._name(user_id, part))

    def _unindex(self, user_id: str | bytes, fact: Fact, fact_id: str) -> None:
        """Drop the hash index entry of a fact being retired, when it still names that fact."""
        if self._read(user_id, "hash").get(fact.hash) == fact_id:
            self._pop(user_id, "hash", fact.hash)

    def _changed(self, user_id: str | bytes) -> None:
        self._write(user_id, "gen")["n"] = self._read(user_id, "gen").get("n", 0) + 1

    async def generation(self, user_id: str | bytes) -> int:
        return int(self._read(user_id, "gen").get("n", 0))

    async def erase(self, user_id: str | bytes, fact_ids: Sequence[str]) -> int:
        facts, named = self._read(user_id, "facts"), set()
        for fact_id in fact_ids:
            raw = facts.get(fact_id)
            if raw is None:
                continue
            named.add(fact_id)
            self._unindex(user_id, raw, fact_id)
            self._pop(user_id, "facts", fact_id)
            self._pop(user_id, "state", fact_id)
            self._pop(user_id, "prov", fact_id)
        for text_hash, target in list(self._read(user_id, "alias").items()):
            if target in named:
                self._pop(user_id, "alias", text_hash)
        if named:
            self._audit.forget(user_id, named)
            self._changed(user_id)
        return len(named)

    async def add(
        self,
        user_id: str | bytes,
        fact: Fact,
        audit: AuditEntry,
        replaces: str = "",
        entry: IndexEntry | None = None,
        analysis: str = "",
    ) -> str | None:
        self._space.check(user_id)
        existing: str | None = self._read(user_id, "hash").get(fact.hash)
        if existing is not None:
            return existing
        index = MemoryIndexStore(self._space, facts_base(self._prefix, user_id))
        if entry is not None and not index.claim(analysis):
            raise StaleIndexError("adding a fact: the fact index was made by another analysis")
        old_text = ""
        if replaces:
            old: Fact | None = self._read(user_id, "facts").get(replaces)
            if old is None:
                raise NotFoundError(f"adding a fact: there is no fact {replaces!r}")
            if replaces in self._read(user_id, "state"):
                raise ConflictError(f"adding a fact: fact {replaces!r} was retired meanwhile")
            invalid = fact.valid_at if fact.valid_at is not None else fact.created_at
            self._write(user_id, "state")[replaces] = (fact.created_at, invalid, fact.id)
            self._unindex(user_id, old, replaces)
            old_text = old.text
        self._write(user_id, "facts")[fact.id] = fact
        self._write(user_id, "hash")[fact.hash] = fact.id
        if entry is not None:
            index.put(entry)
        self._changed(user_id)
        self._audit.append(user_id, fact.id, audit, old_text=old_text)
        return None

    async def merge(self, user_id: str | bytes, fact_id: str, text_hash: str, audit: AuditEntry) -> bool:
        self._space.check(user_id)
        fact = self._existing(user_id, fact_id, "merging into a fact")
        if fact_id in self._read(user_id, "state"):
            return False
        self._write(user_id, "alias")[text_hash] = fact_id
        merged: tuple[str, ...] = self._read(user_id, "prov").get(fact_id, ())
        seen = {*fact.source_turns, *merged}
        new = tuple(dict.fromkeys(t for t in audit.source_turns if t not in seen))
        if new:
            self._write(user_id, "prov")[fact_id] = (*merged, *new)
        self._changed(user_id)
        self._audit.append(user_id, fact_id, audit)
        return True

    async def retire(self, user_id: str | bytes, fact_id: str, now: float, audit: AuditEntry) -> bool:
        self._space.check(user_id)
        fact = self._existing(user_id, fact_id, "retiring a fact")
        if fact_id in self._read(user_id, "state"):
            return False
        self._write(user_id, "state")[fact_id] = (now, now, "")
        self._unindex(user_id, fact, fact_id)
        self._changed(user_id)
        self._audit.append(user_id, fact_id, audit, old_text=fact.text)
        return True

    async def restore(self, user_id: str | bytes, fact_id: str, audit: AuditEntry) -> int:
        self._space.check(user_id)
        fact = self._existing(user_id, fact_id, "restoring a fact")
        if fact_id not in self._read(user_id, "state"):
            return 0
        if fact.hash in self._read(user_id, "hash"):
            return -1
        self._pop(user_id, "state", fact_id)
        self._write(user_id, "hash")[fact.hash] = fact_id
        self._changed(user_id)
        self._audit.append(user_id, fact_id, audit, new_text=fact.text)
        return 1

    def _existing(self, user_id: str | bytes, fact_id: str, what: str) -> Fact:
        fact: Fact | None = self._read(user_id, "facts").get(fact_id)
        if fact is None:
            raise NotFoundError(f"{what}: there is no fact {fact_id!r}")
        return fact

    async def get_many(self, user_id: str | bytes, ids: Sequence[str]) -> list[Fact]:
        facts, states = self._read(user_id, "facts"), self._read(user_id, "state")
        merged = self._read(user_id, "prov")
        return [_with_state(facts[i], states.get(i), merged.get(i, ())) for i in ids if i in facts]

    async def all(self, user_id: str | bytes) -> list[Fact]:
        states, merged = self._read(user_id, "state"), self._read(user_id, "prov")
        found = (
            _with_state(f, states.get(i), merged.get(i, ())) for i, f in self._read(user_id, "facts").items()
        )
        return sorted(found, key=lambda f: (f.created_at, f.id))

    async def by_hash(self, user_id: str | bytes, hashes: Sequence[str]) -> dict[str, str]:
        own, aliases = self._read(user_id, "hash"), self._read(user_id, "alias")
        retired = self._read(user_id, "state")
        found: dict[str, str] = {}
        for h in hashes:
            if h in own:
                found[h] = own[h]
            elif h in aliases and aliases[h] not in retired:  # as in Redis: unless the fact is retired
                found[h] = aliases[h]
        return found

    async def alias(self, user_id: str | bytes, text_hash: str, fact_id: str) -> None:
        self._space.check(user_id)
        self._write(user_id, "alias")[text_hash] = fact_id

    async def batch_facts(self, user_id: str | bytes, batch: str) -> list[str] | None:
        ids: tuple[str, ...] | None = self._read(user_id, "batches").get(batch)
        return None if ids is None else list(ids)

    async def set_batch_facts(self, user_id: str | bytes, batch: str, fact_ids: Sequence[str]) -> None:
        self._space.check(user_id)
        self._write(user_id, "batches")[batch] = tuple(sorted(set(fact_ids)))

    async def history(self, user_id: str | bytes) -> list[AuditEvent]:
        return self._audit.events(user_id)

    async def progress(self, user_id: str | bytes, chat_id: str | bytes) -> int:
        return int(self._read(user_id, "progress").get(encode_id(chat_id, "chat_id"), 0))

    async def set_progress(self, user_id: str | bytes, chat_id: str | bytes, upto: int) -> None:
        self._space.check(user_id)
        chat = encode_id(chat_id, "chat_id")
        self._write(user_id, "progress")[chat] = int(upto)


def _with_state(fact: Fact, state: State | None, merged: tuple[str, ...] = ()) -> Fact:
    """The fact as stored, with the sources merged into it and its retirement when it has one (its own
    `invalid_at` wins, as in Redis)."""
    if merged:
        fact = fact.model_copy(update={"source_turns": (*fact.source_turns, *merged)})
    if state is None:
        return fact
    expired, invalid, superseded = state
    return fact.model_copy(
        update={
            "expired_at": expired,
            "invalid_at": fact.invalid_at if fact.invalid_at is not None else invalid,
            "superseded_by": superseded or None,
        }
    )
