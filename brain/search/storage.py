"""Where one search index's documents live: plain Redis data structures under one namespace, written
and read through the index's Lua scripts, rebuilt when made by another analysis. Searching is
`brain.search.index.SearchIndex`'s.

Per namespace: `docs` (id -> record JSON), `len` (id -> term count), `time` (id by timestamp),
`post:<term>` (id -> term frequency), `tag:<tag>` (ids), `stats` (doc count, total length, the analysis
the postings were made with), `vec`/`vseq` (embeddings, see `brain.search.vectors`), `sources` (what
loaded documents were recorded as).
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Sequence
from typing import Any

from redis.exceptions import RedisError

from brain.errors import InputError, StoreError
from brain.progress import Progress
from brain.search.analyses import analysed
from brain.search.analysis import ANALYSIS
from brain.search.dates import dated_text
from brain.search.filters import tag_list, text
from brain.search.rebuild import rebuild
from brain.search.records import IndexedDoc
from brain.search.scripts import IndexScripts
from brain.store.connection import RedisClient

__all__ = ["IndexStore"]


class IndexStore:
    """One namespace's documents (`base` from `brain.keys`), over an injected client. A dated index
    (recall and archival memory) indexes each document with its day in words before its text
    (`brain.search.dates`): lexically and, through `indexed_text`, in what callers embed."""

    def __init__(
        self, client: RedisClient, base: str, *, scripts: IndexScripts | None = None, dated: bool = False
    ) -> None:
        self._client = client
        self.base = base
        self.dated = dated
        scripts = scripts or IndexScripts(client)
        self.fusion = scripts.fusion
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

    async def rebuild(self, progress: Progress | None = None) -> int:
        """Re-analyse every document if the postings were made by another analysis (e.g. an index written
        by an older version). Idempotent; other processes wait for it. Returns how many were re-analysed.
        `progress` is told the counts; without one (a rebuild on first use), they are logged at INFO."""
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
                    progress,
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
            for args in arguments:  # redis-py queues a script call on a pipeline
                await self._add(keys=[self._key("docs")], args=args, client=pipe)
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
