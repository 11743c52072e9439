"""Retrieval metrics in the LongMemEval style, over one ranked list of ids and a question's evidence. Pure.

recall@k is the share of the evidence found in the first k (a question with two evidence turns counts half
for each); NDCG@k uses binary relevance, its ideal ranking puts every evidence id first. Turns roll up to
sessions: a session ranks where its first turn does."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence

__all__ = ["mean", "ndcg_at", "p50", "recall_at", "session_ranking"]


def recall_at(ranked: Sequence[str], evidence: Iterable[str], k: int) -> float:
    """Share of `evidence` (distinct ids) among the first `k` of `ranked`; 0.0 without evidence."""
    wanted = set(evidence)
    if not wanted:
        return 0.0
    return len(wanted & set(ranked[:k])) / len(wanted)


def ndcg_at(ranked: Sequence[str], evidence: Iterable[str], k: int) -> float:
    """Normalised discounted cumulative gain of the first `k` of `ranked`, each evidence id worth 1."""
    wanted = set(evidence)
    if not wanted:
        return 0.0
    seen: set[str] = set()
    dcg = 0.0
    for rank, item in enumerate(ranked[:k], start=1):
        if item in wanted and item not in seen:
            dcg += 1 / math.log2(rank + 1)
        seen.add(item)
    ideal = sum(1 / math.log2(rank + 1) for rank in range(1, min(len(wanted), k) + 1))
    return dcg / ideal


def session_ranking(ranked_turns: Sequence[str], session_of: Mapping[str, str]) -> list[str]:
    """The sessions of `ranked_turns`, each once, in the order of their best turn (unknown turns skipped)."""
    sessions: list[str] = []
    for turn in ranked_turns:
        session = session_of.get(turn)
        if session is not None and session not in sessions:
            sessions.append(session)
    return sessions


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def p50(values: Sequence[float]) -> float:
    return statistics.median(values) if values else 0.0
