"""Pure text-search logic: tokenizing for a lexical index, BM25 scoring, reciprocal rank fusion."""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence

__all__ = ["bm25", "reciprocal_rank_fusion", "searchable", "stem", "term_counts", "terms"]

_WORD = re.compile(r"\w+", re.UNICODE)
STOPWORDS = frozenset(
    "a an the and or but if of to in on at by for with from as is are was were be been being am do does did "
    "i me my we our you your he him his she her it its they them their this that these those there here "
    "what which who whom how why when where not no so than too very can could would should will shall may "
    "might must have has had just about into over under again then once all any both each few more most "
    "other some such only own same also s t d ll ve re m".split()
)
MAX_TERM = 48


@functools.lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """A light suffix stripper (plurals, -ing, -ed), enough for paraphrases to meet. Pure."""
    for suffix, replacement, minimum in (
        ("ies", "y", 5),
        ("sses", "ss", 6),
        ("ing", "", 6),
        ("ed", "", 5),
        ("es", "", 5),
        ("s", "", 4),
    ):
        if word.endswith(suffix) and len(word) >= minimum and not word.endswith("ss"):
            return word[: len(word) - len(suffix)] + replacement
    return word


def terms(text: str) -> list[str]:
    """Index terms of `text`: NFKC, lower case, stop words dropped, stemmed, at most 48 characters."""
    words = _WORD.findall(unicodedata.normalize("NFKC", text).lower())
    return [stem(w)[:MAX_TERM] for w in words if w not in STOPWORDS]


def searchable(text: str) -> bool:
    """Whether `text` has anything a lexical search can look for (not only stop words or punctuation)."""
    return bool(terms(text))


def term_counts(text: str) -> Counter[str]:
    return Counter(terms(text))


def bm25(
    tf: float, df: int, n_docs: int, doc_len: float, avg_len: float, k1: float = 1.2, b: float = 0.75
) -> float:
    """One term's BM25 contribution (Lucene's non-negative idf). Pure."""
    idf = math.log(1 + (n_docs - df + 0.5) / (df + 0.5))
    return idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * doc_len / max(avg_len, 1e-9)))


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]], k: int = 60) -> list[tuple[str, float]]:
    """Fuse ranked id lists: score = sum of 1 / (k + rank). Best first; ties by first appearance. Pure."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, doc in enumerate(ranking, start=1):
            scores[doc] = scores.get(doc, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda item: -item[1])
