"""`MemoryGraphStore`: users' graphs in memory, laid out as the Redis store lays them out (keyspace names
under `<graph base>`): `ent` id -> entity, `names` name key -> id, `rel` id -> relation (never changed),
`rstate` id -> (expired_at, invalid_at) for retired relations only, `cur` "source|relation|target" -> the
current relation's id, `adj:<id>` relation ids touching an entity, `men:<id>` documents naming it, `dm`
document -> the entities it names (space-separated, in insertion order), `batches`. Each write runs without
an await, so it is atomic for callers; relation events go to the facts' `AuditLog`."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

from brain.backends.memory.audit import AuditLog
from brain.backends.memory.keyspace import Keyspace
from brain.errors import StoreError
from brain.keys import graph_base
from brain.storage.facts import AuditEntry
from brain.storage.graph import Entity, EntityWrite, Relation

__all__ = ["MemoryGraphStore"]


class MemoryGraphStore:
    """A `GraphStore` in a `Keyspace`."""

    def __init__(self, space: Keyspace, prefix: str, audit: AuditLog) -> None:
        self._space = space
        self._prefix = prefix
        self._audit = audit

    def _name(self, user_id: str | bytes, part: str) -> str:
        return f"{graph_base(self._prefix, user_id)}:{part}"

    def _read(self, user_id: str | bytes, part: str) -> dict[str, Any]:
        """A hash-like part as it is (empty when absent); creates nothing."""
        return self._space.get(self._name(user_id, part), dict) or {}

    def _write(self, user_id: str | bytes, part: str) -> dict[str, Any]:
        """A hash-like part to write to, created when absent: only for a write that follows at once."""
        return self._space.setdefault(self._name(user_id, part), dict)

    def _members(self, user_id: str | bytes, part: str) -> set[str]:
        return self._space.get(self._name(user_id, part), set) or set()

    async def upsert(self, user_id: str | bytes, entities: Sequence[EntityWrite]) -> list[str]:
        self._space.check(user_id)
        ids: list[str] = []
        for write in entities:
            names = self._read(user_id, "names")
            found: str | None = names.get(write.key)
            for key in write.alias_keys:
                if found is not None:
                    break
                found = names.get(key)
            if found is not None:
                known: Entity | None = self._read(user_id, "ent").get(found)
                if known is None:
                    raise StoreError(f"graph memory names a missing entity {found!r}")
                aliases = list(known.aliases)
                seen = {*aliases, known.name}
                for alias in write.aliases:
                    if alias not in seen:
                        aliases.append(alias)
                        seen.add(alias)
                self._write(user_id, "ent")[found] = known.model_copy(update={"aliases": tuple(aliases)})
            else:
                found = write.entity.id
                self._write(user_id, "ent").setdefault(found, write.entity)  # made meanwhile: kept
            names = self._write(user_id, "names")
            for key in (write.key, *write.alias_keys):
                names.setdefault(key, found)
            ids.append(found)
        return ids

    async def mention(self, user_id: str | bytes, pairs: Sequence[tuple[str, str]]) -> int:
        self._space.check(user_id)
        new = 0
        for entity, doc in pairs:
            docs = self._space.setdefault(self._name(user_id, f"men:{entity}"), set[str])
            if doc in docs:
                continue
            docs.add(doc)
            new += 1
            named = self._write(user_id, "dm")
            named[doc] = f"{named[doc]} {entity}" if named.get(doc) else entity
        return new

    async def relate(self, user_id: str | bytes, relation: Relation, audit: AuditEntry) -> str | None:
        self._space.check(user_id)
        existing: str | None = self._read(user_id, "cur").get(relation.key)
        if existing is not None:
            return existing
        self._write(user_id, "rel")[relation.id] = relation
        self._write(user_id, "cur")[relation.key] = relation.id
        for end in (relation.source, relation.target):
            self._space.setdefault(self._name(user_id, f"adj:{end}"), set[str]).add(relation.id)
        self._audit.append(user_id, relation.id, audit, subject="relation")
        return None

    async def retire(
        self, user_id: str | bytes, relation_id: str, now: float, invalid_at: float | None, audit: AuditEntry
    ) -> int:
        self._space.check(user_id)
        relation: Relation | None = self._read(user_id, "rel").get(relation_id)
        if relation is None:
            return -1
        if relation_id in self._read(user_id, "rstate"):
            return 0
        self._write(user_id, "rstate")[relation_id] = (now, now if invalid_at is None else invalid_at)
        current = self._read(user_id, "cur")
        if current.get(relation.key) == relation_id:
            del current[relation.key]
            if not current:
                self._space.delete(self._name(user_id, "cur"))
        self._audit.append(user_id, relation_id, audit, subject="relation")
        return 1

    async def restore(self, user_id: str | bytes, relation_id: str, audit: AuditEntry) -> int:
        self._space.check(user_id)
        relation: Relation | None = self._read(user_id, "rel").get(relation_id)
        if relation is None:
            return -1
        states = self._read(user_id, "rstate")
        if relation_id not in states:
            return 0
        if relation.key in self._read(user_id, "cur"):
            return -2
        del states[relation_id]
        if not states:
            self._space.delete(self._name(user_id, "rstate"))
        self._write(user_id, "cur")[relation.key] = relation_id
        self._audit.append(user_id, relation_id, audit, subject="relation")
        return 1

    async def relations(self, user_id: str | bytes, ids: Sequence[str]) -> list[Relation]:
        found, states = self._read(user_id, "rel"), self._read(user_id, "rstate")
        return [_with_state(found[i], states.get(i)) for i in ids if i in found]

    async def all_relations(self, user_id: str | bytes) -> list[Relation]:
        states = self._read(user_id, "rstate")
        found = (_with_state(r, states.get(i)) for i, r in self._read(user_id, "rel").items())
        return sorted(found, key=lambda r: r.id)

    async def entities(self, user_id: str | bytes, ids: Sequence[str]) -> dict[str, Entity]:
        known = self._read(user_id, "ent")
        found = (
            (known[i], len(self._members(user_id, f"men:{i}"))) for i in dict.fromkeys(ids) if i in known
        )
        return {e.id: e.model_copy(update={"mentions": n}) for e, n in found}

    async def entity_ids(self, user_id: str | bytes) -> list[str]:
        return list(self._read(user_id, "ent"))

    async def resolve(self, user_id: str | bytes, keys: Iterable[str]) -> dict[str, str]:
        names = self._read(user_id, "names")
        return {k: names[k] for k in dict.fromkeys(keys) if k in names}

    async def named_in(self, user_id: str | bytes, docs: Sequence[str]) -> dict[str, list[str]]:
        named = self._read(user_id, "dm")
        return {d: named[d].split() for d in docs if named.get(d)}

    async def mentions(self, user_id: str | bytes, entities: Sequence[str]) -> dict[str, list[str]]:
        return {e: sorted(self._members(user_id, f"men:{e}")) for e in dict.fromkeys(entities)}

    async def adjacent(self, user_id: str | bytes, centres: Sequence[str]) -> set[str]:
        return {i for centre in centres for i in self._members(user_id, f"adj:{centre}")}

    async def applied(self, user_id: str | bytes, batch: str) -> bool:
        return batch in self._read(user_id, "batches")

    async def set_applied(self, user_id: str | bytes, batch: str) -> None:
        self._space.check(user_id)
        self._write(user_id, "batches")[batch] = time.time()


def _with_state(relation: Relation, state: tuple[float, float] | None) -> Relation:
    """The relation as stored, with its retirement when it has one (its own `invalid_at` wins)."""
    if state is None:
        return relation
    expired, invalid = state
    invalid_at = relation.invalid_at if relation.invalid_at is not None else invalid
    return relation.model_copy(update={"expired_at": expired, "invalid_at": invalid_at})
