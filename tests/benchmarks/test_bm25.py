"""The plain BM25 baseline of the retrieval benchmark (`benchmarks/common/bm25.py`)."""

import math

import pytest

from benchmarks.common.bm25 import Bm25, tokens


def test_tokens_are_plain_lower_cased_words() -> None:
    words = ["7", "february", "2022", "maya", "i", "ran", "running"]
    assert tokens("[7 February 2022] Maya: I ran, running!", "en") == words
    words = tokens("我今天在厦门跑完了半程马拉松。", "zh")
    assert "厦门" in words
    assert "。" not in words
    assert "".join(words) == "我今天在厦门跑完了半程马拉松"


def test_scores_follow_okapi_bm25() -> None:
    passages = [["cat", "sat"], ["dog", "sat", "sat"], ["bird"]]
    bm25 = Bm25(passages)
    idf_cat = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))
    avg = 2.0
    expected = idf_cat * 1 * 2.5 / (1 + 1.5 * (1 - 0.75 + 0.75 * 2 / avg))
    assert bm25.scores(["cat"]) == pytest.approx([expected, 0.0, 0.0])
    assert bm25.scores(["sat"])[1] > bm25.scores(["sat"])[0]  # more occurrences win despite length


def test_top_ranks_best_first_and_leaves_out_passages_without_a_term() -> None:
    bm25 = Bm25([["red", "car"], ["blue", "car", "red", "red"], ["green"], ["red"]])
    assert bm25.top(["red", "car"], 10) == [0, 1, 3]  # both words in the shorter passage come first
    assert bm25.top(["red", "car"], 1) == [0]
    assert bm25.top(["red", "red", "blue"], 2) == [1, 3]
    assert Bm25([["a"], ["a"]]).top(["a"], 2) == [0, 1]  # ties keep the passages' order
    assert bm25.top(["purple"], 10) == []
    assert Bm25([]).top(["x"], 3) == []
