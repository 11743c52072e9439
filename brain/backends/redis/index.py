"""`RedisIndexStore`: a search index namespace in plain Redis data structures (no modules), written and
ranked by Lua scripts (`brain.backends.redis.index_scripts`), so it works on Redis 7, Valkey and Cluster.

Per namespace, all under its hash tag: `docs` (id -> record JSON), `len` (id -> term count), `time` (id by
timestamp), `post:<term>` (id -> term frequency), `tag:<tag>` (ids), `stats` (doc count, total length, the
analysis the postings were made with), `vec`/`vseq` (embeddings, `brain.backends.redis.vectors`), `sources`
(what loaded documents were recorded as).
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Mapping, Sequence
from typing import Any, cast

from brain.backends.redis.client import RedisClient
from brain.backends.redis.fence import Fencing, fenced
from brain.backends.redis.index_scripts import ADD, DELETE, SEARCH
from brain.backends.redis.rebuild import rebuild
from brain.backends.redis.vectors import VectorCache
from brain.progress import Progress
from brain.search.filters import text
from brain.storage.index import Counts, IndexedDoc, IndexEntry, Ranking
from brain.telemetry import TracedScript

__all__ = ["IndexScripts", "RedisIndexStore"]


class IndexScripts:
    """The index's Lua scripts registered on one client, and the process's vector snapshots; build once
    and share between namespaces."""

    def __init__(self, client: RedisClient, *, vector_cache: VectorCache | None = None) -> None:
        self.add = TracedScript(client.register_script(fenced(ADD)), "index.add")
        self.delete = TracedScript(client.register_script(fenced(DELETE)), "index.delete")
        self.search = TracedScript(client.register_script(SEARCH), "index.search")
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
    ) -> None:
        self._client = client
        self.base = base
        self._scripts = scripts or IndexScripts(client)
        self._fencing = fencing or Fencing(client, base.partition(":{")[0])

    def _key(self, part: str) -> str:
        return f"{self.base}:{part}"

    @staticmethod
    def add_args(entry: IndexEntry, analysis: str) -> list[Any]:
        """An entry as the index scripts take it: id, record, ts, length, postings, tags, vector,
        analysis."""
        doc = entry.doc
        postings = " ".join(f"{term} {tf}" for term, tf in entry.counts.items())
        packed = array("f", entry.vector).tobytes() if entry.vector is not None else b""
        length = sum(entry.counts.values())
        return [doc.id, doc.model_dump_json(), doc.ts, length, postings, " ".join(doc.tags), packed, analysis]

    async def add(self, entries: Sequence[IndexEntry], analysis: str) -> list[int]:
        if not entries:
            return []
        head, ticket = self._fencing.ticket_parts(self.base)
        docs = [*head, self._key("docs")]
        if len(entries) == 1:
            args = ticket + self.add_args(entries[0], analysis)
            return [int(await self._scripts.add(keys=docs, args=args))]
        pipe = self._client.pipeline(transaction=False)
        for entry in entries:  # redis-py queues a script call on a pipeline
            await self._scripts.add(keys=docs, args=ticket + self.add_args(entry, analysis), client=pipe)
        return [int(r) for r in await pipe.execute()]

    async def delete(self, doc_id: str, terms: Sequence[str], tags: Sequence[str], analysis: str) -> int:
        args = [doc_id, " ".join(terms), " ".join(tags), analysis]
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
        words = sorted(terms)
        args: list[Any] = [
            " ".join(words),
            " ".join(tags),
            per_term,
            k1,
            b,
            start if start is not None else -1e308,
            end if end is not None else 1e308,
            max(offset, 0),
            max(limit, 0),
            analysis,
            " ".join(repr(float(terms[w])) for w in words),
        ]
        total, *flat = await self._scripts.search(keys=[self._key("docs")], args=args)
        if int(total) < 0:
            return None
        hits = zip([text(x) for x in flat[0::2]], map(float, flat[1::2]), strict=True)
        return Ranking(total=int(total), hits=tuple(hits))

    async def docs(self, ids: Sequence[str]) -> list[IndexedDoc]:
        if not ids:
            return []
        raw = await self._client.hmget(self._key("docs"), list(ids))
        return [IndexedDoc.model_validate_json(r) for r in raw if r is not None]

    async def all_docs(self) -> list[IndexedDoc]:
        raw = await self._client.hgetall(self._key("docs"))
        return sorted((IndexedDoc.model_validate_json(v) for v in raw.values()), key=lambda d: d.id)

    async def count(self) -> int:
        return int(await self._client.hget(self._key("stats"), "n") or 0)

    async def analysis(self) -> str | None:
        raw = await self._client.hget(self._key("stats"), "v")
        return None if raw is None else text(raw)

    async def allowed(self, tags: Sequence[str], start: float | None, end: float | None) -> set[str] | None:
        dated = start is not None or end is not None
        if not tags and not dated:
            return None
        pipe = self._client.pipeline(transaction=False)
        for tag in tags:
            pipe.smembers(self._key(f"tag:{tag}"))
        if dated:
            pipe.zrangebyscore(
                self._key("time"), "-inf" if start is None else start, "+inf" if end is None else end
            )
        sets = [{text(i) for i in members} for members in await pipe.execute()]
        allowed = set().union(*sets[: len(tags)]) if tags else None
        if dated:
            allowed = sets[-1] if allowed is None else allowed & sets[-1]
        return allowed

    async def by_time(self, start: float | None, end: float | None) -> list[str]:
        low = "-inf" if start is None else start
        high = "+inf" if end is None else end
        ids = cast(list[bytes], await self._client.zrevrangebyscore(self._key("time"), high, low))
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
        await self._fencing.run([("HSET", self._key("sources"), (source, json.dumps(info)))])

    async def rebuild(self, analysis: str, counts: Counts, progress: Progress | None = None) -> int:
        return await rebuild(self._client, self.base, analysis, self._stored, self.all_docs, counts, progress)

    async def _stored(self) -> str:
        return await self.analysis() or "1"

    async def drop(self, counts: Counts) -> int:
        """Delete every key the namespace's documents can have made (no keyspace scan)."""
        analysis = await self._stored()
        docs = await self.all_docs()
        parts = {"docs", "len", "time", "stats", "vec", "vseq", "sources"}
        for doc in docs:
            parts |= {f"post:{term}" for term in counts(doc, analysis)}
            parts |= {f"tag:{tag}" for tag in doc.tags}
        keys = sorted(self._key(p) for p in parts)
        for start in range(0, len(keys), 500):
            await self._client.delete(*keys[start : start + 500])
        return len(docs)
