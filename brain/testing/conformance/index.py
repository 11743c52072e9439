"""`IndexStoreConformance`: what every `IndexStore` does (`brain.storage.index`), as tests. The suite needs
pytest-asyncio in auto mode (`asyncio_mode = "auto"`).

Entries carry hand-made term counts (no analyzer): a document's text is its terms, each repeated by its
count, and the suite's two analyses post those words (`OLD`) or their upper case (`NEW`)."""

from __future__ import annotations

import asyncio
import math
import uuid
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest

from brain.keys import archival_base
from brain.progress import ProgressEvent
from brain.storage import Backend, IndexedDoc, IndexEntry, IndexStore, Ranking
from brain.storage.index import STALE
from brain.testing.conformance.base import BackendSuite

__all__ = ["IndexStoreConformance"]

OLD, NEW = "conformance-a", "conformance-b"


def _user(tag: str) -> str:
    """A user id no other test (or run) uses."""
    return f"conformance-index-{tag}-{uuid.uuid4().hex}"


def _index(backend: Backend, tag: str) -> IndexStore:
    return backend.index(archival_base(backend.prefix, _user(tag)))


def _entry(
    doc_id: str, counts: dict[str, int], *, vector: Sequence[float] | None = None, **fields: Any
) -> IndexEntry:
    text = " ".join(term for term, tf in counts.items() for _ in range(tf))
    fields.setdefault("ts", 1_000.0)
    doc = IndexedDoc(id=doc_id, text=text, **fields)
    return IndexEntry(doc=doc, counts=counts, vector=None if vector is None else tuple(vector))


def _counts(doc: IndexedDoc, analysis: str) -> dict[str, int]:
    """The suite's analyses: `OLD` posts a text's words, `NEW` their upper case."""
    words = doc.text.split()
    return dict(Counter(words if analysis == OLD else [w.upper() for w in words]))


async def _rank(store: IndexStore, terms: dict[str, float], **options: Any) -> Ranking | None:
    given: dict[str, Any] = {"tags": (), "start": None, "end": None, "offset": 0, "limit": 10}
    given |= {"analysis": OLD, "per_term": 1_000, "k1": 1.2, "b": 0.75} | options
    return await store.rank(terms, **given)


async def _ids(store: IndexStore, terms: dict[str, float], **options: Any) -> list[str]:
    ranking = await _rank(store, terms, **options)
    assert ranking is not None
    return [doc_id for doc_id, _ in ranking.hits]


def _bm25(tf: int, df: int, n: int, length: int, avg: float, weight: float = 1.0) -> float:
    """The documented formula, with k1 = 1.2 and b = 0.75."""
    idf = weight * math.log(1 + (n - df + 0.5) / (df + 0.5))
    return idf * tf * 2.2 / (tf + 1.2 * (1 - 0.75 + 0.75 * length / avg))


class IndexStoreConformance(BackendSuite):
    """Tests every `IndexStore` passes. Subclass it in a test module and override the `backend` fixture: a
    `Backend` whose `prefix` no other test uses (or an empty one)."""

    async def test_add_then_docs_round_trip(self, backend: Backend) -> None:
        store = _index(backend, "round-trip")
        metadata = {"page": 3, "who": "Zoë", "nested": {"k": [1, 2]}}
        fields: dict[str, Any] = {"tags": ("home", "work"), "source": "notes.md", "ts": 1234.5}
        entry = _entry("d1", {"tea": 2}, metadata=metadata, **fields)
        assert await store.add([entry], OLD) == [1]
        assert await store.docs(["d1"]) == [entry.doc]

    async def test_add_answers_per_entry_and_keeps_the_first(self, backend: Backend) -> None:
        store = _index(backend, "dup")
        first, other = _entry("a", {"tea": 1}), _entry("a", {"milk": 1})
        assert await store.add([first, _entry("b", {"tea": 1}), other], OLD) == [1, 1, 0]
        assert await store.add([other], OLD) == [0]
        assert await store.docs(["a"]) == [first.doc]
        assert await store.count() == 2
        assert await _ids(store, {"milk": 1.0}) == []

    async def test_empty_namespace_takes_the_analysis(self, backend: Backend) -> None:
        store = _index(backend, "takes")
        assert await store.analysis() is None
        assert await store.add([], OLD) == []
        assert await store.add([_entry("d1", {"tea": 1})], OLD) == [1]
        assert await store.analysis() == OLD

    async def test_add_under_another_analysis_is_stale(self, backend: Backend) -> None:
        store = _index(backend, "stale-add")
        await store.add([_entry("d1", {"tea": 1})], OLD)
        assert await store.add([_entry("d2", {"tea": 1}), _entry("d3", {"tea": 1})], NEW) == [STALE, STALE]
        assert await store.count() == 1 and await store.docs(["d2", "d3"]) == []
        assert await store.analysis() == OLD

    async def test_emptied_namespace_takes_a_new_analysis(self, backend: Backend) -> None:
        store = _index(backend, "emptied")
        await store.add([_entry("d1", {"tea": 1})], OLD)
        assert await store.delete("d1", ["tea"], [], OLD) == 1
        assert await store.add([_entry("d2", {"TEA": 1})], NEW) == [1]
        assert await store.analysis() == NEW
        assert await store.add([_entry("d3", {"tea": 1})], OLD) == [STALE]

    async def test_delete_removes_document_postings_and_vector(self, backend: Backend) -> None:
        store = _index(backend, "delete")
        one = _entry("d1", {"tea": 1}, tags=("red",), ts=100.0, vector=(1.0, 0.0))
        two = _entry("d2", {"tea": 2}, ts=200.0, vector=(0.0, 1.0))
        await store.add([one, two], OLD)
        assert await store.delete("d1", ["tea"], ["red"], OLD) == 1
        assert await store.count() == 1 and await store.docs(["d1"]) == []
        ranking = await _rank(store, {"tea": 1.0})  # n, df and the average length no longer count d1
        assert ranking is not None and ranking.total == 1 and ranking.hits[0][0] == "d2"
        assert ranking.hits[0][1] == pytest.approx(_bm25(2, 1, 1, 2, 2.0), rel=1e-12)
        assert [i for i, _ in await store.nearest((1.0, 0.0), None, 5)] == ["d2"]
        assert await store.allowed(["red"], None, None) == set()
        assert await store.by_time(None, None) == ["d2"]
        assert await store.delete("d1", ["tea"], ["red"], OLD) == 0

    async def test_delete_missing_or_stale(self, backend: Backend) -> None:
        store = _index(backend, "delete-stale")
        assert await store.delete("nope", ["tea"], [], OLD) == 0
        assert await store.delete("nope", ["tea"], [], NEW) == 0  # an empty namespace is no one's
        await store.add([_entry("d1", {"tea": 1})], OLD)
        assert await store.delete("d1", ["tea"], [], NEW) == STALE
        assert await store.count() == 1
        assert await store.delete("nope", ["tea"], [], OLD) == 0

    async def test_rank_scores_are_bm25(self, backend: Backend) -> None:
        store = _index(backend, "bm25")
        docs = [_entry("d1", {"tea": 2, "green": 1}), _entry("d2", {"tea": 1, "black": 3})]
        await store.add([*docs, _entry("d3", {"coffee": 1})], OLD)
        ranking = await _rank(store, {"tea": 1.0, "green": 1.0})
        avg = 8 / 3
        assert ranking is not None and ranking.total == 2
        assert [i for i, _ in ranking.hits] == ["d1", "d2"]
        expected = [_bm25(2, 2, 3, 3, avg) + _bm25(1, 1, 3, 3, avg), _bm25(1, 2, 3, 4, avg)]
        assert [s for _, s in ranking.hits] == pytest.approx(expected, rel=1e-12)
        tuned = await _rank(store, {"black": 1.0}, k1=2.0, b=0.5)
        idf = math.log(1 + 2.5 / 1.5)
        assert tuned is not None and tuned.hits[0][1] == pytest.approx(
            idf * 3 * 3.0 / (3 + 2.0 * (0.5 + 0.5 * 4 / avg)), rel=1e-12
        )

    async def test_rank_weighs_terms(self, backend: Backend) -> None:
        store = _index(backend, "weights")
        await store.add([_entry("d1", {"tea": 1}), _entry("d2", {"milk": 1}), _entry("d3", {"x": 1})], OLD)
        plain, double = await _rank(store, {"tea": 1.0}), await _rank(store, {"tea": 2.0})
        assert plain is not None and double is not None
        assert double.hits[0][1] == pytest.approx(2 * plain.hits[0][1], rel=1e-12)
        assert await _ids(store, {"tea": 0.5, "milk": 1.0}) == ["d2", "d1"]
        assert await _ids(store, {"tea": 1.0, "milk": 0.5}) == ["d1", "d2"]

    async def test_rank_reads_per_term_postings_of_highest_frequency(self, backend: Backend) -> None:
        store = _index(backend, "per-term")
        await store.add([_entry(f"d{tf}", {"tea": tf, "pad": 4 - tf}) for tf in (1, 2, 3)], OLD)
        ranking = await _rank(store, {"tea": 1.0}, per_term=1)
        assert ranking is not None and ranking.total == 1 and ranking.hits[0][0] == "d3"
        assert ranking.hits[0][1] == pytest.approx(_bm25(3, 3, 3, 4, 4.0), rel=1e-12)  # df counts all
        assert await _ids(store, {"tea": 1.0}, per_term=2) == ["d3", "d2"]
        ties = _index(backend, "per-term-ties")  # equal frequencies: the latest added are read first
        await ties.add([_entry(i, {"tea": 1}) for i in ("p1", "p3", "p2", "p4")], OLD)
        assert await _ids(ties, {"tea": 1.0}, per_term=2) == ["p2", "p4"]

    async def test_rank_ties_by_id(self, backend: Backend) -> None:
        store = _index(backend, "ties")
        await store.add([_entry(i, {"tea": 1}) for i in ("b", "c", "a", "B")], OLD)
        assert await _ids(store, {"tea": 1.0}) == ["B", "a", "b", "c"]

    async def test_rank_keeps_any_of_the_tags(self, backend: Backend) -> None:
        store = _index(backend, "tags")
        tagged = {"d1": ("red",), "d2": ("blue",), "d3": ("blue", "red"), "d4": ()}
        await store.add([_entry(i, {"tea": 1}, tags=t) for i, t in tagged.items()], OLD)
        assert await _ids(store, {"tea": 1.0}, tags=["red"]) == ["d1", "d3"]
        assert await _ids(store, {"tea": 1.0}, tags=["red", "blue"]) == ["d1", "d2", "d3"]
        assert await _ids(store, {"tea": 1.0}, tags=["green"]) == []
        assert await _ids(store, {"tea": 1.0}) == ["d1", "d2", "d3", "d4"]

    async def test_rank_keeps_the_time_range(self, backend: Backend) -> None:
        store = _index(backend, "time")
        await store.add([_entry(f"d{ts}", {"tea": 1}, ts=float(ts)) for ts in (100, 200, 300)], OLD)
        assert await _ids(store, {"tea": 1.0}, start=200.0) == ["d200", "d300"]
        assert await _ids(store, {"tea": 1.0}, end=200.0) == ["d100", "d200"]
        assert await _ids(store, {"tea": 1.0}, start=200.0, end=200.0) == ["d200"]
        assert await _ids(store, {"tea": 1.0}, start=301.0) == []

    async def test_rank_pages(self, backend: Backend) -> None:
        store = _index(backend, "pages")
        await store.add([_entry(f"d{tf}", {"tea": tf, "pad": 6 - tf}) for tf in range(1, 6)], OLD)
        assert await _ids(store, {"tea": 1.0}) == ["d5", "d4", "d3", "d2", "d1"]
        page = await _rank(store, {"tea": 1.0}, offset=1, limit=2)
        assert page is not None and page.total == 5 and [i for i, _ in page.hits] == ["d4", "d3"]
        assert await _rank(store, {"tea": 1.0}, offset=10) == Ranking(total=5)
        assert await _rank(store, {"tea": 1.0}, limit=0) == Ranking(total=5)

    async def test_rank_stale_or_empty(self, backend: Backend) -> None:
        store = _index(backend, "rank-stale")
        assert await _rank(store, {"tea": 1.0}) == Ranking(total=0)
        assert await _rank(store, {"tea": 1.0}, analysis=NEW) == Ranking(total=0)
        await store.add([_entry("d1", {"tea": 1})], OLD)
        assert await _rank(store, {"tea": 1.0}, analysis=NEW) is None
        assert await _rank(store, {"unknown": 1.0}) == Ranking(total=0)

    async def test_rank_tells_the_document_count_it_read(self, backend: Backend) -> None:
        # what fact recall trusts to skip the searches of a user who has no facts (`roles.prompt_facts`)
        store = _index(backend, "rank-docs")
        empty = await _rank(store, {"tea": 1.0})
        assert empty is not None and empty.docs in (0, None)
        says = empty.docs is not None  # a store says it on every ranking, or on none
        await store.add([_entry("d1", {"tea": 1}, ts=100.0), _entry("d2", {"cake": 1}, ts=200.0)], OLD)
        for terms in ({"tea": 1.0}, {"unknown": 1.0}):
            ranking = await _rank(store, terms, offset=5)
            assert ranking is not None and ranking.docs == (2 if says else None)
        given: dict[str, Any] = {"analysis": OLD, "per_term": 1_000, "k1": 1.2, "b": 0.75}
        span = await store.rank_span(
            {"tea": 1.0}, tags=[], start=None, end=None, low=150.0, high=250.0, depth=1, **given
        )
        assert span is not None and span.n_docs == 2
        assert span.ranking.docs == span.within.docs == (2 if says else None)

    async def test_rank_span_is_both_rankings_the_period_and_the_count_at_once(
        self, backend: Backend
    ) -> None:
        store = _index(backend, "span")
        docs = [("d100", {"tea": 1}, 100.0, ("red",)), ("d200", {"tea": 2}, 200.0, ("red",))]
        docs += [("d300", {"cake": 1}, 300.0, ("red",)), ("d400", {"tea": 3}, 400.0, ("blue",))]
        await store.add([_entry(i, c, ts=ts, tags=t) for i, c, ts, t in docs], OLD)
        given: dict[str, Any] = {"analysis": OLD, "per_term": 1_000, "k1": 1.2, "b": 0.75}
        found = await store.rank_span(
            {"tea": 1.0}, tags=["red"], start=150.0, end=None, low=150.0, high=350.0, depth=1, **given
        )
        assert found is not None and found.n_docs == 4 and found.period == {"d200", "d300"}
        assert found.ranking == await _rank(store, {"tea": 1.0}, tags=["red"], start=150.0, limit=1)
        assert found.within == await _rank(store, {"tea": 1.0}, tags=["red"], start=150.0, end=350.0, limit=1)
        assert found.ranking.total == 1 and found.ranking.hits[0][0] == "d200"
        everything = await store.rank_span(
            {"tea": 1.0}, tags=[], start=None, end=None, low=0.0, high=250.0, depth=10, **given
        )
        assert everything is not None and everything.period == {"d100", "d200"}
        assert [i for i, _ in everything.ranking.hits] == ["d400", "d200", "d100"]
        assert [i for i, _ in everything.within.hits] == ["d200", "d100"] and everything.within.total == 2
        assert (
            await store.rank_span(
                {"tea": 1.0},
                tags=[],
                start=None,
                end=None,
                low=0.0,
                high=1.0,
                depth=10,
                **given | {"analysis": NEW},
            )
            is None
        )
        empty = await _index(backend, "span-empty").rank_span(
            {"tea": 1.0}, tags=[], start=None, end=None, low=0.0, high=1.0, depth=10, **given
        )
        assert empty is not None and empty.n_docs == 0 and not empty.period and empty.ranking.total == 0

    async def test_docs_in_order_without_missing(self, backend: Backend) -> None:
        store = _index(backend, "docs")
        entries = [_entry(i, {"tea": 1}) for i in ("a", "b", "c")]
        await store.add(entries, OLD)
        assert await store.docs(["c", "missing", "a"]) == [entries[2].doc, entries[0].doc]
        assert await store.docs([]) == []

    async def test_all_docs_by_id_and_count(self, backend: Backend) -> None:
        store = _index(backend, "all")
        assert await store.all_docs() == [] and await store.count() == 0
        await store.add([_entry(i, {"tea": 1}) for i in ("b", "a", "c")], OLD)
        assert [d.id for d in await store.all_docs()] == ["a", "b", "c"]
        assert await store.count() == 3

    async def test_allowed_filters(self, backend: Backend) -> None:
        store = _index(backend, "allowed")
        given = [("d1", ("red",), 100.0), ("d2", ("blue",), 200.0), ("d3", (), 300.0)]
        await store.add([_entry(i, {"tea": 1}, tags=t, ts=ts) for i, t, ts in given], OLD)
        assert await store.allowed([], None, None) is None
        assert await store.allowed(["red"], None, None) == {"d1"}
        assert await store.allowed(["red", "blue"], None, None) == {"d1", "d2"}
        assert await store.allowed([], 150.0, None) == {"d2", "d3"}
        assert await store.allowed([], None, 100.0) == {"d1"}
        assert await store.allowed(["red", "blue"], 150.0, None) == {"d2"}
        assert await store.allowed(["green"], None, None) == set()

    async def test_by_time_newest_first(self, backend: Backend) -> None:
        store = _index(backend, "by-time")
        assert await store.by_time(None, None) == []
        timed = {"a": 100.0, "b": 300.0, "c": 200.0, "d": 300.0}
        await store.add([_entry(i, {"tea": 1}, ts=ts) for i, ts in timed.items()], OLD)
        assert await store.by_time(None, None) == ["d", "b", "c", "a"]  # equal times: greater id first
        assert await store.by_time(200.0, None) == ["d", "b", "c"]
        assert await store.by_time(None, 200.0) == ["c", "a"]

    async def test_nearest_is_cosine_best_first(self, backend: Backend) -> None:
        store = _index(backend, "nearest")
        assert await store.nearest((1.0, 0.0), None, 5) == []
        vectors = {"x": (1.0, 0.0), "y": (0.0, 1.0), "xy": (1.0, 1.0), "none": None}
        await store.add([_entry(i, {"tea": 1}, vector=v) for i, v in vectors.items()], OLD)
        found = await store.nearest((1.0, 0.5), None, 10)
        assert [i for i, _ in found] == ["xy", "x", "y"]
        cosines = [1.5 / math.sqrt(2 * 1.25), 1 / math.sqrt(1.25), 0.5 / math.sqrt(1.25)]
        assert [s for _, s in found] == pytest.approx(cosines, rel=1e-5)

    async def test_nearest_allowed_and_limit(self, backend: Backend) -> None:
        store = _index(backend, "nearest-allowed")
        vectors = {"x": (1.0, 0.0), "y": (0.0, 1.0), "xy": (1.0, 1.0), "none": None}
        await store.add([_entry(i, {"tea": 1}, vector=v) for i, v in vectors.items()], OLD)
        assert [i for i, _ in await store.nearest((1.0, 0.5), None, 1)] == ["xy"]
        assert [i for i, _ in await store.nearest((1.0, 0.5), {"x", "y", "gone"}, 10)] == ["x", "y"]
        assert await store.nearest((1.0, 0.5), set(), 10) == []
        assert await store.nearest((1.0, 0.5), {"none"}, 10) == []
        assert await store.nearest((1.0, 0.5), None, 0) == []

    async def test_nearest_other_dimension_finds_nothing(self, backend: Backend) -> None:
        store = _index(backend, "dimension")
        await store.add([_entry(i, {"tea": 1}, vector=(1.0, float(n))) for n, i in enumerate("ab")], OLD)
        assert await store.nearest((1.0, 0.0, 0.0), None, 5) == []
        assert await store.nearest((1.0,), None, 5) == []
        assert len(await store.nearest((1.0, 0.0), None, 5)) == 2

    async def test_sources_round_trip(self, backend: Backend) -> None:
        store, other = _index(backend, "sources"), _index(backend, "sources-other")
        assert await store.get_source("a.md") is None
        await store.set_source("a.md", {"hash": "h1", "ids": ["p1", "p2"]})
        await store.set_source("笔记 🙂.md", {"hash": "h2", "ids": []})
        assert await store.get_source("a.md") == {"hash": "h1", "ids": ["p1", "p2"]}
        await store.set_source("a.md", {"hash": "h3", "ids": ["p3"]})
        assert await store.get_source("a.md") == {"hash": "h3", "ids": ["p3"]}
        assert await store.get_source("笔记 🙂.md") == {"hash": "h2", "ids": []}
        assert await other.get_source("a.md") is None

    async def test_rebuild_reposts_under_the_new_analysis(self, backend: Backend) -> None:
        store = _index(backend, "rebuild")
        entries = [
            _entry("d1", {"tea": 2, "green": 1}, tags=("red",), vector=(1.0, 0.0)),
            _entry("d2", {"tea": 1}, vector=(0.0, 1.0)),
        ]
        await store.add(entries, OLD)
        assert await store.add([_entry("d3", {"TEA": 1})], NEW) == [STALE]
        assert await _rank(store, {"TEA": 1.0}, analysis=NEW) is None
        calls: list[tuple[str, str]] = []

        def counts(doc: IndexedDoc, analysis: str) -> dict[str, int]:
            calls.append((doc.id, analysis))
            return _counts(doc, analysis)

        assert await store.rebuild(NEW, counts) == 2
        assert {("d1", NEW), ("d2", NEW)} <= set(calls)  # the old terms too, where a store needs them
        assert await store.analysis() == NEW
        assert await store.all_docs() == [e.doc for e in entries]
        assert sorted(await _ids(store, {"TEA": 1.0}, analysis=NEW)) == ["d1", "d2"]
        assert await _ids(store, {"tea": 1.0}, analysis=NEW) == []
        assert await _ids(store, {"GREEN": 1.0}, analysis=NEW, tags=["red"]) == ["d1"]
        assert await _rank(store, {"tea": 1.0}) is None
        assert [i for i, _ in await store.nearest((0.0, 1.0), None, 1)] == ["d2"]
        assert await store.add([_entry("d3", {"TEA": 1})], NEW) == [1]
        assert await store.add([_entry("d4", {"tea": 1})], OLD) == [STALE]

    async def test_rebuild_tells_progress_and_is_idempotent(self, backend: Backend) -> None:
        store = _index(backend, "rebuild-progress")
        assert await _index(backend, "rebuild-empty").rebuild(NEW, _counts) == 0
        await store.add([_entry(f"d{i}", {"tea": 1}) for i in range(3)], OLD)
        events: list[ProgressEvent] = []
        assert await store.rebuild(NEW, _counts, events.append) == 3
        assert events[0].done == 0 and events[-1].finished and events[-1].total == 3
        calls: list[str] = []

        def counts(doc: IndexedDoc, analysis: str) -> dict[str, int]:
            calls.append(analysis)
            return _counts(doc, analysis)

        seen = len(events)
        assert await store.rebuild(NEW, counts, events.append) == 0
        assert calls == [] and len(events) == seen

    async def test_concurrent_rebuilds_work_once(self, backend: Backend) -> None:
        store = _index(backend, "rebuild-race")
        await store.add([_entry(f"d{i}", {"tea": 1}) for i in range(4)], OLD)
        calls: list[str] = []

        def counts(doc: IndexedDoc, analysis: str) -> dict[str, int]:
            calls.append(analysis)
            return _counts(doc, analysis)

        results = await asyncio.gather(*(store.rebuild(NEW, counts) for _ in range(3)))
        assert sorted(results) == [0, 0, 4]
        assert calls.count(NEW) == 4
        ranking = await _rank(store, {"TEA": 1.0}, analysis=NEW)
        assert ranking is not None and ranking.total == 4

    async def test_drop_deletes_the_namespace(self, backend: Backend) -> None:
        user, kept = _user("drop"), _index(backend, "drop-kept")
        store = backend.index(archival_base(backend.prefix, user))
        entries = [_entry(f"d{i}", {"tea": i + 1}, tags=("red",), vector=(1.0, i)) for i in range(3)]
        await store.add(entries, OLD)
        await kept.add([_entry("d0", {"tea": 1})], OLD)
        await store.set_source("a.md", {"ids": ["d0"]})
        assert await store.drop(_counts) == 3
        assert await store.count() == 0 and await store.all_docs() == []
        assert await store.analysis() is None and await store.get_source("a.md") is None
        assert await _rank(store, {"tea": 1.0}) == Ranking(total=0)
        assert await store.nearest((1.0, 0.0), None, 5) == [] and await store.by_time(None, None) == []
        assert await backend.user_leftovers(user) == []
        assert await kept.count() == 1
        assert await store.drop(_counts) == 0
        assert await store.add([_entry("d9", {"TEA": 1})], NEW) == [1]

    async def test_namespaces_are_isolated(self, backend: Backend) -> None:
        alice, bob = _user("iso-alice"), _user("iso-bob").encode() + b"\xff\x00"
        one = backend.index(archival_base(backend.prefix, alice))
        two = backend.index(archival_base(backend.prefix, bob))
        await one.add([_entry("d1", {"tea": 1}, tags=("red",), ts=100.0, vector=(1.0, 0.0))], OLD)
        await two.add([_entry("d1", {"coffee": 1}, ts=200.0, vector=(0.0, 1.0))], NEW)
        await one.set_source("a.md", {"who": "alice"})
        assert await _ids(two, {"tea": 1.0}, analysis=NEW) == []
        assert [d.text for d in await two.docs(["d1"])] == ["coffee"]
        assert await two.allowed(["red"], None, None) == set()
        assert await two.by_time(None, 150.0) == []
        [(nearest, cosine)] = await two.nearest((1.0, 0.0), None, 5)
        assert nearest == "d1" and abs(cosine) < 1e-6
        assert await two.get_source("a.md") is None and await two.analysis() == NEW
        assert await one.drop(_counts) == 1
        assert await two.count() == 1 and await _ids(two, {"coffee": 1.0}, analysis=NEW) == ["d1"]
        assert await backend.user_leftovers(alice) == []

    async def test_concurrent_adds(self, backend: Backend) -> None:
        store = _index(backend, "concurrent")
        tea, milk = _entry("same", {"tea": 1}), _entry("same", {"milk": 1})
        results = await asyncio.gather(store.add([tea], OLD), store.add([milk], OLD))
        assert sorted(results) == [[0], [1]]
        [kept] = await store.docs(["same"])
        lost = "milk" if kept == tea.doc else "tea"
        assert await _ids(store, {lost: 1.0}) == []
        await asyncio.gather(*(store.add([_entry(f"d{i:02}", {"tea": 1})], OLD) for i in range(20)))
        assert await store.count() == 21

    async def test_unicode_terms_and_ids(self, backend: Backend) -> None:
        store = _index(backend, "unicode")
        long_id = "长" * 256
        first = _entry("文档-🙂", {"绿茶": 2, "🍵": 1}, tags=("家庭",))
        second = _entry(long_id, {"绿茶": 1, "茶": 3})
        assert await store.add([first, second], OLD) == [1, 1]
        assert await _ids(store, {"绿茶": 1.0}) == ["文档-🙂", long_id]
        assert await _ids(store, {"🍵": 1.0}) == ["文档-🙂"]
        assert await store.allowed(["家庭"], None, None) == {"文档-🙂"}
        assert await store.docs([long_id, "文档-🙂"]) == [second.doc, first.doc]
        assert await store.delete("文档-🙂", ["绿茶", "🍵"], ["家庭"], OLD) == 1
        assert await _ids(store, {"🍵": 1.0}) == [] and await _ids(store, {"绿茶": 1.0}) == [long_id]
