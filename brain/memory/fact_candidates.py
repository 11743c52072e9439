"""Which facts a new fact must be reconciled with, and which new facts are another wording of one we hold.

A new fact may replace a held fact however either was worded, so candidates come from every side at once:
the held facts with the same subject/attribute (`Fact.key`, e.g. `user.city`), a deep BM25 pool ranked
twice, by BM25 (what the new wording finds) and by a symmetric measure (the terms both share, over both
sizes: what the old wording would find ranks as high), and the nearest by embedding (cosine: symmetric).
They are fused by reciprocal rank, the keyed ones first, and what a reconciliation prompt shows is bounded
in tokens, shared fairly between the new facts (`bounded`). Without keys, on `benchmarks/facts_scale.py`'s
life of 300 turns, candidates held the fact to replace 0.71 of the time by the symmetric measure alone,
0.78 by BM25 alone, 0.77 by the embedding alone and 0.77 fused: the keys are what make it 1.0.

A new fact is a duplicate of a current fact with the same key and the same value, or, when a
`threshold` is set, of one whose embedding is at least that similar, unless both name the same key with
different values (then it is a change: reconciliation decides). No threshold by default: on our
paraphrase set (`benchmarks/facts_dev`) the embedded multilingual-e5-small scores contradicting pairs
("lives in Paris" / "lives in Berlin", negations) higher than true paraphrases, in English and Chinese, so
no threshold separates them. The ranking, the merge rule and the budget are pure functions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from brain.memory.facts import FactMemory
from brain.search.analysis import query_weights
from brain.storage.facts import Fact, fact_key, fact_value, key_tag

__all__ = ["Candidate", "Probe", "bounded", "candidates", "cosine", "duplicate_of", "overlap"]

_RRF = 60
"""Reciprocal-rank fusion's usual constant: a ranking's head counts, its tail still does."""


@dataclass(frozen=True, slots=True)
class Probe:
    """A new fact as candidate search sees it: its text, key and value as extracted, its embedding."""

    text: str
    key: str = ""
    value: str = ""
    vector: Sequence[float] | None = None


@dataclass(frozen=True, slots=True)
class Candidate:
    """A current fact found for a probe: `score` orders them (keyed first), `cosine` is the embeddings'
    similarity when both have one."""

    fact: Fact
    score: float
    keyed: bool = False
    cosine: float | None = None


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors (0 when either is zero). Pure."""
    norm = math.sqrt(math.fsum(x * x for x in a) * math.fsum(y * y for y in b))
    return math.fsum(x * y for x, y in zip(a, b, strict=True)) / norm if norm else 0.0


def overlap(a: str, b: str) -> float:
    """How much two texts share, the same both ways: 2·|shared terms| / (|terms of a| + |terms of b|),
    over the search analysis's terms (stemmed words, Chinese words and characters). Pure."""
    return _dice(set(query_weights(a)), set(query_weights(b)))


def _dice(ta: set[str], tb: set[str]) -> float:
    return 2 * len(ta & tb) / (len(ta) + len(tb)) if ta and tb else 0.0


def fused(
    probe: Probe, facts: Sequence[Fact], lexical: Sequence[str], nearest: Sequence[tuple[str, float]]
) -> list[Candidate]:
    """The current `facts` ranked for `probe`: keyed ones first, then by reciprocal-rank fusion of the
    `lexical` pool's BM25 order, the same pool in the symmetric order (`overlap`) and the `nearest`
    one. Pure."""
    key = fact_key(probe.key)
    pool = {f.id: f for f in facts if f.current}
    cosines = dict(nearest)
    terms = set(query_weights(probe.text))  # the probe analysed once, each candidate once
    shared = {i: _dice(terms, set(query_weights(pool[i].text))) for i in lexical if i in pool}
    sym = sorted((i for i, s in shared.items() if s > 0), key=lambda i: -shared[i])
    score: dict[str, float] = {}
    for ranking in (sym, [i for i in lexical if i in pool], [i for i, _ in nearest if i in pool]):
        for rank, fact_id in enumerate(ranking):
            score[fact_id] = score.get(fact_id, 0.0) + 1 / (_RRF + rank)
    found = [
        Candidate(
            fact=f,
            score=score.get(i, 0.0) + (1.0 if key and f.key == key else 0.0),
            keyed=bool(key) and f.key == key,
            cosine=cosines.get(i),
        )
        for i, f in pool.items()
        if i in score or (key and f.key == key)
    ]
    return sorted(found, key=lambda c: (-c.score, c.fact.id))


async def candidates(
    memory: FactMemory, user_id: str | bytes, probe: Probe, *, depth: int
) -> list[Candidate]:
    """The user's current facts `probe` may duplicate or replace, best first (`fused`): every fact with
    its key, and the best `depth` of each of the lexical and the vector rankings."""
    index = memory.index(user_id)
    keyed: set[str] = set()
    key = fact_key(probe.key)
    if key:
        keyed = await index.store.allowed([key_tag(key)], None, None) or set()
    hits = await index.related(probe.text, limit=depth, ids_only=True)
    lexical = [h.doc.id for h in hits]
    nearest = list(await index.store.nearest(probe.vector, None, depth)) if probe.vector is not None else []
    ids = list(dict.fromkeys([*sorted(keyed), *lexical, *(i for i, _ in nearest)]))
    facts = await memory.get_many(user_id, ids)
    return fused(probe, facts, lexical, nearest)


def duplicate_of(probe: Probe, found: Sequence[Candidate], threshold: float | None) -> Fact | None:
    """The current fact `probe` says again, if any: one with the same key and value, else (with a
    `threshold`) the most similar by embedding at `threshold` or above, unless both name one key with
    different values. Pure."""
    key, value = fact_key(probe.key), fact_value(probe.value)
    for c in found:
        if key and value and c.fact.key == key and fact_value(c.fact.value) == value:
            return c.fact
    if threshold is None:
        return None
    similar = [c for c in found if c.cosine is not None and c.cosine >= threshold]
    for c in sorted(similar, key=lambda c: -(c.cosine or 0.0)):
        changed = key and c.fact.key == key and value and c.fact.value and fact_value(c.fact.value) != value
        if not changed:
            return c.fact
    return None


def bounded(per_probe: Sequence[Sequence[Candidate]], budget: int, count: Callable[[str], int]) -> list[Fact]:
    """The candidates a reconciliation prompt shows: taken in turn from each probe's list (its keyed
    ones first, then its best), each fact once, until `budget` tokens (as `count` gives them) are spent;
    every probe's first candidate is shown whatever the budget. Pure."""
    shown: dict[str, Fact] = {}
    spent, depth = 0, max((len(c) for c in per_probe), default=0)
    for rank in range(depth):
        for found in per_probe:
            if rank >= len(found) or found[rank].fact.id in shown:
                continue
            cost = count(found[rank].fact.text) + 4  # its line: "12: ..."
            if rank > 0 and spent + cost > budget:
                continue
            shown[found[rank].fact.id] = found[rank].fact
            spent += cost
    return list(shown.values())
