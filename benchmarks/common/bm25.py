"""A plain Okapi BM25, the baseline the recall index is compared with: words are lower-cased `\\w+` runs
(jieba's words for Chinese), with no stemming, no stop words and no date analysis. Pure, no Redis.

    bm25 = Bm25([tokens(text, "en") for text in passages])
    order = bm25.top(tokens(question, "en"), 10)  # passage positions, best first
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

__all__ = ["Bm25", "tokens"]

WORD = re.compile(r"\w+")


def tokens(text: str, language: str) -> list[str]:
    """`text` as plain terms: Chinese cut by jieba, anything else split into `\\w+` runs; lower-cased."""
    if language == "zh":
        import jieba

        return [w.lower() for w in jieba.lcut(text) if WORD.fullmatch(w)]
    return WORD.findall(text.lower())


class Bm25:
    """Okapi BM25 over tokenised passages (k1 1.5, b 0.75; idf ln(1 + (N - n + 0.5) / (n + 0.5)))."""

    def __init__(self, passages: Sequence[Sequence[str]], k1: float = 1.5, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.counts = [Counter(p) for p in passages]
        self.lengths = [len(p) for p in passages]
        self.avg = sum(self.lengths) / len(passages) if passages else 0.0
        df: Counter[str] = Counter()
        for c in self.counts:
            df.update(c.keys())
        n = len(passages)
        self.idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}

    def scores(self, query: Sequence[str]) -> list[float]:
        """Each passage's score for `query` (a repeated query term counts once per repetition)."""
        out = []
        for counts, length in zip(self.counts, self.lengths, strict=True):
            norm = self.k1 * (1 - self.b + self.b * length / self.avg) if self.avg else self.k1
            out.append(
                sum(
                    self.idf[t] * counts[t] * (self.k1 + 1) / (counts[t] + norm)
                    for t in query
                    if counts.get(t)
                )
            )
        return out

    def top(self, query: Sequence[str], k: int) -> list[int]:
        """Positions of the best `k` passages with a positive score, best first (ties: earlier first)."""
        scored = [(s, i) for i, s in enumerate(self.scores(query)) if s > 0]
        scored.sort(key=lambda x: (-x[0], x[1]))
        return [i for _, i in scored[:k]]
