"""`RedisIndexStore`: a search index namespace in plain Redis data structures (no modules), written and
ranked by Lua scripts (`brain.backends.redis.index_scripts`), so it works on Redis 7, Valkey and Cluster.

Per namespace, all under its hash tag: `docs` (document number -> record JSON), `num` (id -> number), `post`
(term -> packed postings), `lens` and `ts` (packed per number), `time` (ids by timestamp), `tag:<tag>` (ids),
`stats` (doc count, total length, numbers given, the analysis and layout the postings were made with),
`vec`/`vseq` (embeddings, `brain.backends.redis.vectors`), `sources` (what loaded documents were recorded
as). The packed layout is `brain.backends.redis.index_scripts`'s.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Mapping, Sequence
from typing import Any, cast

from redis.asyncio.cluster import RedisCluster

from brain.backends.redis.client import RedisClient
from brain.backends.redis.fence import Fencing, fenced
from brain.backends.redis.index_reads import ALLOWED, BY_TIME, DOCS, SEARCH, SEARCH_SPAN
from brain.backends.redis.index_scripts import ADD, DELETE, LAYOUT, PARTS
from brain.backends.redis.rebuild import rebuild
from brain.backends.redis.vectors import VectorCache
from brain.progress import Progress
from brain.search.filters import text
from brain.storage.index import Counts, IndexedDoc, IndexEntry, Ranking, SpanRanking
from brain.telemetry import TracedScript

__all__ = ["IndexScripts", "RedisIndexStore", "layout_version", "unpack_postings"]


def layout_version(analysis: str) -> str:
    """What a namespace records for postings made by `analysis` in this layout. Pure."""
    return analysis + LAYOUT


def unpack_postings(packed: bytes) -> list[tuple[int, int]]:
    """A term's packed postings (`brain.backends.redis.index_scripts`) as (number, tf) pairs. Pure."""
    out: list[tuple[int, int]] = []
    pos, num = 8, 0
    while pos < len(packed):
        value, shift = 0, 0
        while True:
            byte = packed[pos]
            pos += 1
            value |= (byte & 127) << shift
            shift += 7
            if byte < 128:
                break
        tf = 1
        if value & 1:
            tf, pos = packed[pos], pos + 1
        num += value >> 1
        out.append((num, tf))
    return out


def _low(start: float | None) -> float:
    return -1e308 if start is None else start


def _high(end: float | None) -> float:
    return 1e308 if end is None else end


def _search_args(
    terms: Mapping[str, float],
    tags: Sequence[str],
    start: float | None,
    end: float | None,
    offset: int,
    limit: int,
    analysis: str,
    per_term: int,
    k1: float,
    b: float,
) -> list[Any]:
    """The arguments of the search scripts (`SEARCH`; `SEARCH_SPAN` takes the period after them). Pure."""
    words = sorted(terms)
    return [
        " ".join(words),
        " ".join(tags),
        per_term,
        k1,
        b,
        _low(start),
        _high(end),
        max(offset, 0),
        max(limit, 0),
        layout_version(analysis),
        " ".join(repr(float(terms[w])) for w in words),
    ]


def _pairs(flat: Sequence[Any]) -> tuple[tuple[str, float], ...]:
    """A script's id, score, id, score, ... as (id, score) pairs."""
    return tuple(zip([text(x) for x in flat[0::2]], map(float, flat[1::2]), strict=True))


class IndexScripts:
    """The index's Lua scripts registered on one client, and the process's vector snapshots; build once
    and share between namespaces."""

    def __init__(self, client: RedisClient, *, vector_cache: VectorCache | None = None) -> None:
        self.add = TracedScript(client.register_script(fenced(ADD)), "index.add")
        self.delete = TracedScript(client.register_script(fenced(DELETE)), "index.delete")
        self.search = TracedScript(client.register_script(SEARCH), "index.search")
        self.search_span = TracedScript(client.register_script(SEARCH_SPAN), "index.search_span")
        self.docs = TracedScript(client.register_script(DOCS), "index.docs")
        self.allowed = TracedScript(client.register_script(ALLOWED), "index.allowed")
        self.by_time = TracedScript(client.register_script(BY_TIME), "index.by_time")
        self.vectors = vector_cache or VectorCache()


class RedisIndexStore:
    """An `IndexStore` over an injected client. Cheap to build: one per namespace and call is fine."""

    def __init__(
        self,
        client: RedisClient,
        base: str,
        *,
        scripts: IndexScripts | None = None,
        fencing: Fencing | None = None,
        ttl_seconds: int | None = None,
    ) -> None:
        self._client = client
        self.base = base
        self.ttl = ttl_seconds or 0  # every key of the namespace expires this long after its last write
        self._scripts = scripts or IndexScripts(client)
        self._fencing = fencing or Fencing(client, base.partition(":{")[0])

    def _key(self, part: str) -> str:
        return f"{self.base}:{part}"

    @property
    def client(self) -> RedisClient:
        return self._client

    @staticmethod
    def add_args(entry: IndexEntry, analysis: str) -> list[Any]:
        """An entry as the index scripts take it: id, record, ts, length, postings, tags, vector,
        version (`layout_version(analysis)`)."""
        doc = entry.doc
        postings = " ".join(f"{term} {tf}" for term, tf in entry.counts.items())
        packed = array("f", entry.vector).tobytes() if entry.vector is not None else b""
        length = sum(entry.counts.values())
        record = entry.record.model_dump_json(exclude_defaults=True)  # the id first, as the scripts read it
        return [
            doc.id,
            record,
            doc.ts,
            length,
            postings,
            " ".join(doc.tags),
            packed,
            layout_version(analysis),
        ]

    async def add(self, entries: Sequence[IndexEntry], analysis: str) -> list[int]:
        if not entries:
            return []
        head, ticket = self._fencing.ticket_parts(self.base)
        calls = [[*ticket, *self.add_args(entry, analysis), self.ttl] for entry in entries]
        return [int(r) for r in await self._adds([*head, self._key("docs")], calls)]

    async def repost(self, entries: Sequence[IndexEntry], version: str) -> None:
        """Post `entries` again under `version`, as given (a rebuild's), without a vector (the namespace
        keeps its vectors by id)."""
        head, ticket = self._fencing.ticket_parts(self.base)
        calls = [[*ticket, *self.add_args(entry, "")[:-2], b"", version] for entry in entries]
        await self._adds([*head, self._key("docs")], calls)

    async def _adds(self, keys: list[str], calls: list[list[Any]]) -> list[Any]:
        """The add script once per argument list, in order: one pipeline (one round trip), or on a Cluster
        (whose client refuses scripts in a pipeline) one call after another."""
        if len(calls) == 1 or isinstance(self._client, RedisCluster):
            return [await self._scripts.add(keys=keys, args=args) for args in calls]
        pipe = self._client.pipeline(transaction=False)
        for args in calls:  # redis-py queues a script call on a pipeline
            await self._scripts.add(keys=keys, args=args, client=pipe)
        return list(await pipe.execute())

    async def delete(self, doc_id: str, terms: Sequence[str], tags: Sequence[str], analysis: str) -> int:
        args = [doc_id, " ".join(terms), " ".join(tags), layout_version(analysis)]
        return int(await self._fencing.call(self._scripts.delete, [self._key("docs")], args))

    async def rank(
        self,
        terms: Mapping[str, float],
        *,
        tags: Sequence[str],
        start: float | None,
        end: float | None,
        offset: int,
        limit: int,
        analysis: str,
        per_term: int,
        k1: float,
        b: float,
    ) -> Ranking | None:
        args = _search_args(terms, tags, start, end, offset, limit, analysis, per_term, k1, b)
        total, *found = await self._scripts.search(keys=[self._key("docs")], args=args)
        if int(total) < 0:
            return None
        generation, docs, flat = int(found[0]), int(found[1]), found[2:]
        return Ranking(total=int(total), hits=_pairs(flat), generation=generation, docs=docs)

    async def rank_span(
        self,
        terms: Mapping[str, float],
        *,
        tags: Sequence[str],
        start: float | None,
        end: float | None,
        low: float,
        high: float,
        depth: int,
        analysis: str,
        per_term: int,
        k1: float,
        b: float,
    ) -> SpanRanking | None:
        args = [*_search_args(terms, tags, start, end, 0, depth, analysis, per_term, k1, b), low, high]
        found = await self._scripts.search_span(keys=[self._key("docs")], args=args)
        if int(found[0]) < 0:
            return None
        generation, n_docs, total, hits, inside, hits_within, periods = (int(x) for x in found[:7])
        ranked, rest = found[7 : 7 + 2 * hits], found[7 + 2 * hits :]
        within, period = rest[: 2 * hits_within], rest[2 * hits_within :][:periods]
        return SpanRanking(
            ranking=Ranking(total=total, hits=_pairs(ranked), generation=generation, docs=n_docs),
            within=Ranking(total=inside, hits=_pairs(within), generation=generation, docs=n_docs),
            period=frozenset(text(x) for x in period),
            n_docs=n_docs,
        )

    async def postings(self, term: str) -> dict[str, int]:
        """A term's postings as ids and term frequencies (for inspection and tests)."""
        packed = cast(bytes, await self._client.hget(self._key("post"), term) or b"")
        entries = unpack_postings(packed)
        records = await self._client.hmget(self._key("docs"), [num for num, _ in entries]) if entries else []
        return {
            IndexedDoc.model_validate_json(r).id: tf for r, (_, tf) in zip(records, entries, strict=True) if r
        }

    async def docs(self, ids: Sequence[str]) -> list[IndexedDoc]:
        if not ids:
            return []
        raw = await self._scripts.docs(keys=[self._key("docs")], args=list(ids))
        return [IndexedDoc.model_validate_json(r) for r in raw if r]

    async def all_docs(self) -> list[IndexedDoc]:
        raw = await self._client.hgetall(self._key("docs"))
        return sorted((IndexedDoc.model_validate_json(v) for v in raw.values()), key=lambda d: d.id)

    async def count(self) -> int:
        return int(await self._client.hget(self._key("stats"), "n") or 0)

    async def analysis(self) -> str | None:
        raw = await self._recorded()
        if raw is None or not raw.endswith(LAYOUT):
            return raw  # an older layout's (rebuilt on first use) or a rebuild's ('~'): not this analysis
        return raw.removesuffix(LAYOUT)

    async def _recorded(self) -> str | None:
        raw = await self._client.hget(self._key("stats"), "v")
        return None if raw is None else text(raw)

    async def allowed(self, tags: Sequence[str], start: float | None, end: float | None) -> set[str] | None:
        dated = start is not None or end is not None
        if not tags and not dated:
            return None
        bounds = [_low(start), _high(end)] if dated else ["", ""]
        ids = await self._scripts.allowed(keys=[self._key("docs")], args=[*bounds, *tags])
        return {text(i) for i in ids}

    async def by_time(self, start: float | None, end: float | None) -> list[str]:
        ids = await self._scripts.by_time(keys=[self._key("docs")], args=[_low(start), _high(end)])
        return [text(i) for i in ids]

    async def nearest(
        self, vector: Sequence[float], allowed: set[str] | None, limit: int
    ) -> list[tuple[str, float]]:
        snapshot = await self._scripts.vectors.snapshot(self._client, self.base)
        return list(snapshot.nearest(vector, limit, allowed))

    async def get_source(self, source: str) -> dict[str, Any] | None:
        raw = await self._client.hget(self._key("sources"), source)
        return None if raw is None else dict(json.loads(raw))

    async def set_source(self, source: str, info: dict[str, Any]) -> None:
        key = self._key("sources")
        expiry = [("EXPIRE", key, (self.ttl,))] if self.ttl else []
        await self._fencing.run([("HSET", key, (source, json.dumps(info))), *expiry])

    async def rebuild(self, analysis: str, counts: Counts, progress: Progress | None = None) -> int:
        return await rebuild(self, layout_version(analysis), counts, progress)

    async def stored(self) -> str:
        """The version the namespace recorded (`layout_version` of an analysis; an older layout's bare
        analysis; "1" when none was recorded)."""
        return await self._recorded() or "1"

    async def drop(self, counts: Counts) -> int:
        """Delete every key the namespace's documents can have made (no keyspace scan)."""
        stored = await self.stored()
        docs = await self.all_docs()
        parts = set(PARTS)
        for doc in docs:
            if not stored.endswith(LAYOUT):  # an older layout: a key per term and per tag, lengths by id
                parts |= {f"post:{term}" for term in counts(doc, stored.lstrip("~"))} | {"len", "time"}
                parts |= {f"tag:{tag}" for tag in doc.tags}
        keys = sorted(self._key(p) for p in parts)
        try:
            for start in range(0, len(keys), 500):
                await self._client.delete(*keys[start : start + 500])
        finally:
            self._scripts.vectors.discard([self.base])
        return len(docs)
