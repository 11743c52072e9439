"""A lexical (BM25) index in plain Redis data structures: works on Redis 7 and Valkey without modules.

One index per namespace (e.g. a user's archival memory); all its keys share one hash tag, so every query
touches only that namespace's keys (tenants are isolated by construction) and works on Redis Cluster.
Per namespace: `docs` (id -> record JSON), `len` (id -> term count), `time` (id by timestamp),
`post:<term>` (id -> term frequency), `tag:<tag>` (ids), `stats` (doc count, total length, the analysis
the postings were made with), `vec`/`vseq` (embeddings, see `brain.search.vectors`).

A dated index (recall and archival memory) indexes each document with its day in words before its text
(`brain.search.dates`): lexically and, through `indexed_text`, in what callers embed.
"""

from __future__ import annotations

import asyncio
import json
import time
from array import array
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from redis.exceptions import RedisError

from brain.errors import InputError, StoreError
from brain.search.analyses import analysed
from brain.search.analysis import ANALYSIS, fuse, searchable, term_counts
from brain.search.dates import dated_text
from brain.search.filters import allowed_ids, tag_list, text
from brain.search.rebuild import rebuild
from brain.search.scripts import ADD, DELETE, SEARCH
from brain.search.vectors import VectorCache
from brain.store.connection import RedisClient

__all__ = ["Hit", "IndexScripts", "IndexedDoc", "SearchIndex"]


class IndexedDoc(BaseModel):
    """A stored passage or turn: text with tags, source and a timestamp (seconds since the epoch)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1, max_length=256)
    text: str
    tags: tuple[str, ...] = ()
    source: str = ""
    ts: float = Field(default_factory=time.time)
    metadata: dict[str, Any] = Field(default_factory=dict)


class Hit(BaseModel):
    model_config = ConfigDict(frozen=True)

    doc: IndexedDoc
    score: float


class IndexScripts:
    """The index's Lua scripts registered on one client, and the process's vector snapshots; build once
    and share between indexes."""

    def __init__(self, client: RedisClient, *, vector_cache: VectorCache | None = None) -> None:
        self.add = client.register_script(ADD)
        self.delete = client.register_script(DELETE)
        self.search = client.register_script(SEARCH)
        self.vectors = vector_cache or VectorCache()


class SearchIndex:
    """BM25 search over one namespace's documents, plus date-range listing. Clients are injected.

    `base` is the namespace's key base from `brain.keys` (`archival_base`, `recall_base`). Hybrid search
    fuses the best `depth` of each ranking by score, the vector's with `vector_weight` (`fuse`)."""

    def __init__(
        self,
        client: RedisClient,
        base: str,
        *,
        scripts: IndexScripts | None = None,
        dated: bool = False,
        per_term: int = 1_000,
        k1: float = 1.2,
        b: float = 0.75,
        depth: int = 500,
        vector_weight: float = 0.2,
    ) -> None:
        self._client = client
        self.base = base
        self.dated = dated
        self.per_term, self.k1, self.b = per_term, k1, b
        self.depth, self.vector_weight = depth, vector_weight
        scripts = scripts or IndexScripts(client)
        self._add, self._delete, self._search = scripts.add, scripts.delete, scripts.search
        self._vectors = scripts.vectors

    @property
    def analysis(self) -> str:
        """The analysis this index's postings are made with (`ANALYSIS`, and `d` when dated)."""
        return ANALYSIS + ("d" if self.dated else "")

    def indexed_text(self, doc: IndexedDoc) -> str:
        """What is indexed (and what to embed) for `doc`: its text, headed by its day when dated."""
        return dated_text(doc.text, doc.ts) if self.dated else doc.text

    def _counts(self, doc: IndexedDoc, analysis: str) -> dict[str, int]:
        return analysed(doc.text, doc.ts, analysis)

    async def _stored_analysis(self) -> str:
        raw = await self._call("reading", self._client.hget(self._key("stats"), "v"))
        return "1" if raw is None else text(raw)

    async def rebuild(self) -> int:
        """Re-analyse every document if the postings were made by another analysis (e.g. an index written
        by an older version). Idempotent; other processes wait for it. Returns how many were re-analysed."""
        return int(
            await self._call(
                "rebuilding",
                rebuild(
                    self._client,
                    self.base,
                    self.analysis,
                    self._stored_analysis,
                    self.all_docs,
                    self._counts,
                ),
            )
        )

    async def _current(self, what: str, run: Any) -> Any:
        """`run()` (a script call, or a pipeline of them), after a rebuild when a script finds the index
        built by another analysis (its answer, or one of the pipeline's, is -1: no other answer is)."""
        result = await self._call(what, run())
        stale = result == -1 or (isinstance(result, list) and -1 in result)
        if stale:
            await self.rebuild()
            result = await self._call(what, run())
        return result

    def _key(self, part: str) -> str:
        return f"{self.base}:{part}"

    async def _call(self, what: str, coro: Any) -> Any:
        try:
            return await coro
        except (RedisError, OSError) as exc:
            raise StoreError(f"{what} in {self.base} failed: {type(exc).__name__}: {exc}") from exc

    async def add(self, doc: IndexedDoc, vector: Sequence[float] | None = None) -> bool:
        """Index `doc` (and its embedding); False (nothing changed) when its id is already there."""
        args = self._add_args(doc, vector)
        added = await self._current("indexing", lambda: self._add(keys=[self._key("docs")], args=args))
        return bool(added == 1)

    async def add_many(
        self, docs: Sequence[IndexedDoc], vectors: Sequence[Sequence[float]] | None = None
    ) -> int:
        """Index many documents in one round trip (each atomically); how many were new."""
        if not docs:
            return 0
        arguments = [
            self._add_args(d, vectors[i] if vectors is not None else None) for i, d in enumerate(docs)
        ]

        async def run() -> list[int]:
            pipe = self._client.pipeline(transaction=False)
            for args in arguments:
                await self._add(keys=[self._key("docs")], args=args, client=pipe)  # type: ignore[arg-type]  # redis-py runs scripts in pipelines
            return list(await pipe.execute())

        results = await self._current("indexing", run)  # after a rebuild, ids make indexing again idempotent
        return sum(1 for r in results if r == 1)

    def _add_args(self, doc: IndexedDoc, vector: Sequence[float] | None = None) -> list[Any]:
        counts = self._counts(doc, self.analysis)
        tags = tag_list(doc.tags)
        if any(len(t) > 64 or ":" in t or t.split() != [t] for t in tags):
            raise InputError("tags are at most 64 characters, without ':' or spaces")
        record = doc.model_copy(update={"tags": tuple(tags)}).model_dump_json()
        postings = " ".join(f"{term} {tf}" for term, tf in counts.items())
        packed = array("f", vector).tobytes() if vector is not None else b""
        return [doc.id, record, doc.ts, sum(counts.values()), postings, " ".join(tags), packed, self.analysis]

    async def delete(self, doc_id: str) -> bool:
        doc = await self.get(doc_id)
        if doc is None:
            return False
        args = [doc_id, " ".join(self._counts(doc, self.analysis)), " ".join(doc.tags), self.analysis]
        deleted = await self._current("deleting", lambda: self._delete(keys=[self._key("docs")], args=args))
        return bool(deleted == 1)

    async def get(self, doc_id: str) -> IndexedDoc | None:
        raw = await self._call("reading", self._client.hget(self._key("docs"), doc_id))
        return None if raw is None else IndexedDoc.model_validate_json(raw)

    async def count(self) -> int:
        return int(await self._call("counting", self._client.hget(self._key("stats"), "n")) or 0)

    async def _docs(self, ids: Sequence[str]) -> list[IndexedDoc]:
        if not ids:
            return []
        raw = await self._call("reading", self._client.hmget(self._key("docs"), list(ids)))
        return [IndexedDoc.model_validate_json(r) for r in raw if r is not None]

    async def search(
        self,
        query: str,
        *,
        tags: Sequence[str] = (),
        start: float | None = None,
        end: float | None = None,
        offset: int = 0,
        limit: int = 10,
        vector: Sequence[float] | None = None,
        ids_only: bool = False,
        linked: Sequence[str] = (),
    ) -> tuple[list[Hit], int]:
        """BM25 hits for `query` (best first) within the filters, and how many matched in all. With a query
        `vector`, the lexical and the vector rankings are fused by score (`fuse`). With `ids_only`
        and no vector, hits carry only document ids: nothing else is read (the total is then 0).

        An empty query lists documents in the date range, newest first. A query with nothing to search for
        (only stop words or punctuation) is an `InputError` without a vector, and searches by the vector
        alone with one: never a silent listing of the newest. `linked` documents (e.g. the turns that
        facts matching the query were learned from) are raised in the ranking when the filters allow them."""
        query_terms = sorted(set(term_counts(query)))
        if (vector is not None or linked) and query.strip() and (query_terms or vector is not None):
            # without words to look for, the vector alone
            return await self._hybrid(query_terms, vector, tags, start, end, offset, limit, linked)
        tags = tag_list(tags)
        if not query_terms:
            if query.strip():
                raise InputError(
                    f"nothing to search for in {query[:80]!r}: only stop words or punctuation; "
                    "use more specific words, or an empty query to list by date"
                )
            return await self._by_date(tags, start, end, offset, limit)
        ranked, total = await self._ranked(query_terms, tags, start, end, offset, limit)
        if ids_only:
            return [Hit(doc=IndexedDoc(id=i, text="", ts=0), score=s) for i, s in ranked], 0
        docs = {d.id: d for d in await self._docs([i for i, _ in ranked])}
        return [Hit(doc=docs[i], score=s) for i, s in ranked if i in docs], total

    async def _ranked(
        self,
        query_terms: Sequence[str],
        tag_list: Sequence[str],
        start: float | None,
        end: float | None,
        offset: int,
        limit: int,
    ) -> tuple[list[tuple[str, float]], int]:
        """The script's BM25 ranking: (id, score) pairs of one page, and how many matched in all."""
        args: list[Any] = [
            " ".join(query_terms),
            " ".join(tag_list),
            self.per_term,
            self.k1,
            self.b,
            start if start is not None else -1e308,
            end if end is not None else 1e308,
            max(offset, 0),
            max(limit, 0),
            self.analysis,
        ]
        total, *flat = await self._current(
            "searching", lambda: self._search(keys=[self._key("docs")], args=args)
        )
        names = [text(x) for x in flat[0::2]]
        return list(zip(names, map(float, flat[1::2]), strict=True)), int(total)

    async def vector_search(
        self,
        vector: Sequence[float],
        *,
        tags: Sequence[str] = (),
        start: float | None = None,
        end: float | None = None,
        limit: int = 50,
    ) -> list[Hit]:
        """Nearest documents by cosine similarity (exact: every vector of the namespace is scored)."""
        allowed = await self._call("filtering", allowed_ids(self._client, self.base, tags, start, end))
        nearest = await self._nearest(vector, allowed, limit)
        docs = {d.id: d for d in await self._docs([i for i, _ in nearest])}
        return [Hit(doc=docs[i], score=s) for i, s in nearest if i in docs]

    async def _nearest(
        self, vector: Sequence[float], allowed: set[str] | None, limit: int
    ) -> list[tuple[str, float]]:
        """The `limit` nearest ids (among `allowed`, the filters' ids, when not None)."""
        snapshot = await self._call("reading vectors", self._vectors.snapshot(self._client, self.base))
        return list(snapshot.nearest(vector, limit, allowed))

    async def _hybrid(
        self,
        query_terms: Sequence[str],
        vector: Sequence[float] | None,
        tags: Sequence[str],
        start: float | None,
        end: float | None,
        offset: int,
        limit: int,
        linked: Sequence[str] = (),
    ) -> tuple[list[Hit], int]:
        depth = max(self.depth, offset + limit)
        allowed = None  # the filters' ids, read once for the vector ranking and the linked documents
        if vector is not None or linked:
            allowed = await self._call("filtering", allowed_ids(self._client, self.base, tags, start, end))

        async def words() -> list[tuple[str, float]]:
            if not query_terms:
                return []
            ranked, _ = await self._ranked(query_terms, tag_list(tags), start, end, 0, depth)
            return ranked

        async def meaning() -> list[tuple[str, float]]:
            return [] if vector is None else await self._nearest(vector, allowed, depth)

        lexical, nearest = await asyncio.gather(words(), meaning())  # two connections: both at once
        if linked:
            present = {d.id for d in await self._docs(list(dict.fromkeys(linked)))}
            linked = [i for i in linked if i in present and (allowed is None or i in allowed)]
        weight = self.vector_weight if vector is not None else 0.0
        fused = fuse(lexical, nearest, weight=weight, linked=linked)
        page = fused[offset : offset + limit]
        docs = {d.id: d for d in await self._docs([i for i, _ in page])}
        return [Hit(doc=docs[i], score=s) for i, s in page if i in docs], len(fused)

    async def related(
        self,
        text: str,
        *,
        tags: Sequence[str] = (),
        limit: int = 10,
        vector: Sequence[float] | None = None,
        ids_only: bool = False,
    ) -> list[Hit]:
        """Documents related to `text` (e.g. a new fact, a task, the turn being answered), best first: like
        `search`, but a text with nothing to search for, and no vector, finds nothing (no error, no
        listing by date)."""
        if vector is None and not searchable(text):
            return []
        hits, _ = await self.search(text, tags=tags, limit=limit, vector=vector, ids_only=ids_only)
        return hits

    async def _by_date(
        self, tags: Sequence[str], start: float | None, end: float | None, offset: int, limit: int
    ) -> tuple[list[Hit], int]:
        low = "-inf" if start is None else start
        high = "+inf" if end is None else end
        ids = await self._call("listing", self._client.zrevrangebyscore(self._key("time"), high, low))
        ids = [text(i) for i in ids]
        allowed = await self._call("listing", allowed_ids(self._client, self.base, tags, None, None))
        if allowed is not None:
            ids = [i for i in ids if i in allowed]
        page = ids[offset : offset + limit]
        return [Hit(doc=d, score=0.0) for d in await self._docs(page)], len(ids)

    async def get_source(self, source: str) -> dict[str, Any] | None:
        """What was recorded for a loaded source (e.g. a document's hash and passage ids)."""
        raw = await self._call("reading sources", self._client.hget(self._key("sources"), source))
        return None if raw is None else dict(json.loads(raw))

    async def set_source(self, source: str, info: dict[str, Any]) -> None:
        await self._call(
            "recording a source", self._client.hset(self._key("sources"), source, json.dumps(info))
        )

    async def all_docs(self) -> list[IndexedDoc]:
        """Every document of the namespace, by id."""
        raw = await self._call("reading", self._client.hgetall(self._key("docs")))
        return sorted((IndexedDoc.model_validate_json(v) for v in raw.values()), key=lambda d: d.id)

    async def drop(self) -> int:
        """Delete the whole namespace: every key its documents can have made (no keyspace scan).
        Returns how many documents it held."""
        analysis = await self._stored_analysis()
        docs = await self.all_docs()
        parts = {"docs", "len", "time", "stats", "vec", "vseq", "sources"}
        for doc in docs:
            parts |= {f"post:{term}" for term in self._counts(doc, analysis)}
            parts |= {f"tag:{tag}" for tag in doc.tags}
        keys = sorted(self._key(p) for p in parts)
        for start in range(0, len(keys), 500):
            await self._call("dropping", self._client.delete(*keys[start : start + 500]))
        return len(docs)
