"""Reranking: one relevance score per candidate passage of a query. Pure parsing and scoring; the
requests are `OpenAILLM.rerank`'s.

Two kinds of endpoint give the scores (`llm.rerank_via`): a rerank endpoint (`POST {base_url}/rerank`
with `model`, `query`, `documents`, as Cohere, Jina, vLLM, TEI and infinity serve it), or an embeddings
endpoint, whose second model's vectors are compared by cosine."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from brain.llm.wire import MalformedReply

__all__ = ["Rerank", "cosine_scores", "parse_rerank"]

Rerank = Callable[[str, Sequence[str]], Awaitable[list[float]]]
"""A reranker: the relevance of each document to the query, in the documents' order (`LLM.rerank`)."""


def parse_rerank(reply: Any, count: int) -> list[float]:
    """The scores, in document order, of a rerank reply `{"results": [{"index", "relevance_score"}]}`
    for `count` documents (results may come in any order). Raises `MalformedReply` unless every document
    has exactly one finite score."""
    results = reply.get("results") if isinstance(reply, dict) else None
    if not isinstance(results, list):
        raise MalformedReply("a rerank reply needs a list of results")
    scores: list[float | None] = [None] * count
    for result in results:
        index = result.get("index") if isinstance(result, dict) else None
        score = result.get("relevance_score", result.get("score")) if isinstance(result, dict) else None
        if type(index) is not int or not 0 <= index < count or scores[index] is not None:
            raise MalformedReply(f"a rerank result has a bad or repeated index: {index!r}")
        if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
            raise MalformedReply(f"a rerank result has no finite score: {score!r}")
        scores[index] = float(score)
    missing = [i for i, s in enumerate(scores) if s is None]
    if missing:
        raise MalformedReply(f"the rerank reply scores {count - len(missing)} of {count} documents")
    return [s for s in scores if s is not None]


def cosine_scores(query: Sequence[float], documents: Sequence[Sequence[float]]) -> list[float]:
    """The cosine similarity of each document vector to the query vector (0 for a zero vector)."""
    if not documents:
        return []
    import numpy as np  # here: a process that never reranks by embeddings does not load it (~50 ms)

    matrix = np.asarray(documents, dtype=np.float64)
    q = np.asarray(query, dtype=np.float64)
    if matrix.shape[1] != q.shape[0]:
        raise MalformedReply(f"vectors of {matrix.shape[1]} and {q.shape[0]} dimensions")
    norms = np.linalg.norm(matrix, axis=1) * np.linalg.norm(q)
    dots = matrix @ q
    return [float(d / n) if n > 0 else 0.0 for d, n in zip(dots, norms, strict=True)]
