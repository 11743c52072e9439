"""Parsing rerank replies and scoring by cosine: pure."""

from __future__ import annotations

import math

import pytest

from brain.llm.rerank import cosine_scores, parse_rerank
from brain.llm.wire import MalformedReply


def test_scores_come_back_in_document_order() -> None:
    reply = {
        "results": [
            {"index": 2, "relevance_score": 0.9},
            {"index": 0, "score": 0.1},
            {"index": 1, "relevance_score": -3},
        ]
    }
    assert parse_rerank(reply, 3) == [0.1, -3.0, 0.9]


@pytest.mark.parametrize(
    "reply",
    [
        None,
        [],
        {"results": {"index": 0}},
        {"results": [{"index": True, "relevance_score": 1}]},
        {"results": [{"index": 0, "relevance_score": math.inf}]},
        {"results": [{"index": 0, "relevance_score": None}]},
        {"results": []},
    ],
)
def test_malformed_replies(reply: object) -> None:
    with pytest.raises(MalformedReply):
        parse_rerank(reply, 1)


def test_cosine() -> None:
    assert cosine_scores([1.0, 0.0], []) == []
    assert cosine_scores([1.0, 0.0], [[2.0, 0.0], [0.0, 0.0], [-1.0, 0.0]]) == [1.0, 0.0, -1.0]
    with pytest.raises(MalformedReply):
        cosine_scores([1.0], [[1.0, 2.0]])
