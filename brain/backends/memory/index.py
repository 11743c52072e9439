"""`MemoryIndexStore`: one search index namespace in the `Keyspace`, with the Redis index's semantics (its Lua
scripts in `brain.search.scripts`): the same staleness rules, BM25 arithmetic, orders and ties.

Per namespace, three names: `<base>:docs` (documents with their postings, tags, times, lengths and vectors,
kept as the Redis keys of a namespace hold them), `<base>:stats` (the analysis the postings were made
with, kept when the documents are gone, as Redis keeps its `stats` hash) and `<base>:sources`. Every method
runs without awaiting, so each one is atomic for its event loop, a rebuild included.
"""

from __future__ import annotations

import heapq
import json
import math
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from brain.backends.memory.keyspace import Keyspace
from brain.progress import Progress, ProgressLog, report
from brain.search.vectors import Snapshot
from brain.storage.index import (
    MAX_LENGTH,
    MAX_TF,
    STALE,
    Counts,
    IndexedDoc,
    IndexEntry,
    Ranking,
    SpanRanking,
)

__all__ = ["MemoryIndexStore"]

CHUNK = 500
"""Documents re-posted between progress reports of a rebuild."""
_FOREVER = 1e308
"""The bound the Redis store passes for an open end of a time range (beyond ±1e300, nothing is filtered)."""


@dataclass
class _Namespace:
    """A namespace's documents as the Redis keys hold them: records (JSON), lengths, times, postings
    (term -> id -> tf), tags (tag -> ids) and packed float32 vectors in the order they were added."""

    docs: dict[str, str] = field(default_factory=dict)
    lens: dict[str, int] = field(default_factory=dict)
    times: dict[str, float] = field(default_factory=dict)
    postings: dict[str, dict[str, int]] = field(default_factory=dict)
    tags: dict[str, set[str]] = field(default_factory=dict)
    nums: dict[str, int] = field(default_factory=dict)  # the order documents were added (Redis's numbers)
    seq: int = 0
    vectors: dict[str, bytes] = field(default_factory=dict)
    total: int = 0
    snapshot: Snapshot | None = None  # the vectors for `nearest`, made again after a change

    @property
    def empty(self) -> bool:
        return not (self.docs or self.postings or self.tags)


@dataclass
class _Stats:
    analysis: str


@dataclass
class _Sources:
    by_name: dict[str, str] = field(default_factory=dict)


def _highest(posted: dict[str, int], per_term: int, nums: dict[str, int]) -> list[tuple[str, int]]:
    """The postings the Redis script reads: highest tf first, ties by the latest added; a per_term of 0 or
    less counts from the end, as a range from 0 to per_term - 1 would."""
    stop = per_term - 1 if per_term > 0 else len(posted) + per_term - 1
    if stop < 0:
        return []
    return heapq.nlargest(stop + 1, posted.items(), key=lambda p: (p[1], nums.get(p[0], 0)))


def _lua_number(value: float) -> float:
    """A score as the Redis script answers it: Lua prints numbers with 14 significant digits."""
    return float(f"{value:.14g}")


class MemoryIndexStore:
    """One namespace (`base`, from `brain.keys`) of an in-memory index: an `IndexStore`. Holds no state of
    its own (everything is in the keyspace), so build one per call."""

    def __init__(self, space: Keyspace, base: str) -> None:
        self._space = space
        self.base = base

    def _name(self, part: str) -> str:
        return f"{self.base}:{part}"

    def _state(self) -> _Namespace | None:
        return self._space.get(self._name("docs"), _Namespace)

    def _stored(self) -> str | None:
        stats = self._space.get(self._name("stats"), _Stats)
        return None if stats is None else stats.analysis

    def _record(self, analysis: str) -> None:
        self._space.setdefault(self._name("stats"), lambda: _Stats(analysis)).analysis = analysis

    def _current(self, analysis: str, *, claim: bool) -> bool:
        """Whether the postings are `analysis`'s; an empty namespace is anyone's (and `claim` takes it)."""
        if self._stored() == analysis:
            return True
        state = self._state()
        if state is not None and state.docs:
            return False
        if claim:
            self._record(analysis)
        return True

    def _tidy(self, state: _Namespace) -> None:
        state.snapshot = None
        if state.empty:
            self._space.delete(self._name("docs"))

    async def add(self, entries: Sequence[IndexEntry], analysis: str) -> list[int]:
        self._space.check()
        return [self._add(entry, analysis) for entry in entries]

    def _add(self, entry: IndexEntry, analysis: str) -> int:
        if not self.claim(analysis):
            return STALE
        return self.put(entry)

    def claim(self, analysis: str) -> bool:
        """Whether `analysis` made the postings (an empty namespace takes it): what a write checks first."""
        return self._current(analysis, claim=True)

    def put(self, entry: IndexEntry) -> int:
        """Index `entry` (after `claim`), at once: 1 added, 0 its id is there (nothing changes)."""
        state = self._space.setdefault(self._name("docs"), _Namespace)
        doc = entry.doc
        if doc.id in state.docs:
            return 0
        if entry.vector:  # an empty vector is no vector, as in Redis (its packed form is empty)
            state.vectors[doc.id] = array("f", entry.vector).tobytes()
        length = min(sum(entry.counts.values()), MAX_LENGTH)
        state.seq += 1
        state.nums[doc.id] = state.seq
        state.docs[doc.id] = entry.record.model_dump_json()
        state.lens[doc.id] = length
        state.times[doc.id] = doc.ts
        state.total += length
        for term, tf in entry.counts.items():
            state.postings.setdefault(term, {})[doc.id] = min(tf, MAX_TF)
        for tag in doc.tags:
            state.tags.setdefault(tag, set()).add(doc.id)
        state.snapshot = None
        return 1

    async def delete(self, doc_id: str, terms: Sequence[str], tags: Sequence[str], analysis: str) -> int:
        self._space.check()
        if not self._current(analysis, claim=False):
            return STALE
        state = self._state()
        if state is None or doc_id not in state.docs:
            return 0
        del state.docs[doc_id]
        state.nums.pop(doc_id, None)
        state.total -= state.lens.pop(doc_id, 0)
        state.vectors.pop(doc_id, None)
        state.times.pop(doc_id, None)
        # only the postings and tags named go, as in Redis: the caller names what the document was given
        for term in terms:
            self._discard(state.postings, term, doc_id)
        for tag in tags:
            self._discard(state.tags, tag, doc_id)
        self._tidy(state)
        return 1

    @staticmethod
    def _discard(members: dict[str, Any], name: str, doc_id: str) -> None:
        held = members.get(name)
        if held is None or doc_id not in held:
            return
        if isinstance(held, set):
            held.discard(doc_id)
        else:
            del held[doc_id]
        if not held:
            del members[name]

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
        if not self._current(analysis, claim=False):
            return None
        state = self._state()
        n = 0 if state is None else len(state.docs)
        if state is None or n == 0:
            return Ranking(total=0, docs=0)
        avg = state.total / n
        scores: dict[str, float] = {}  # in the order ids were first met, as the script keeps them
        for term in sorted(terms):  # the Redis store passes terms sorted: sums are added in that order
            posted = state.postings.get(term)
            if not posted:
                continue
            df = len(posted)
            idf = float(terms[term]) * math.log(1 + (n - df + 0.5) / (df + 0.5))
            for doc_id, tf in _highest(posted, per_term, state.nums):
                if doc_id not in state.docs:  # removed without these postings: skipped, as in Redis
                    continue
                length = state.lens[doc_id]
                score = idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avg))
                scores[doc_id] = score if doc_id not in scores else scores[doc_id] + score
        low = -_FOREVER if start is None else start
        high = _FOREVER if end is None else end
        timed = low > -1e300 or high < 1e300
        wanted = [state.tags.get(tag, set()) for tag in tags]
        hits = [
            (doc_id, score)
            for doc_id, score in scores.items()
            if (not timed or low <= state.times.get(doc_id, 0.0) <= high)
            and (not wanted or any(doc_id in ids for ids in wanted))
        ]
        hits.sort(key=lambda hit: (-hit[1], hit[0]))
        first = max(offset, 0)
        page = hits[first : first + max(limit, 0)]
        return Ranking(total=len(hits), hits=tuple((i, _lua_number(s)) for i, s in page), docs=n)

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
        options: dict[str, Any] = {"offset": 0, "limit": depth, "analysis": analysis, "per_term": per_term}
        options |= {"tags": tags, "k1": k1, "b": b}
        ranking = await self.rank(terms, start=start, end=end, **options)  # none of these yields: one moment
        within = await self.rank(terms, start=low, end=high, **options)
        if ranking is None or within is None:
            return None
        period = await self.allowed(tags, low, high) or set()
        return SpanRanking(
            ranking=ranking, within=within, period=frozenset(period), n_docs=await self.count()
        )

    async def docs(self, ids: Sequence[str]) -> list[IndexedDoc]:
        state = self._state()
        if state is None:
            return []
        return [IndexedDoc.model_validate_json(state.docs[i]) for i in ids if i in state.docs]

    async def all_docs(self) -> list[IndexedDoc]:
        return self._all_docs()

    def _all_docs(self) -> list[IndexedDoc]:
        state = self._state()
        if state is None:
            return []
        return [IndexedDoc.model_validate_json(state.docs[i]) for i in sorted(state.docs)]

    async def count(self) -> int:
        state = self._state()
        return 0 if state is None else len(state.docs)

    async def analysis(self) -> str | None:
        return self._stored()

    async def allowed(self, tags: Sequence[str], start: float | None, end: float | None) -> set[str] | None:
        wanted = sorted({t.strip().lower() for t in tags if t.strip()})  # as the Redis store's `tag_list`
        dated = start is not None or end is not None
        if not wanted and not dated:
            return None
        state = self._state() or _Namespace()
        allowed = set().union(*(state.tags.get(t, set()) for t in wanted)) if wanted else None
        if dated:
            timed = set(self._timed(state, start, end))
            allowed = timed if allowed is None else allowed & timed
        return allowed

    @staticmethod
    def _timed(state: _Namespace, start: float | None, end: float | None) -> list[str]:
        """Ids within [start, end], newest first; equal times by greater id first (Redis's reverse range)."""
        low = -math.inf if start is None else start
        high = math.inf if end is None else end
        timed = [(ts, doc_id) for doc_id, ts in state.times.items() if low <= ts <= high]
        return [doc_id for _, doc_id in sorted(timed, reverse=True)]

    async def by_time(self, start: float | None, end: float | None) -> list[str]:
        state = self._state()
        return [] if state is None else self._timed(state, start, end)

    async def nearest(
        self, vector: Sequence[float], allowed: set[str] | None, limit: int
    ) -> list[tuple[str, float]]:
        state = self._state()
        if state is None or not state.vectors:
            return []
        if state.snapshot is None:  # as Redis's `VectorCache` loads one: only the newest dimension is kept
            state.snapshot = Snapshot().extended(list(state.vectors.items()), len(state.vectors))
        return state.snapshot.nearest(vector, limit, allowed)

    async def get_source(self, source: str) -> dict[str, Any] | None:
        sources = self._space.get(self._name("sources"), _Sources)
        raw = None if sources is None else sources.by_name.get(source)
        return None if raw is None else dict(json.loads(raw))

    async def set_source(self, source: str, info: dict[str, Any]) -> None:
        self._space.check()
        raw = json.dumps(info)  # as Redis stores it: what JSON cannot hold fails here, nothing is written
        self._space.setdefault(self._name("sources"), _Sources).by_name[source] = raw

    async def rebuild(self, analysis: str, counts: Counts, progress: Progress | None = None) -> int:
        old = self._stored()
        if old == analysis:
            return 0
        docs = self._all_docs()
        progress = progress or ProgressLog()
        task = f"re-analysing {self.base} ({old} -> {analysis})"
        report(progress, task, 0, len(docs), "documents")
        # every count is taken before anything changes: a failing `counts` leaves the namespace as it was
        old_terms = {t for doc in docs for t in counts(doc, old)} if old is not None else set()
        fresh: list[dict[str, int]] = []
        for first in range(0, len(docs), CHUNK):
            fresh += [counts(doc, analysis) for doc in docs[first : first + CHUNK]]
            if first + CHUNK < len(docs):
                report(progress, task, first + CHUNK, len(docs), "documents")
        state = self._state()
        if state is not None:
            for term in old_terms:
                state.postings.pop(term, None)
            state.lens.clear()
            state.nums.clear()
            state.seq = 0
            for doc, doc_counts in zip(docs, fresh, strict=True):  # numbered again in id order, as Redis
                state.seq += 1
                state.nums[doc.id] = state.seq
                state.lens[doc.id] = min(sum(doc_counts.values()), MAX_LENGTH)
                for term, tf in doc_counts.items():
                    state.postings.setdefault(term, {})[doc.id] = min(tf, MAX_TF)
            state.total = sum(state.lens.values())
            self._tidy(state)
        self._record(analysis)
        report(progress, task, len(docs), len(docs), "documents")
        return len(docs)

    async def drop(self, counts: Counts) -> int:
        """Delete every name of the namespace; `counts` is not needed (the postings are held here)."""
        held = await self.count()
        self._space.delete(self._name("docs"), self._name("stats"), self._name("sources"))
        return held
