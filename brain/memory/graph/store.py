"""`GraphStore`: each user's entities and relations in plain Redis data structures (no modules), under the
user's fact-memory hash tag, so it works on Redis 7, Valkey and Cluster. Relations are never deleted: an
outdated one is retired (`expired_at`, `invalid_at`) with an event in the same audit stream as facts, and
stays readable for history and "as of" questions."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import ValidationError
from redis.exceptions import RedisError

from brain.errors import ConflictError, InputError, StoreError
from brain.keys import facts_base, graph_base
from brain.memory.facts import AuditEvent, audit_fields
from brain.memory.graph.model import Entity, Neighbourhood, Relation, entity_id, name_key
from brain.memory.graph.scripts import ENTITIES, MENTION, RELATE, RESTORE, RETIRE
from brain.search.filters import text
from brain.store.connection import RedisClient
from brain.telemetry import TracedScript

__all__ = ["GraphStore", "NewEntity"]

NewEntity = tuple[str, str, Sequence[str]]
"""An entity as extraction names it: (name, type, aliases)."""


class GraphStore:
    """Users' graphs over an injected client. Writes are Lua scripts, each atomic with its audit event."""

    def __init__(self, client: RedisClient, *, prefix: str = "brain") -> None:
        self._client = client
        self.prefix = prefix
        self._entities = TracedScript(client.register_script(ENTITIES), "graph.entities")
        self._mention = TracedScript(client.register_script(MENTION), "graph.mention")
        self._relate = TracedScript(client.register_script(RELATE), "graph.relate")
        self._retire = TracedScript(client.register_script(RETIRE), "graph.retire")
        self._restore = TracedScript(client.register_script(RESTORE), "graph.restore")

    def _key(self, user_id: str | bytes, part: str) -> str:
        return f"{graph_base(self.prefix, user_id)}:{part}"

    def _keys(self, user_id: str | bytes) -> list[str]:
        return [self._key(user_id, "ent"), f"{facts_base(self.prefix, user_id)}:audit"]

    async def _call(self, what: str, coro: Any) -> Any:
        try:
            return await coro
        except (RedisError, OSError) as exc:
            raise StoreError(f"{what} in graph memory failed: {type(exc).__name__}: {exc}") from exc

    async def upsert(self, user_id: str | bytes, entities: Sequence[NewEntity]) -> list[str]:
        """The id of each entity, resolved by name and aliases (case, punctuation and articles aside)
        without an LLM call: a known one gains the new aliases, an unknown one is created. One call."""
        if not entities:
            return []
        args: list[Any] = []
        for name, kind, aliases in entities:
            if not name_key(name):
                raise InputError(f"an entity needs a name with letters or digits, not {name!r}")
            alias_keys = [k for k in dict.fromkeys(name_key(a) for a in aliases) if k and k != name_key(name)]
            new = Entity(id=entity_id(name), name=name.strip(), type=kind or "thing", aliases=tuple(aliases))
            args += [
                name_key(name),
                new.id,
                new.model_dump_json(exclude={"mentions"}),
                json.dumps(alias_keys),
            ]
            args.append(json.dumps([a for a in aliases if a.strip()]))
        ids = await self._call("writing entities", self._entities(keys=self._keys(user_id), args=args))
        return [text(i) for i in ids]

    async def mention(self, user_id: str | bytes, pairs: Iterable[tuple[str, str]]) -> int:
        """Record that documents (facts, turns) name entities: (entity id, document id) pairs."""
        args = [part for pair in dict.fromkeys(pairs) for part in pair]
        if not args:
            return 0
        return int(await self._call("writing mentions", self._mention(keys=self._keys(user_id), args=args)))

    async def relate(
        self, user_id: str | bytes, relation: Relation, *, actor: str = "", reason: str = "", label: str = ""
    ) -> tuple[Relation, bool]:
        """Store `relation` unless a current one says the same (then that one is returned, not new)."""
        audit = audit_fields("ADD", actor, reason, relation.source_turns, new_text=label or relation.key)
        args = [
            relation.id,
            relation.model_dump_json(),
            relation.key,
            relation.source,
            relation.target,
            *audit,
        ]
        existing = text(await self._call("relating", self._relate(keys=self._keys(user_id), args=args)))
        if not existing:
            return relation, True
        found = await self.relations(user_id, [existing])
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
        audit = audit_fields("DELETE", actor, reason, source, old_text=label)
        args = [relation_id, repr(time.time()), repr(invalid_at) if invalid_at is not None else "", *audit]
        done = int(await self._call("retiring", self._retire(keys=self._keys(user_id), args=args)))
        if done < 0:
            raise InputError(f"there is no relation {relation_id!r}")
        return done == 1

    async def rollback(self, user_id: str | bytes, event: AuditEvent, *, actor: str = "") -> None:
        """Undo a relation event (an `AuditEvent` with subject "relation"): an ADD retires the relation,
        a DELETE restores it. Audited as a ROLLBACK."""
        audit = audit_fields("ROLLBACK", actor, f"rollback of {event.id}", (), undoes=event.id)
        if event.event == "ADD":
            args = [event.fact_id, repr(time.time()), "", *audit]
            await self._call("rolling back", self._retire(keys=self._keys(user_id), args=args))
        elif event.event == "DELETE":
            args = [event.fact_id, *audit]
            done = int(await self._call("rolling back", self._restore(keys=self._keys(user_id), args=args)))
            if done == -2:
                raise ConflictError(f"relation {event.fact_id} cannot come back: a current one says the same")
        else:
            raise ConflictError(f"a {event.event} of a relation is not undone")

    async def relations(self, user_id: str | bytes, ids: Sequence[str]) -> list[Relation]:
        if not ids:
            return []
        pipe = self._client.pipeline(transaction=False)
        pipe.hmget(self._key(user_id, "rel"), list(ids))
        pipe.hmget(self._key(user_id, "rstate"), list(ids))
        raw, states = await self._call("reading relations", pipe.execute())
        return [_relation(r, s) for r, s in zip(raw, states, strict=True) if r is not None]

    async def entities(self, user_id: str | bytes, ids: Sequence[str]) -> dict[str, Entity]:
        """Entities by id (with how many documents name each)."""
        ids = list(dict.fromkeys(ids))
        if not ids:
            return {}
        pipe = self._client.pipeline(transaction=False)
        pipe.hmget(self._key(user_id, "ent"), ids)
        for i in ids:
            pipe.scard(self._key(user_id, f"men:{i}"))
        raw, *counts = await self._call("reading entities", pipe.execute())
        return {
            e.id: e.model_copy(update={"mentions": int(n)})
            for e, n in ((_entity(r), n) for r, n in zip(raw, counts, strict=True) if r is not None)
        }

    async def resolve(self, user_id: str | bytes, names: Iterable[str]) -> dict[str, str]:
        """Entity ids by name, for the names (or aliases) that are known: no LLM call."""
        keys = [k for k in dict.fromkeys(name_key(n) for n in names) if k]
        if not keys:
            return {}
        found = await self._call("resolving names", self._client.hmget(self._key(user_id, "names"), keys))
        return {k: text(i) for k, i in zip(keys, found, strict=True) if i is not None}

    async def named_in(self, user_id: str | bytes, docs: Sequence[str]) -> dict[str, list[str]]:
        """The entities each document names (documents naming none are left out)."""
        if not docs:
            return {}
        raw = await self._call("reading mentions", self._client.hmget(self._key(user_id, "dm"), list(docs)))
        return {d: text(r).split() for d, r in zip(docs, raw, strict=True) if r}

    async def mentions(self, user_id: str | bytes, entities: Sequence[str]) -> dict[str, list[str]]:
        """The ids of the facts and turns naming each entity. One round trip."""
        entities = list(dict.fromkeys(entities))
        if not entities:
            return {}
        pipe = self._client.pipeline(transaction=False)
        for entity in entities:
            pipe.smembers(self._key(user_id, f"men:{entity}"))
        found = await self._call("reading mentions", pipe.execute())
        return {e: sorted(text(m) for m in members) for e, members in zip(entities, found, strict=True)}

    async def neighbourhood(
        self, user_id: str | bytes, centres: Sequence[str], *, as_of: float | None = None, limit: int = 50
    ) -> Neighbourhood:
        """The relations touching `centres` (current ones, or those true at `as_of`; at most `limit`,
        newest first) and the entities at their ends. Three round trips."""
        centres = list(dict.fromkeys(centres))
        if not centres:
            return Neighbourhood()
        pipe = self._client.pipeline(transaction=False)
        for centre in centres:
            pipe.smembers(self._key(user_id, f"adj:{centre}"))
        ids = sorted(
            {text(i) for members in await self._call("reading edges", pipe.execute()) for i in members}
        )
        found = [
            r
            for r in await self.relations(user_id, ids)
            if (r.true_at(as_of) if as_of is not None else r.current)
        ]
        found = sorted(found, key=lambda r: (-r.created_at, r.id))[:limit]
        ends = [*centres, *(e for r in found for e in (r.source, r.target))]
        return Neighbourhood(
            centres=tuple(centres), entities=await self.entities(user_id, ends), relations=tuple(found)
        )

    async def everything(
        self, user_id: str | bytes, *, as_of: float | None = None, current_only: bool = True
    ) -> Neighbourhood:
        """The whole graph of a user (for pictures and exports)."""
        pipe = self._client.pipeline(transaction=False)
        pipe.hgetall(self._key(user_id, "rel"))
        pipe.hgetall(self._key(user_id, "rstate"))
        pipe.hkeys(self._key(user_id, "ent"))
        raw, states, names = await self._call("reading the graph", pipe.execute())
        found = sorted((_relation(v, states.get(k)) for k, v in raw.items()), key=lambda r: r.id)
        if as_of is not None:
            found = [r for r in found if r.true_at(as_of)]
        elif current_only:
            found = [r for r in found if r.current]
        entities = await self.entities(user_id, [text(n) for n in names])
        return Neighbourhood(entities=entities, relations=tuple(found))

    async def applied(self, user_id: str | bytes, batch: str) -> bool:
        """Whether a batch (by content hash) was applied to the graph before."""
        return bool(
            await self._call("reading batches", self._client.hexists(self._key(user_id, "batches"), batch))
        )

    async def set_applied(self, user_id: str | bytes, batch: str) -> None:
        await self._call(
            "writing batches", self._client.hset(self._key(user_id, "batches"), batch, repr(time.time()))
        )


def _entity(raw: bytes | str) -> Entity:
    try:
        data = json.loads(raw)
        if isinstance(data.get("aliases"), dict):  # Lua's cjson writes an empty list as {}
            data["aliases"] = []
        return Entity.model_validate(data)
    except (ValidationError, ValueError) as exc:
        raise StoreError(f"corrupt entity record: {exc}; it was left as it is") from exc


def _relation(raw: bytes | str, state: bytes | str | None) -> Relation:
    try:
        relation = Relation.model_validate_json(raw)
        if not state:
            return relation
        expired, invalid = text(state).split("|")
        invalid_at = relation.invalid_at if relation.invalid_at is not None else float(invalid)
        return relation.model_copy(update={"expired_at": float(expired), "invalid_at": invalid_at})
    except (ValidationError, ValueError) as exc:
        raise StoreError(f"corrupt relation record: {exc}; it was left as it is") from exc
