"""`RedisFactStore`: each user's facts under one hash tag (`brain.keys.facts_base`): the facts, their retired
state, a content-hash index, aliases, provenance merged in later, batches, progress, a change counter, and
the audit stream. Every change is one Lua call that also appends its audit event; a new fact's search entry
(in the same hash tag: the fact index is `facts_base` too) is written by that same call
(`brain.backends.redis.fact_scripts`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from brain.backends.redis.client import RedisClient, Refused
from brain.backends.redis.fact_scripts import ADD, ERASE, MERGE, RESTORE, RETIRE
from brain.backends.redis.fence import Fencing, fenced
from brain.backends.redis.index import RedisIndexStore
from brain.errors import ConflictError, NotFoundError, StaleIndexError, StoreError
from brain.keys import encode_id, facts_base
from brain.search.filters import text
from brain.storage.facts import AuditEntry, AuditEvent, Fact
from brain.storage.index import IndexEntry
from brain.telemetry import TracedScript

__all__ = ["RedisFactStore", "audit_pairs"]


def audit_pairs(entry: AuditEntry, *own: str) -> list[str]:
    """An audit entry as the scripts take it (name, value, ...), empty fields and the fields the script
    writes itself (`own`, e.g. the subject's text) left out."""
    fields = entry.model_dump(exclude=set(own))
    fields["source_turns"] = json.dumps(list(entry.source_turns)) if entry.source_turns else ""
    return [part for key, value in fields.items() if value for part in (key, str(value))]


class RedisFactStore:
    """A `FactStore` over an injected client."""

    def __init__(
        self,
        client: RedisClient,
        *,
        prefix: str = "brain",
        fencing: Fencing | None = None,
        audit_max_events: int = 10_000,
    ) -> None:
        self._client = client
        self.prefix, self.audit_max_events = prefix, audit_max_events
        self._fencing = fencing or Fencing(client, prefix)
        self._add = TracedScript(client.register_script(fenced(ADD)), "facts.add")
        self._retire = TracedScript(client.register_script(fenced(RETIRE)), "facts.retire")
        self._restore = TracedScript(client.register_script(fenced(RESTORE)), "facts.restore")
        self._erase = TracedScript(client.register_script(ERASE), "facts.erase")
        self._merge = TracedScript(client.register_script(fenced(MERGE)), "facts.merge")

    def _key(self, user_id: str | bytes, part: str) -> str:
        return f"{facts_base(self.prefix, user_id)}:{part}"

    def _keys(self, user_id: str | bytes) -> list[str]:
        """The keys every fact script takes: facts, state, hashes, audit."""
        return [self._key(user_id, part) for part in ("facts", "state", "hash", "audit")]

    async def _call(
        self, what: str, script: Any, user_id: str | bytes, args: list[Any], keys: list[str] | None = None
    ) -> Any:
        """A fact script on the user's keys (or `keys`), its refusals as our errors; `what` names the
        work, `args[0]` the fact (`args[3]` the one an add replaces)."""
        try:
            capped = [*args, self.audit_max_events]  # the scripts' last ARGV: XADD MAXLEN ~ of the audit
            return await self._fencing.call(script, keys or self._keys(user_id), capped, user_id)
        except Refused as exc:
            if exc.code == "BRAIN_MISSING":
                missing = args[3] if script is self._add else args[0]
                raise NotFoundError(f"{what}: there is no fact {missing!r}") from None
            if exc.code == "BRAIN_RETIRED":
                raise ConflictError(f"{what}: fact {args[3]!r} was retired meanwhile") from None
            if exc.code == "BRAIN_STALE":
                raise StaleIndexError(f"{what}: the fact index was made by another analysis") from None
            raise

    async def add(
        self,
        user_id: str | bytes,
        fact: Fact,
        audit: AuditEntry,
        replaces: str = "",
        entry: IndexEntry | None = None,
        analysis: str = "",
    ) -> str | None:
        pairs = audit_pairs(audit, "old_text")
        invalid = fact.valid_at if fact.valid_at is not None else fact.created_at
        indexed = RedisIndexStore.add_args(entry, analysis)[1:] if entry is not None else [""] * 7
        args = [fact.id, fact.model_dump_json(), fact.hash, replaces, repr(fact.created_at), repr(invalid)]
        args = [*args, *indexed[-1:], *indexed[:-1], *pairs]
        keys = [self._key(user_id, "docs"), *self._keys(user_id)]
        existing, _ = await self._call("adding a fact", self._add, user_id, args, keys)
        return text(existing) or None

    async def merge(self, user_id: str | bytes, fact_id: str, text_hash: str, audit: AuditEntry) -> bool:
        sources = json.dumps(list(audit.source_turns)) if audit.source_turns else ""
        args = [fact_id, text_hash, sources, *audit_pairs(audit)]
        keys = [*self._keys(user_id), self._key(user_id, "alias")]
        return bool(await self._call("merging into a fact", self._merge, user_id, args, keys))

    async def generation(self, user_id: str | bytes) -> int:
        return int(await self._client.get(self._key(user_id, "gen")) or 0)

    async def retire(self, user_id: str | bytes, fact_id: str, now: float, audit: AuditEntry) -> bool:
        args = [fact_id, repr(now), *audit_pairs(audit, "old_text")]
        return bool(await self._call("retiring a fact", self._retire, user_id, args))

    async def restore(self, user_id: str | bytes, fact_id: str, audit: AuditEntry) -> int:
        args = [fact_id, *audit_pairs(audit, "new_text")]
        return int(await self._call("restoring a fact", self._restore, user_id, args))

    async def erase(self, user_id: str | bytes, fact_ids: Sequence[str]) -> int:
        if not fact_ids:
            return 0
        keys = [*self._keys(user_id), self._key(user_id, "alias")]
        return int(await self._erase(keys=keys, args=list(fact_ids)))

    async def get_many(self, user_id: str | bytes, ids: Sequence[str]) -> list[Fact]:
        if not ids:
            return []
        facts_key, state_key = self._keys(user_id)[:2]
        async with self._client.pipeline(transaction=False) as pipe:
            pipe.hmget(facts_key, list(ids))
            pipe.hmget(state_key, list(ids))
            pipe.hmget(self._key(user_id, "prov"), list(ids))
            raw, states, merged = await pipe.execute()
        return [_parse(r, s, m) for r, s, m in zip(raw, states, merged, strict=True) if r is not None]

    async def all(self, user_id: str | bytes) -> list[Fact]:
        facts_key, state_key = self._keys(user_id)[:2]
        async with self._client.pipeline(transaction=False) as pipe:
            pipe.hgetall(facts_key)
            pipe.hgetall(state_key)
            pipe.hgetall(self._key(user_id, "prov"))
            raw, states, merged = await pipe.execute()
        facts = (_parse(v, states.get(k), merged.get(k)) for k, v in raw.items())
        return sorted(facts, key=lambda f: (f.created_at, f.id))

    async def by_hash(self, user_id: str | bytes, hashes: Sequence[str]) -> dict[str, str]:
        if not hashes:
            return {}
        _, state, own, _ = self._keys(user_id)
        pipe = self._client.pipeline(transaction=False)
        pipe.hmget(own, list(hashes))
        pipe.hmget(self._key(user_id, "alias"), list(hashes))
        direct, aliased = await pipe.execute()
        found = {h: r for h, r in zip(hashes, direct, strict=True) if r}
        alias = {h: a for h, a in zip(hashes, aliased, strict=True) if a and h not in found}
        if alias:
            retired = await self._client.hmget(state, list(alias.values()))
            found.update({h: a for (h, a), r in zip(alias.items(), retired, strict=True) if not r})
        return {h: text(r) for h, r in found.items()}

    async def alias(self, user_id: str | bytes, text_hash: str, fact_id: str) -> None:
        await self._fencing.run([("HSET", self._key(user_id, "alias"), (text_hash, fact_id))], user_id)

    async def batch_facts(self, user_id: str | bytes, batch: str) -> list[str] | None:
        raw = await self._client.hget(self._key(user_id, "batches"), batch)
        return None if raw is None else list(json.loads(raw))

    async def set_batch_facts(self, user_id: str | bytes, batch: str, fact_ids: Sequence[str]) -> None:
        value = json.dumps(sorted(set(fact_ids)))
        await self._fencing.run([("HSET", self._key(user_id, "batches"), (batch, value))], user_id)

    async def history(self, user_id: str | bytes) -> list[AuditEvent]:
        entries = await self._client.xrange(self._keys(user_id)[3]) or []
        return [_event(entry_id or b"0-0", fields or {}) for entry_id, fields in entries]

    async def progress(self, user_id: str | bytes, chat_id: str | bytes) -> int:
        return int(
            await self._client.hget(self._key(user_id, "progress"), encode_id(chat_id, "chat_id")) or 0
        )

    async def set_progress(self, user_id: str | bytes, chat_id: str | bytes, upto: int) -> None:
        field = encode_id(chat_id, "chat_id")
        await self._fencing.run([("HSET", self._key(user_id, "progress"), (field, upto))], user_id)


def _parse(raw: bytes | str, state: bytes | str | None, merged: bytes | str | None = None) -> Fact:
    try:
        fact = Fact.model_validate_json(raw)
        if merged:
            fact = fact.model_copy(update={"source_turns": (*fact.source_turns, *json.loads(merged))})
        if not state:
            return fact
        expired, invalid, superseded = text(state).split("|")
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
    data = {text(k): text(v) for k, v in fields.items()}
    eid = text(entry_id)
    source = json.loads(data.pop("source_turns", "[]") or "[]")
    return AuditEvent(id=eid, at=int(eid.split("-")[0]) / 1000, source_turns=tuple(source), **data)
