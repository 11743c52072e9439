"""A search query as search uses it (`analyse_query`): its question words are dropped, as asking and not
content ("when", "whose"; 什么时候, 哪些, 曾经: "what", "which", 什么 are stop words already), a question
asking "when" looks for passages telling a time (the term `DATED` of `brain.search.analysis`), and its
time expressions ("last week", "昨天", "in March") become the period search prefers (`Span`, resolved
against the moment the question was asked: `brain.search.relative_dates`), and a question in the first
or the second person addresses the user's or the assistant's turns (`brain.search.fields.addressed_role`,
which an index of turns looks for). Documents are analysed as
before: question words are dropped from queries only. Pure.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, tzinfo
from types import MappingProxyType

from brain.search.analysis import DATED, query_weights
from brain.search.fields import addressed_role
from brain.search.relative_dates import Span, time_span_on
from brain.text_cache import text_cache

__all__ = ["PERIOD_WEIGHT", "TIME_BOOST", "WHEN_WEIGHT", "Query", "analyse_query", "boost_span"]

WHEN_WEIGHT = 0.5
"""A "when" question's weight on `DATED` (its words weigh 1)."""
TIME_BOOST = 1.0
"""How much more a passage within the question's period scores: its BM25 score times `1 + TIME_BOOST`."""
PERIOD_WEIGHT = 2.0
"""The weight of the question's period as a term of its own (`boost_span`): a passage of the period with
none of the question's words ranks about as one with a rare word of it. Tuned on the dated dev set
(`benchmarks/retrieval.py --sets dated`, lexical recall@5 en | zh): 0.373 | 0.569 without the period as a
term, 0.385 | 0.569 at 0 (its other passages listed last), 0.385 | 0.573 at 1, 0.402 | 0.576 at 2, 0.405 |
0.579 at 3 and more (a filter, rather than a preference)."""

_WHEN = re.compile(
    r"\b(?:when|what time|(?:what|which) (?:day|date|month|year|week)|how long ago)\b"
    r"|什么时候|什么时间|哪一?天|哪一?年|哪个月|几月份?|几号|几时|何时|啥时候",
    re.IGNORECASE,
)
_ASKING = re.compile(
    r"\b(?:whose|whenever|wherever|whatever|whichever|ever)\b"
    r"|哪些|哪儿|哪位|哪里|谁|是否|有没有|是不是|曾经|多少|怎么样|如何",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Query:
    """A query's weighted terms, whether it asks "when", the period it names (None: no time said) and the
    role whose turns it is about (None: not said)."""

    weights: Mapping[str, float]
    when: bool = False
    span: Span | None = None
    role: str | None = None


def analyse_query(text: str, asked_at: float, *, tz: tzinfo = UTC) -> Query:
    """`text` as a query asked at `asked_at` (seconds since the epoch; its days in `tz`). Pure."""
    return _analysed(text, datetime.fromtimestamp(asked_at, tz).date(), tz)


@text_cache(maxsize=4_096)
def _analysed(text: str, today: date, tz: tzinfo) -> Query:
    """`analyse_query` on `today`: what only the day changes is made once a day for each text (a turn's
    searches, and `related`'s check that a text has something to search for, ask the same)."""
    when = _WHEN.search(text) is not None
    span, text = time_span_on(text, today, tz=tz)
    weights = query_weights(_ASKING.sub(" ", _WHEN.sub(" ", text) if when else text))
    if when and weights:
        weights = {**weights, DATED: WHEN_WEIGHT}
    # read-only: one value serves every caller of the same text that day
    return Query(weights=MappingProxyType(weights), when=when, span=span, role=addressed_role(text))


def boost_span(
    ranked: list[tuple[str, float]],
    within: list[tuple[str, float]],
    boost: float | None = None,
    *,
    period: Collection[str] = (),
    n_docs: int = 0,
    weight: float | None = None,
) -> list[tuple[str, float]]:
    """One ranking from a query's ranking (`ranked`) and its ranking within the query's period
    (`within`): the documents within score `1 + boost` times as much. The period also counts as a term
    of the query that every document of `period` (the ids within it) has, weighing `weight` times its
    BM25 idf among `n_docs` documents: a document within the period that has none of the query's words
    still ranks, after the words found within it. Best first; ties by id. Given each ranking's first n
    (and all of `period`), the first n of the result are exact. Pure."""
    factor = 1.0 + (TIME_BOOST if boost is None else boost)
    scores = dict(ranked)
    scores.update((doc, score * factor) for doc, score in within)
    if period:
        count = len(period)
        bonus = (PERIOD_WEIGHT if weight is None else weight) * math.log(
            1 + (max(n_docs, count) - count + 0.5) / (count + 0.5)
        )
        for doc in period:
            scores[doc] = scores.get(doc, 0.0) + bonus
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))
