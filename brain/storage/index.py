"""Search index storage: one namespace's documents, postings and vectors (`IndexStore`), and the records a
search index stores and returns. Scoring the query (analysis, fusion, reranking) is `brain.search`'s; the
store keeps postings and ranks them by BM25 where they live (in Redis, inside one script call).

A namespace remembers the analysis its postings were made with: writes and rankings name the analysis they
expect, and a namespace made by another one answers `STALE` until `rebuild` re-posts it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from brain.progress import Progress

__all__ = [
    "MAX_LENGTH",
    "MAX_TF",
    "STALE",
    "Counts",
    "Hit",
    "IndexEntry",
    "IndexStore",
    "IndexedDoc",
    "Ranking",
    "SpanRanking",
]

MAX_TF = 255
"""A posting's term frequency is capped here (a store may keep it in one byte); BM25 saturates long before."""
MAX_LENGTH = 65_534
"""A document's length (its term counts' sum) is capped here (a store may keep it in two bytes)."""

STALE = -1
"""What a write answers (for one entry) when the namespace was built by another analysis."""

Counts = Callable[["IndexedDoc", str], dict[str, int]]
"""A document's term counts under a named analysis (`brain.search.analyses.analysed`)."""


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


class IndexEntry(BaseModel):
    """A document as the store indexes it: the document (tags normalized; its time and tags are indexed),
    its term counts under the namespace's analysis, its embedding when there is one, and `stored`, what the
    store keeps and gives back as its record (the document itself when None; a reference when its text is
    kept elsewhere: `brain.search.storage.TextSource`)."""

    model_config = ConfigDict(frozen=True)

    doc: IndexedDoc
    counts: dict[str, int]
    vector: tuple[float, ...] | None = None
    stored: IndexedDoc | None = None

    @property
    def record(self) -> IndexedDoc:
        return self.doc if self.stored is None else self.stored


@dataclass(frozen=True, slots=True)
class Ranking:
    """One page of a BM25 ranking: (id, score) pairs best first (ties by id), and how many matched. A plain
    frozen dataclass: one is made per search, on every turn. `generation`: the namespace's change counter
    as read with the ranking, by a store that reads it in the same atomic call (fact memory's
    `FactStore.generation` for a user's fact index; 0 where the namespace keeps none); None when the store
    does not read it. `docs`: the namespace's document count, read at the same moment (None when the store
    does not say). Neither is part of the ranking's value (equality ignores them)."""

    total: int
    hits: tuple[tuple[str, float], ...] = ()
    generation: int | None = field(default=None, compare=False)
    docs: int | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class SpanRanking:
    """What a question naming a period needs (`IndexStore.rank_span`): its ranking within the filters, its
    ranking within the period, the period's ids and the namespace's document count, read at one moment."""

    ranking: Ranking
    within: Ranking
    period: frozenset[str]
    n_docs: int


@runtime_checkable
class IndexStore(Protocol):
    """One namespace's documents (`base`, from `brain.keys`). Every method raises `StoreError` when the
    store cannot answer. Ids are at most 256 characters; tags are lower case without spaces or ':'."""

    base: str

    async def add(self, entries: Sequence[IndexEntry], analysis: str) -> list[int]:
        """Index each entry (each atomically, with its postings, tags, time and vector): per entry 1 when
        new, 0 when its id is there already (nothing changes), `STALE` when the namespace's postings were
        made by another analysis (nothing written). An empty namespace takes `analysis`."""
        ...

    async def delete(self, doc_id: str, terms: Sequence[str], tags: Sequence[str], analysis: str) -> int:
        """Remove a document with its postings under `terms` and `tags`, and its vector: 1, 0 when there is
        no such id, or `STALE`."""
        ...

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
        """BM25 over the namespace: each term weighs its idf `log(1 + (n - df + 0.5) / (df + 0.5))` times
        its weight in `terms`; each term reads its `per_term` postings of highest frequency (equal
        frequencies: the latest added first; frequencies are capped at 255, lengths at 65,534); a document's
        length is its number of postings (its term counts' sum) against the namespace's average. Documents
        carrying one of `tags` (any, when none are given) and timed within [start, end] are kept; the page
        [offset, offset + limit) of the ranking comes back. None when the postings were made by another
        analysis."""
        ...

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
        """A question naming the period [low, high], at once (one atomic call where the store can): the
        first `depth` of `rank` within the filters and of `rank` within [low, high], the ids timed within
        [low, high] carrying one of `tags` (when given) and the namespace's document count. None when the
        postings were made by another analysis."""
        ...

    async def docs(self, ids: Sequence[str]) -> list[IndexedDoc]:
        """The documents of `ids` that exist, in the order of `ids`."""
        ...

    async def all_docs(self) -> list[IndexedDoc]:
        """Every document of the namespace, by id."""
        ...

    async def count(self) -> int: ...

    async def analysis(self) -> str | None:
        """The analysis the namespace's postings were made with (None: never recorded)."""
        ...

    async def allowed(self, tags: Sequence[str], start: float | None, end: float | None) -> set[str] | None:
        """The ids carrying one of `tags` (when given) and timed within [start, end] (when given); None
        without filters."""
        ...

    async def by_time(self, start: float | None, end: float | None) -> list[str]:
        """Ids timed within [start, end], newest first (equal times: greatest id first)."""
        ...

    async def nearest(
        self, vector: Sequence[float], allowed: set[str] | None, limit: int
    ) -> list[tuple[str, float]]:
        """The `limit` ids (among `allowed` when not None) whose vectors have the highest cosine similarity
        to `vector`, best first (exact: every vector is scored). Only vectors of the dimension added last
        are searched; a query of another dimension finds nothing."""
        ...

    async def get_source(self, source: str) -> dict[str, Any] | None:
        """What was recorded for a loaded source (e.g. a document's hash and passage ids)."""
        ...

    async def set_source(self, source: str, info: dict[str, Any]) -> None: ...

    async def rebuild(self, analysis: str, counts: Counts, progress: Progress | None = None) -> int:
        """Re-post every document under `analysis` unless the namespace has it already; how many were
        re-posted. `counts` finds the terms of the old and new analyses. Writers and readers of the
        namespace wait or answer `STALE` meanwhile; concurrent rebuilds do the work once."""
        ...

    async def drop(self, counts: Counts) -> int:
        """Delete the whole namespace (documents, postings, vectors, sources); how many documents it held.
        `counts` finds the postings' terms under the stored analysis."""
        ...
