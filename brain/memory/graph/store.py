"""`GraphMemory`: each user's entities and relations over a `brain.storage.GraphStore`. Names resolve
without an LLM call (`name_key`); relations are never deleted: an outdated one is retired with an event in
the same audit trail as facts, and stays readable for history and "as of" questions."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence

from brain.errors import ConflictError, InputError, StoreError
from brain.memory.graph.model import Entity, Neighbourhood, Relation, entity_id, name_key
from brain.storage.facts import AuditEntry, AuditEvent
from brain.storage.graph import EntityWrite, GraphStore

__all__ = ["GraphMemory", "NewEntity"]

NewEntity = tuple[str, str, Sequence[str]]
"""An entity as extraction names it: (name, type, aliases)."""


class GraphMemory:
    """Users' graphs over an injected store; every write atomic with its audit event."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store

    async def upsert(self, user_id: str | bytes, entities: Sequence[NewEntity]) -> list[str]:
        """The id of each entity, resolved by name and aliases (case, punctuation and articles aside)
        without an LLM call: a known one gains the new aliases, an unknown one is created. One call."""
        writes = []
        for name, kind, aliases in entities:
            key = name_key(name)
            if not key:
                raise InputError(f"an entity needs a name with letters or digits, not {name!r}")
            alias_keys = [k for k in dict.fromkeys(name_key(a) for a in aliases) if k and k != key]
            new = Entity(id=entity_id(name), name=name.strip(), type=kind or "thing", aliases=tuple(aliases))
            writes.append(
                EntityWrite(
                    key=key,
                    alias_keys=tuple(alias_keys),
                    entity=new,
                    aliases=tuple(a for a in aliases if a.strip()),
                )
            )
        return await self.store.upsert(user_id, writes)

    async def mention(self, user_id: str | bytes, pairs: Iterable[tuple[str, str]]) -> int:
        """Record that documents (facts, turns) name entities: (entity id, document id) pairs."""
        return await self.store.mention(user_id, list(dict.fromkeys(pairs)))

    async def relate(
        self, user_id: str | bytes, relation: Relation, *, actor: str = "", reason: str = "", label: str = ""
    ) -> tuple[Relation, bool]:
        """Store `relation` unless a current one says the same (then that one is returned, not new)."""
        audit = AuditEntry(
            event="ADD",
            actor=actor,
            reason=reason,
            source_turns=relation.source_turns,
            new_text=label or relation.key,
        )
        existing = await self.store.relate(user_id, relation, audit)
        if existing is None:
            return relation, True
        found = await self.store.relations(user_id, [existing])
        if not found:
            raise StoreError(f"graph memory points at a missing relation {existing!r}")
        return found[0], False

    async def retire(
        self,
        user_id: str | bytes,
        relation_id: str,
        *,
        invalid_at: float | None = None,
        actor: str = "",
        reason: str = "",
        source: Sequence[str] = (),
        label: str = "",
    ) -> bool:
        """Retire a current relation (it stopped being true at `invalid_at`, default now); False when it
        was retired already."""
        audit = AuditEntry(
            event="DELETE", actor=actor, reason=reason, source_turns=tuple(source), old_text=label
        )
        done = await self.store.retire(user_id, relation_id, time.time(), invalid_at, audit)
        if done < 0:
            raise InputError(f"there is no relation {relation_id!r}")
        return done == 1

    async def rollback(self, user_id: str | bytes, event: AuditEvent, *, actor: str = "") -> None:
        """Undo a relation event (an `AuditEvent` with subject "relation"): an ADD retires the relation,
        a DELETE restores it. Audited as a ROLLBACK."""
        audit = AuditEntry(event="ROLLBACK", actor=actor, reason=f"rollback of {event.id}", undoes=event.id)
        if event.event == "ADD":
            await self.store.retire(user_id, event.fact_id, time.time(), None, audit)
        elif event.event == "DELETE":
            if await self.store.restore(user_id, event.fact_id, audit) == -2:
                raise ConflictError(f"relation {event.fact_id} cannot come back: a current one says the same")
        else:
            raise ConflictError(f"a {event.event} of a relation is not undone")

    async def relations(self, user_id: str | bytes, ids: Sequence[str]) -> list[Relation]:
        return await self.store.relations(user_id, ids)

    async def entities(self, user_id: str | bytes, ids: Sequence[str]) -> dict[str, Entity]:
        """Entities by id (with how many documents name each)."""
        return await self.store.entities(user_id, ids)

    async def resolve(self, user_id: str | bytes, names: Iterable[str]) -> dict[str, str]:
        """Entity ids by name key, for the names (or aliases) that are known: no LLM call."""
        return await self.store.resolve(user_id, [name_key(n) for n in names])

    async def named_in(self, user_id: str | bytes, docs: Sequence[str]) -> dict[str, list[str]]:
        """The entities each document names (documents naming none are left out)."""
        return await self.store.named_in(user_id, docs)

    async def mentions(self, user_id: str | bytes, entities: Sequence[str]) -> dict[str, list[str]]:
        """The ids of the facts and turns naming each entity. One round trip."""
        return await self.store.mentions(user_id, entities)

    async def neighbourhood(
        self, user_id: str | bytes, centres: Sequence[str], *, as_of: float | None = None, limit: int = 50
    ) -> Neighbourhood:
        """The relations touching `centres` (current ones, or those true at `as_of`; at most `limit`,
        newest first) and the entities at their ends. Three round trips."""
        centres = list(dict.fromkeys(centres))
        if not centres:
            return Neighbourhood()
        ids = sorted(await self.store.adjacent(user_id, centres))
        found = [
            r
            for r in await self.store.relations(user_id, ids)
            if (r.true_at(as_of) if as_of is not None else r.current)
        ]
        found = sorted(found, key=lambda r: (-r.created_at, r.id))[:limit]
        ends = [*centres, *(e for r in found for e in (r.source, r.target))]
        return Neighbourhood(
            centres=tuple(centres), entities=await self.store.entities(user_id, ends), relations=tuple(found)
        )

    async def everything(
        self, user_id: str | bytes, *, as_of: float | None = None, current_only: bool = True
    ) -> Neighbourhood:
        """The whole graph of a user (for pictures and exports)."""
        found = await self.store.all_relations(user_id)
        if as_of is not None:
            found = [r for r in found if r.true_at(as_of)]
        elif current_only:
            found = [r for r in found if r.current]
        entities = await self.store.entities(user_id, await self.store.entity_ids(user_id))
        return Neighbourhood(entities=entities, relations=tuple(found))

    async def applied(self, user_id: str | bytes, batch: str) -> bool:
        """Whether a batch (by content hash) was applied to the graph before."""
        return await self.store.applied(user_id, batch)

    async def set_applied(self, user_id: str | bytes, batch: str) -> None:
        await self.store.set_applied(user_id, batch)
