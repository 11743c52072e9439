"""`RedisGraphStore`: each user's entities and relations in plain Redis data structures (no modules), under
the user's fact-memory hash tag (`brain.keys.graph_base`), so one script writes a relation and its event in
the facts' audit stream, on Cluster too (`brain.backends.redis.graph_scripts`)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import ValidationError

from brain.backends.redis.client import RedisClient
from brain.backends.redis.facts import audit_pairs
from brain.backends.redis.fence import Fencing, fenced
from brain.backends.redis.graph_scripts import ENTITIES, MENTION, RELATE, RESTORE, RETIRE
from brain.errors import StoreError
from brain.keys import facts_base, graph_base
from brain.search.filters import text
from brain.storage.facts import AuditEntry
from brain.storage.graph import Entity, EntityWrite, Relation
from brain.telemetry import TracedScript

__all__ = ["RedisGraphStore"]


class RedisGraphStore:
    """A `GraphStore` over an injected client. Writes are Lua scripts, each atomic with its audit event."""

    def __init__(self, client: RedisClient, *, prefix: str = "brain", fencing: Fencing | None = None) -> None:
        self._client = client
        self.prefix = prefix
        self._fencing = fencing or Fencing(client, prefix)
        self._entities = TracedScript(client.register_script(fenced(ENTITIES)), "graph.entities")
        self._mention = TracedScript(client.register_script(fenced(MENTION)), "graph.mention")
        self._relate = TracedScript(client.register_script(fenced(RELATE)), "graph.relate")
        self._retire = TracedScript(client.register_script(fenced(RETIRE)), "graph.retire")
        self._restore = TracedScript(client.register_script(fenced(RESTORE)), "graph.restore")

    def _key(self, user_id: str | bytes, part: str) -> str:
        return f"{graph_base(self.prefix, user_id)}:{part}"

    def _keys(self, user_id: str | bytes) -> list[str]:
        return [self._key(user_id, "ent"), f"{facts_base(self.prefix, user_id)}:audit"]

    async def upsert(self, user_id: str | bytes, entities: Sequence[EntityWrite]) -> list[str]:
        if not entities:
            return []
        args: list[Any] = []
        for write in entities:
            entity = write.entity.model_dump_json(exclude={"mentions"})
            args += [write.key, write.entity.id, entity, json.dumps(list(write.alias_keys))]
            args.append(json.dumps(list(write.aliases)))
        return [text(i) for i in await self._fencing.call(self._entities, self._keys(user_id), args, user_id)]

    async def mention(self, user_id: str | bytes, pairs: Sequence[tuple[str, str]]) -> int:
        args = [part for pair in dict.fromkeys(pairs) for part in pair]
        if not args:
            return 0
        return int(await self._fencing.call(self._mention, self._keys(user_id), args, user_id))

    async def relate(self, user_id: str | bytes, relation: Relation, audit: AuditEntry) -> str | None:
        args = [
            relation.id,
            relation.model_dump_json(),
            relation.key,
            relation.source,
            relation.target,
            *audit_pairs(audit),
        ]
        return text(await self._fencing.call(self._relate, self._keys(user_id), args, user_id)) or None

    async def retire(
        self, user_id: str | bytes, relation_id: str, now: float, invalid_at: float | None, audit: AuditEntry
    ) -> int:
        args = [
            relation_id,
            repr(now),
            repr(invalid_at) if invalid_at is not None else "",
            *audit_pairs(audit),
        ]
        return int(await self._fencing.call(self._retire, self._keys(user_id), args, user_id))

    async def restore(self, user_id: str | bytes, relation_id: str, audit: AuditEntry) -> int:
        args = [relation_id, *audit_pairs(audit)]
        return int(await self._fencing.call(self._restore, self._keys(user_id), args, user_id))

    async def relations(self, user_id: str | bytes, ids: Sequence[str]) -> list[Relation]:
        if not ids:
            return []
        pipe = self._client.pipeline(transaction=False)
        pipe.hmget(self._key(user_id, "rel"), list(ids))
        pipe.hmget(self._key(user_id, "rstate"), list(ids))
        raw, states = await pipe.execute()
        return [_relation(r, s) for r, s in zip(raw, states, strict=True) if r is not None]

    async def all_relations(self, user_id: str | bytes) -> list[Relation]:
        pipe = self._client.pipeline(transaction=False)
        pipe.hgetall(self._key(user_id, "rel"))
        pipe.hgetall(self._key(user_id, "rstate"))
        raw, states = await pipe.execute()
        return sorted((_relation(v, states.get(k)) for k, v in raw.items()), key=lambda r: r.id)

    async def entities(self, user_id: str | bytes, ids: Sequence[str]) -> dict[str, Entity]:
        ids = list(dict.fromkeys(ids))
        if not ids:
            return {}
        pipe = self._client.pipeline(transaction=False)
        pipe.hmget(self._key(user_id, "ent"), ids)
        for i in ids:
            pipe.scard(self._key(user_id, f"men:{i}"))
        raw, *counts = await pipe.execute()
        return {
            e.id: e.model_copy(update={"mentions": int(n)})
            for e, n in ((_entity(r), n) for r, n in zip(raw, counts, strict=True) if r is not None)
        }

    async def entity_ids(self, user_id: str | bytes) -> list[str]:
        return [text(n) for n in await self._client.hkeys(self._key(user_id, "ent"))]

    async def resolve(self, user_id: str | bytes, keys: Iterable[str]) -> dict[str, str]:
        keys = [k for k in dict.fromkeys(keys) if k]
        if not keys:
            return {}
        found = await self._client.hmget(self._key(user_id, "names"), keys)
        return {k: text(i) for k, i in zip(keys, found, strict=True) if i is not None}

    async def named_in(self, user_id: str | bytes, docs: Sequence[str]) -> dict[str, list[str]]:
        if not docs:
            return {}
        raw = await self._client.hmget(self._key(user_id, "dm"), list(docs))
        return {d: text(r).split() for d, r in zip(docs, raw, strict=True) if r}

    async def mentions(self, user_id: str | bytes, entities: Sequence[str]) -> dict[str, list[str]]:
        entities = list(dict.fromkeys(entities))
        if not entities:
            return {}
        pipe = self._client.pipeline(transaction=False)
        for entity in entities:
            pipe.smembers(self._key(user_id, f"men:{entity}"))
        found = await pipe.execute()
        return {e: sorted(text(m) for m in members) for e, members in zip(entities, found, strict=True)}

    async def adjacent(self, user_id: str | bytes, centres: Sequence[str]) -> set[str]:
        centres = list(dict.fromkeys(centres))
        if not centres:
            return set()
        pipe = self._client.pipeline(transaction=False)
        for centre in centres:
            pipe.smembers(self._key(user_id, f"adj:{centre}"))
        return {text(i) for members in await pipe.execute() for i in members}

    async def applied(self, user_id: str | bytes, batch: str) -> bool:
        return bool(await self._client.hexists(self._key(user_id, "batches"), batch))

    async def set_applied(self, user_id: str | bytes, batch: str) -> None:
        await self._fencing.run(
            [("HSET", self._key(user_id, "batches"), (batch, repr(time.time())))], user_id
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
