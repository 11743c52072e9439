"""`RedisFactStore`: each user's facts under one hash tag (`brain.keys.facts_base`): the facts, their retired
state, a content-hash index, aliases, provenance merged in later, batches, progress, a change counter, and
the audit stream, the sources (turn ids) facts and events name by reference. Every change is one Lua call
that also appends its audit event; a new fact's search entry (in the same hash tag: the fact index is
`facts_base` too) is written by that same call (`brain.backends.redis.fact_scripts`; the records:
`brain.backends.redis.fact_records`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from brain.backends.redis.client import RedisClient, Refused
from brain.backends.redis.fact_packing import id_fields, pack_id, pack_ids, pick, unpack_id, unpack_ids
from brain.backends.redis.fact_records import (
    audit_args,
    build_fact,
    decode_sources,
    encode_sources,
    event_refs,
    fact_json,
    load_event,
    load_fact,
    load_merged,
    merged_refs,
    record_refs,
    text_ids,
)
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


# Sources by reference, as read: content-addressed (a reference names one list of ids), so shared by every
# caller. Bounded: cleared when full.
_SOURCES: dict[str, tuple[str, ...]] = {}
_SOURCES_MAX = 20_000


def audit_pairs(entry: AuditEntry, *own: str) -> list[str]:
    """An audit entry as the graph scripts take it (name, value, ...), empty fields and the fields the
    script writes itself (`own`, e.g. the subject's text) left out; sources inline."""
    fields = entry.model_dump(exclude=set(own))
    fields["source_turns"] = json.dumps(list(entry.source_turns)) if entry.source_turns else ""
    return [part for key, value in fields.items() if value for part in (key, str(value))]


def _field(name: str, value: bytes | str) -> str:
    """An audit field as read: `fact_id` packed (`fact_packing.pack_id`) or as it is."""
    return unpack_id(value) if name == "fact_id" else text(value)


def _ids(records: dict[Any, Any]) -> list[tuple[str, Any]]:
    """A user's fact records by id as `HGETALL` read them (packed fields unpacked)."""
    return [(unpack_id(field), raw) for field, raw in records.items()]


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
            if exc.code == "BRAIN_CORRUPT":
                raise StoreError(f"{what}: {exc.detail} names other turns; nothing was written") from None
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
        pairs = audit_args(audit, "old_text", also=(fact.source_turns,))
        invalid = fact.valid_at if fact.valid_at is not None else fact.created_at
        indexed = RedisIndexStore.add_args(entry, analysis)[1:] if entry is not None else [""] * 7
        args: list[Any] = [
            fact.id,
            fact_json(fact),
            fact.hash,
            replaces,
            repr(fact.created_at),
            repr(invalid),
        ]
        args = [*args, *indexed[-1:], *indexed[:-1], *pairs]
        keys = [self._key(user_id, "docs"), *self._keys(user_id)]
        existing, _ = await self._call("adding a fact", self._add, user_id, args, keys)
        return text(existing) or None

    async def merge(self, user_id: str | bytes, fact_id: str, text_hash: str, audit: AuditEntry) -> bool:
        source = encode_sources(audit.source_turns)[0] if audit.source_turns else ""
        args = [fact_id, text_hash, source, *audit_args(audit)]
        keys = [*self._keys(user_id), self._key(user_id, "alias")]
        return bool(await self._call("merging into a fact", self._merge, user_id, args, keys))

    async def generation(self, user_id: str | bytes) -> int:
        # GET as it is sent: redis-py's get() adds keys= (for its client-side cache), a dict and a list
        # held by every turn while it waits
        return int(await self._client.execute_command("GET", self._key(user_id, "gen")) or 0)

    async def retire(self, user_id: str | bytes, fact_id: str, now: float, audit: AuditEntry) -> bool:
        args = [fact_id, repr(now), *audit_args(audit, "old_text")]
        return bool(await self._call("retiring a fact", self._retire, user_id, args))

    async def restore(self, user_id: str | bytes, fact_id: str, audit: AuditEntry) -> int:
        args = [fact_id, *audit_args(audit, "new_text")]
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
            pipe.hmget(facts_key, id_fields(ids))
            pipe.hmget(state_key, list(ids))
            pipe.hmget(self._key(user_id, "prov"), list(ids))
            both, states, merged = await pipe.execute()
        raw = pick(both)
        found = [(i, r, s, m) for i, r, s, m in zip(ids, raw, states, merged, strict=True) if r is not None]
        return await self._facts(user_id, found)

    async def all(self, user_id: str | bytes) -> list[Fact]:
        facts_key, state_key = self._keys(user_id)[:2]
        async with self._client.pipeline(transaction=False) as pipe:
            pipe.hgetall(facts_key)
            pipe.hgetall(state_key)
            pipe.hgetall(self._key(user_id, "prov"))
            raw, states, merged = await pipe.execute()
        state, prov = {text(k): v for k, v in states.items()}, {text(k): v for k, v in merged.items()}
        found = [(i, v, state.get(i), prov.get(i)) for i, v in _ids(raw)]
        return sorted(await self._facts(user_id, found), key=lambda f: (f.created_at, f.id))

    async def _facts(self, user_id: str | bytes, found: list[tuple[str, Any, Any, Any]]) -> list[Fact]:
        """Facts from (id, record, state, merged provenance) as read, their sources resolved."""
        records = [(i, load_fact(r), s, load_merged(m)) for i, r, s, m in found]
        refs = [ref for _, r, _, m in records for ref in (*record_refs(r), *merged_refs(m))]
        sources = await self._sources(user_id, refs)
        return [build_fact(i, r, s, m, sources) for i, r, s, m in records]

    async def _sources(self, user_id: str | bytes, refs: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """The turn ids of source references (read once per process: a reference names one list)."""
        missing = list(dict.fromkeys(r for r in refs if r not in _SOURCES))
        if missing:
            values = await self._client.hmget(self._key(user_id, "src"), missing)
            if len(_SOURCES) + len(missing) > _SOURCES_MAX:
                _SOURCES.clear()
            for ref, value in zip(missing, values, strict=True):
                if value is not None:
                    try:
                        _SOURCES[ref] = decode_sources(value if isinstance(value, bytes) else value.encode())
                    except ValueError as exc:
                        raise StoreError(f"corrupt fact source {ref!r}: {exc}") from exc
        return {r: _SOURCES[r] for r in refs if r in _SOURCES}

    async def by_hash(self, user_id: str | bytes, hashes: Sequence[str]) -> dict[str, str]:
        if not hashes:
            return {}
        _, state, own, _ = self._keys(user_id)
        pipe = self._client.pipeline(transaction=False)
        pipe.hmget(own, id_fields(hashes))
        pipe.hmget(self._key(user_id, "alias"), list(hashes))
        both, aliased = await pipe.execute()
        direct = pick(both)
        found = {h: unpack_id(r) for h, r in zip(hashes, direct, strict=True) if r}
        alias = {h: a for h, a in zip(hashes, aliased, strict=True) if a and h not in found}
        if alias:
            retired = await self._client.hmget(state, list(alias.values()))
            found.update({h: a for (h, a), r in zip(alias.items(), retired, strict=True) if not r})
        return {h: text(r) for h, r in found.items()}

    async def alias(self, user_id: str | bytes, text_hash: str, fact_id: str) -> None:
        await self._fencing.run([("HSET", self._key(user_id, "alias"), (text_hash, fact_id))], user_id)

    async def batch_facts(self, user_id: str | bytes, batch: str) -> list[str] | None:
        packed, older = await self._client.hmget(self._key(user_id, "batches"), [pack_id(batch), batch])
        raw = packed if packed is not None else older
        return None if raw is None else unpack_ids(raw)

    async def set_batch_facts(self, user_id: str | bytes, batch: str, fact_ids: Sequence[str]) -> None:
        value = pack_ids(sorted(set(fact_ids)))
        await self._fencing.run([("HSET", self._key(user_id, "batches"), (pack_id(batch), value))], user_id)

    async def history(self, user_id: str | bytes) -> list[AuditEvent]:
        entries = await self._client.xrange(self._keys(user_id)[3]) or []
        events = [
            (text(entry_id or b"0-0"), {text(k): _field(text(k), v) for k, v in (fields or {}).items()})
            for entry_id, fields in entries
        ]
        named = list(dict.fromkeys(i for _, fields in events for i in text_ids(fields) if i))
        texts: dict[str, str] = {}
        if named:
            raw = pick(await self._client.hmget(self._keys(user_id)[0], id_fields(named)))
            texts = {i: str(load_fact(r).get("text", "")) for i, r in zip(named, raw, strict=True) if r}
        sources = await self._sources(user_id, [ref for _, fields in events for ref in event_refs(fields)])
        return [load_event(entry_id, fields, texts, sources) for entry_id, fields in events]

    async def progress(self, user_id: str | bytes, chat_id: str | bytes) -> int:
        return int(
            await self._client.hget(self._key(user_id, "progress"), encode_id(chat_id, "chat_id")) or 0
        )

    async def set_progress(self, user_id: str | bytes, chat_id: str | bytes, upto: int) -> None:
        field = encode_id(chat_id, "chat_id")
        await self._fencing.run([("HSET", self._key(user_id, "progress"), (field, upto))], user_id)
