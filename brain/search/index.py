"""Search over one index namespace: query analysis, BM25 (ranked where the postings live), vectors fused by
score, reranking. Storage is an `IndexStore`'s (`brain.storage.index`), documents `DocumentIndex`'s.

One index per namespace (e.g. a user's archival memory); a store keeps each namespace apart (in Redis, under
one hash tag), so every query touches only that namespace (tenants are isolated by construction).
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from brain import telemetry
from brain.errors import InputError, StoreError
from brain.llm.rerank import Rerank
from brain.process_caches import remember
from brain.search.analysis import Fusion, fuse, searchable
from brain.search.fields import ROLE_WEIGHT, role_term
from brain.search.filters import tag_list
from brain.search.query import Query, analyse_query, boost_span
from brain.search.relative_dates import Span
from brain.search.storage import DocumentIndex, TextSource
from brain.storage.index import Hit, IndexedDoc, IndexStore, Ranking

__all__ = ["Hit", "IndexedDoc", "SearchIndex"]

T = TypeVar("T")


@remember
@functools.lru_cache(maxsize=8_192)
def _bare(doc_id: str) -> IndexedDoc:
    """The document of an ids-only hit: its id alone, one frozen value per id (a user's facts come up in
    turn after turn), shared by every hit of it: read only."""
    return IndexedDoc(id=doc_id, text="", ts=0)


@dataclass(frozen=True, slots=True)
class _Asked:
    """One search as asked, its query analysed once (by `search`, or by `related` for its check too)."""

    query: str
    analysed: Query
    tags: Sequence[str]
    start: float | None
    end: float | None
    vector: Sequence[float] | None
    linked: Sequence[str]
    rankings: list[Ranking] | None


class SearchIndex(DocumentIndex):
    """BM25 search over one namespace's documents, plus date-range listing, over an injected store.

    Hybrid search fuses the best `depth` of each ranking by score, as `fusion` says (`fuse`: the embedding
    model's measured weight). With `rerank`, a query's best `rerank_depth` hits are reordered by the
    reranker's scores (one call)."""

    def __init__(
        self,
        store: IndexStore,
        *,
        dated: bool = False,
        turns: bool = False,
        fusion: Fusion | None = None,
        per_term: int = 1_000,
        k1: float = 1.2,
        b: float = 0.75,
        depth: int = 500,
        rerank: Rerank | None = None,
        rerank_depth: int = 20,
        texts: TextSource | None = None,
    ) -> None:
        super().__init__(store, dated=dated, turns=turns, texts=texts)
        self.fusion = fusion or Fusion()
        self.per_term, self.k1, self.b = per_term, k1, b
        self.depth = depth
        self.rerank, self.rerank_depth = rerank, rerank_depth

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
        asked_at: float | None = None,
        rankings: list[Ranking] | None = None,
    ) -> tuple[list[Hit], int]:
        """BM25 hits for `query` (best first) within the filters, and how many matched in all. With a query
        `vector`, the lexical and the vector rankings are fused by score (`fuse`). With `ids_only`
        and no vector, hits carry only document ids: nothing else is read (the total is then 0).

        An empty query lists documents in the date range, newest first. A query with nothing to search for
        (only stop words or punctuation) is an `InputError` without a vector, and searches by the vector
        alone with one: never a silent listing of the newest. `linked` documents (e.g. the turns that
        facts matching the query were learned from) are raised in the ranking when the filters allow them.

        The query is analysed as a question asked at `asked_at` (now when None; `analyse_query`): its
        question words are dropped, and the documents within the period its time words name ("last week",
        "昨天") are preferred, those without its words too (`boost_span`); a query naming only a period
        lists that period's documents, newest first. In an index of turns, a question in the first or
        second person prefers the user's or the assistant's turns (`brain.search.fields`). Every BM25
        ranking the store made for it is appended to `rankings` when given (what the store read with it:
        `Ranking.generation`).

        With a reranker, the best `rerank_depth` hits of a query are reordered by it (scores are then the
        reranker's); a failing reranker is an `LLMError`."""
        asked = time.time() if asked_at is None else asked_at
        request = _Asked(query, analyse_query(query, asked), tags, start, end, vector, linked, rankings)
        return await self._searched(request, offset, limit, ids_only)

    async def _searched(
        self, asked: _Asked, offset: int, limit: int, ids_only: bool
    ) -> tuple[list[Hit], int]:
        """`search` as `asked`, one page of it."""
        query = asked.query
        if self.rerank is None or ids_only or not query.strip() or offset >= self.rerank_depth:
            return await self._search_ranked(asked, offset, limit, ids_only)
        depth = max(self.rerank_depth, offset + limit)
        hits, total = await self._search_ranked(asked, 0, depth, False)
        return (await self._reranked(query, hits))[offset : offset + limit], total

    async def _reranked(self, query: str, hits: list[Hit]) -> list[Hit]:
        """`hits` with the best `rerank_depth` of them in the reranker's order, scored by it."""
        assert self.rerank is not None
        head = hits[: self.rerank_depth]
        scores = await self.rerank(query, [self.indexed_text(h.doc) for h in head])
        best = sorted(range(len(head)), key=lambda k: -scores[k])  # stable: ties keep the fused order
        return [Hit(doc=head[k].doc, score=scores[k]) for k in best] + hits[len(head) :]

    async def _search_ranked(
        self, asked: _Asked, offset: int, limit: int, ids_only: bool
    ) -> tuple[list[Hit], int]:
        query, analysed, tags, start, end = asked.query, asked.analysed, asked.tags, asked.start, asked.end
        vector, linked, rankings = asked.vector, asked.linked, asked.rankings
        query_terms, span = analysed.weights, analysed.span
        if self.turns and query_terms and analysed.role is not None:  # the role as a field: a preference
            query_terms = {**query_terms, role_term(analysed.role): ROLE_WEIGHT}
        if (vector is not None or linked) and query.strip() and (query_terms or vector is not None):
            # without words to look for, the vector alone
            return await self._hybrid(
                query_terms, vector, tags, start, end, offset, limit, linked, span, rankings
            )
        tags = tag_list(tags)
        if not query_terms and span is not None:  # only a period: its documents
            start = span.start if start is None else max(start, span.start)
            end = span.end if end is None else min(end, span.end)
            return await self._by_date(tags, start, end, offset, limit)
        if not query_terms:
            if query.strip():
                raise InputError(
                    f"nothing to search for in {query[:80]!r}: only stop words or punctuation; "
                    "use more specific words, or an empty query to list by date"
                )
            return await self._by_date(tags, start, end, offset, limit)
        ranked, total = await self._ranked(query_terms, tags, start, end, offset, limit, span, rankings)
        if ids_only:
            return [Hit(doc=_bare(i), score=s) for i, s in ranked], 0
        docs = {d.id: d for d in await self._docs([i for i, _ in ranked])}
        return [Hit(doc=docs[i], score=s) for i, s in ranked if i in docs], total

    async def _ranked(
        self,
        query_terms: Mapping[str, float],
        tag_list: Sequence[str],
        start: float | None,
        end: float | None,
        offset: int,
        limit: int,
        span: Span | None = None,
        rankings: list[Ranking] | None = None,
    ) -> tuple[list[tuple[str, float]], int]:
        """The store's BM25 ranking of weighted terms: (id, score) pairs of one page, and how many matched
        in all. With a `span`, the documents within it score more, and it counts as a term that each of
        them has (`boost_span`: the ranking, the ranking within the span and the span's ids, at once)."""
        low = None if span is None else span.start if start is None else max(start, span.start)
        high = None if span is None else span.end if end is None else min(end, span.end)
        if low is None or high is None or low > high:
            return await self._page(query_terms, tag_list, start, end, offset, limit, rankings)
        depth = max(offset, 0) + max(limit, 0)

        found = await self._ranking(
            functools.partial(  # not a lambda: its eight cells would be made on every call
                self.store.rank_span,
                query_terms,
                tags=tag_list,
                start=start,
                end=end,
                low=low,
                high=high,
                depth=depth,
                **self._bm25,
            )
        )
        if rankings is not None:
            rankings += [found.ranking, found.within]
        ranked, within = list(found.ranking.hits), list(found.within.hits)
        fused = boost_span(ranked, within, period=found.period, n_docs=found.n_docs)
        return fused[max(offset, 0) : depth], found.ranking.total + len(found.period) - found.within.total

    async def _page(
        self,
        query_terms: Mapping[str, float],
        tag_list: Sequence[str],
        start: float | None,
        end: float | None,
        offset: int,
        limit: int,
        rankings: list[Ranking] | None = None,
    ) -> tuple[list[tuple[str, float]], int]:
        ranking = await self._ranking(
            lambda: self.store.rank(
                query_terms,
                tags=tag_list,
                start=start,
                end=end,
                offset=max(offset, 0),
                limit=max(limit, 0),
                **self._bm25,
            )
        )
        if rankings is not None:
            rankings.append(ranking)
        return list(ranking.hits), ranking.total

    @property
    def _bm25(self) -> dict[str, Any]:
        """The store's ranking options: the analysis and BM25's parameters."""
        return {"analysis": self.analysis, "per_term": self.per_term, "k1": self.k1, "b": self.b}

    async def _ranking(self, read: Callable[[], Awaitable[T | None]]) -> T:
        """`read()`'s answer, after a rebuild when the namespace was built by another analysis."""
        found = await self._current(read, lambda r: r is None)
        if found is None:
            raise StoreError(f"{self.base} is still built by another analysis after a rebuild")
        return found

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
        allowed = await self.store.allowed(tag_list(tags), start, end)
        nearest = await self.store.nearest(vector, allowed, limit)
        docs = {d.id: d for d in await self._docs([i for i, _ in nearest])}
        return [Hit(doc=docs[i], score=s) for i, s in nearest if i in docs]

    async def _hybrid(
        self,
        query_terms: Mapping[str, float],
        vector: Sequence[float] | None,
        tags: Sequence[str],
        start: float | None,
        end: float | None,
        offset: int,
        limit: int,
        linked: Sequence[str] = (),
        span: Span | None = None,
        rankings: list[Ranking] | None = None,
    ) -> tuple[list[Hit], int]:
        depth = max(self.depth, offset + limit)
        allowed = None  # the filters' ids, read once for the vector ranking and the linked documents
        if vector is not None or linked:
            allowed = await self.store.allowed(tag_list(tags), start, end)

        async def words() -> list[tuple[str, float]]:
            if not query_terms:
                return []
            ranked, _ = await self._ranked(query_terms, tag_list(tags), start, end, 0, depth, span, rankings)
            return ranked

        async def meaning() -> list[tuple[str, float]]:
            return [] if vector is None else await self.store.nearest(vector, allowed, depth)

        lexical, nearest = await asyncio.gather(words(), meaning())  # two connections: both at once
        if linked:
            present = {d.id for d in await self._docs(list(dict.fromkeys(linked)))}
            linked = [i for i in linked if i in present and (allowed is None or i in allowed)]
        weight = self.fusion.weight if vector is not None else 0.0
        fused = fuse(lexical, nearest, weight=weight, scale=self.fusion.scale, linked=linked)
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
        linked: Sequence[str] = (),
        asked_at: float | None = None,
        rankings: list[Ranking] | None = None,
    ) -> list[Hit]:
        """Documents related to `text` (e.g. a new fact, a task, the turn being answered), best first: like
        `search`, but a text with nothing to search for, and no vector, finds nothing (no error, no
        listing by date). `rankings` as `search`'s."""
        asked = time.time() if asked_at is None else asked_at
        analysed = analyse_query(text, asked)  # made once: a long text is not cached (`text_cache`)
        # a query with weighted words has something to search for
        if vector is None and not analysed.weights and not searchable(text):
            return []
        with telemetry.span(
            "brain.search", {"brain.search.limit": limit, "brain.search.vector": vector is not None}
        ):
            request = _Asked(text, analysed, tags, None, None, vector, linked, rankings)
            hits, _ = await self._searched(request, 0, limit, ids_only)
        return hits

    async def _by_date(
        self, tags: Sequence[str], start: float | None, end: float | None, offset: int, limit: int
    ) -> tuple[list[Hit], int]:
        ids = await self.store.by_time(start, end)
        allowed = await self.store.allowed(tag_list(tags), None, None)
        if allowed is not None:
            ids = [i for i in ids if i in allowed]
        page = ids[offset : offset + limit]
        return [Hit(doc=d, score=0.0) for d in await self._docs(page)], len(ids)
