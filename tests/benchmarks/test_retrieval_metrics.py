"""The pure retrieval metrics of the benchmarks (`benchmarks/common/retrieval_metrics.py`)."""

import math

import pytest

from benchmarks.common.retrieval_metrics import mean, ndcg_at, p50, recall_at, session_ranking


def test_recall_counts_each_evidence_id_once_within_k() -> None:
    ranked = ["a", "b", "c", "d", "e", "f"]
    assert recall_at(ranked, ["c"], 5) == 1.0
    assert recall_at(ranked, ["f"], 5) == 0.0
    assert recall_at(ranked, ["a", "f"], 5) == 0.5
    assert recall_at(ranked, ["a", "a"], 5) == 1.0  # distinct evidence
    assert recall_at(ranked, [], 5) == 0.0
    assert recall_at([], ["a"], 5) == 0.0


def test_ndcg_is_one_for_the_ideal_ranking_and_discounts_later_ranks() -> None:
    assert ndcg_at(["a", "b", "x"], ["a", "b"], 10) == pytest.approx(1.0)
    assert ndcg_at(["x", "a"], ["a"], 10) == pytest.approx(1 / math.log2(3))
    # one of two found at rank 3: (1/log2(4)) / (1 + 1/log2(3))
    assert ndcg_at(["x", "y", "a"], ["a", "b"], 10) == pytest.approx(0.5 / (1 + 1 / math.log2(3)))
    assert ndcg_at(["x", "y", "a"], ["a"], 2) == 0.0  # beyond k
    assert ndcg_at(["a", "a"], ["a"], 10) == pytest.approx(1.0)  # a repeat gains nothing
    assert ndcg_at(["a"], [], 10) == 0.0


def test_sessions_rank_where_their_best_turn_does() -> None:
    session_of = {"t1": "s1", "t2": "s1", "t3": "s2", "t4": "s3"}
    assert session_ranking(["t2", "t3", "t1", "tx", "t4"], session_of) == ["s1", "s2", "s3"]
    assert session_ranking(["t4", "t1"], session_of) == ["s3", "s1"]
    assert recall_at(session_ranking(["t3", "t1"], session_of), ["s1"], 1) == 0.0


def test_mean_and_median_of_nothing_are_zero() -> None:
    assert mean([]) == 0.0
    assert p50([]) == 0.0
    assert mean([1.0, 2.0]) == 1.5
    assert p50([3.0, 1.0, 2.0]) == 2.0
