"""A dated index's documents as fields, scored BM25F-style: the day heading it, and for a conversation's
turns the speaker, the speaker's role and the text. Pure.

A field's weight is folded into term frequencies and lengths, as the simple BM25F of Robertson, Zaragoza
and Taylor (2004) does (one length normalisation over the weighted fields): a word of the day counts
`DATE_WEIGHT` times, and a document's length counts it as often. A turn's speaker's role is a term of its
own (`role_term`), which a question naming its person looks for (`addressed_role`: "what did I…" asks
about the user's turns, "what did you…" about the assistant's).

Tuned on the dated dev set (`benchmarks/retrieval.py --sets dated`, lexical, turn level; en | zh). With the
day heading the text as words of it (analysis "4d"): recall@5 0.402 | 0.576, NDCG@10 0.356 | 0.517.

| date weight | role weight | en R@5 | en NDCG@10 | zh R@5 | zh NDCG@10 |
| ----------- | ----------- | ------ | ---------- | ------ | ---------- |
| 1           | 0           | 0.402  | 0.357      | 0.579  | 0.516      |
| 2           | 0           | 0.408  | 0.360      | 0.579  | 0.515      |
| 3           | 0           | 0.411  | 0.359      | 0.581  | 0.517      |
| 1           | 0.5         | 0.392  | 0.362      | 0.592  | 0.533      |
| 2           | 0.5         | 0.402  | 0.367      | 0.592  | 0.534      |
| **3**       | **0.5**     | 0.408  | 0.370      | 0.594  | 0.534      |
| 3           | 1           | 0.411  | 0.371      | 0.594  | 0.536      |
| 2           | 2           | 0.402  | 0.369      | 0.598  | 0.540      |
| 5           | 0.5         | 0.411  | 0.373      | 0.592  | 0.534      |

Most of the date weight's gain comes through the length: with the weighted day left out of the length,
every date weight from 1 to 3 gives 0.392 | 0.592 (role 0.5), as few questions name a day outright (a
period they name is `brain.search.query`'s). It costs one of the 24 single-character probes of the first
set (20 → 19 found in the top 5): a longer day makes short passages a little less short. The speaker
label's weight changed nothing measurable between 0 and 1 (the set's questions name no speaker), so it
stays 1. The role's weight is kept at 0.5, below the best of the set: every question of the set asks
about the user's own turns, so a larger weight would be tuned to the set, not to questions about what the
assistant said.
"""

from __future__ import annotations

import re
from collections import Counter

from brain.search.analysis import CJK, DATED, term_counts
from brain.search.dates import date_words

__all__ = [
    "DATE_WEIGHT",
    "MAX_SPEAKER",
    "ROLE_WEIGHT",
    "addressed_role",
    "field_counts",
    "role_term",
    "turn_parts",
]

DATE_WEIGHT = 3
"""How many times each word of a document's day counts (an integer: term frequencies are integers)."""
ROLE_WEIGHT = 0.5
"""The query weight of the role a question addresses (its words weigh 1)."""
MAX_SPEAKER = 64
"""The longest speaker label a turn's text starts with ("Maya: …"); a longer prefix is text."""

_ROLE = "#role:"  # no analysed word has '#'
_FIRST = re.compile(r"\b(?:i|me|my|mine|myself|we|us|our|ours|ourselves)\b|我", re.IGNORECASE)
_SECOND = re.compile(r"\b(?:you|your|yours|yourself)\b|你|您", re.IGNORECASE)


def role_term(role: str) -> str:
    """The term a turn of `role` ("user", "assistant", …) is indexed with."""
    return _ROLE + role.strip().lower()


def addressed_role(question: str) -> str | None:
    """The role whose turns a question is about: "user" in the first person ("what did I say", 我), the
    "assistant" in the second ("what did you suggest", 你); None for both ("what did you tell me") or
    neither."""
    first, second = bool(_FIRST.search(question)), bool(_SECOND.search(question))
    if first == second:
        return None
    return "user" if first else "assistant"


def turn_parts(text: str) -> tuple[str, str]:
    """A turn's text ("Maya: I planted tulips") as its speaker and what was said; ("", text) when it does
    not start with a speaker label."""
    speaker, sep, said = text.partition(": ")
    if not sep or not speaker.strip() or len(speaker) > MAX_SPEAKER or "\n" in speaker:
        return "", text
    return speaker, said


def field_counts(text: str, ts: float, *, level: int, turn: bool = False, role: str = "") -> dict[str, int]:
    """The term counts of a document written at `ts`: its day's words `DATE_WEIGHT` times (in Chinese
    when the text is), then its text's; for a `turn`, its speaker label's words and `role_term(role)`
    (when a role is given) too. Words are analysed per field (`term_counts` at `level`)."""
    counts: Counter[str] = Counter()
    day = date_words(ts, cjk=bool(CJK.search(text[:200])))
    for term, n in term_counts(day, level=level).items():
        if term != DATED:  # the day heading the document tells no time of its own (`DATED`)
            counts[term] += n * DATE_WEIGHT
    speaker, said = turn_parts(text) if turn else ("", text)
    counts.update(term_counts(speaker, level=level))
    counts.update(term_counts(said, level=level))
    if turn and role.strip():
        counts[role_term(role)] += 1
    return dict(counts)
