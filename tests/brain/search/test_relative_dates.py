"""The words each rule of `brain.search.relative_dates` needs: skipping a rule whose words a text lacks
never changes what the text resolves to, in any case, in English and in Chinese."""

from __future__ import annotations

import random
from datetime import UTC, date

import pytest

from brain.search import relative_dates
from brain.search.relative_dates import _resolved, time_span

PIECES = [
    "yesterday", "the day before yesterday", "last night", "today", "tonight", "this morning", "this evening",
    "3 days ago", "a few weeks ago", "a couple of months ago", "two years ago", "an hour ago", "last weekend",
    "the week before last", "last week", "past week", "this week", "the month before last", "last month",
    "this month", "past year", "last year", "this year", "last Friday", "on monday", "this past Sunday",
    "in March", "last May", "during sept", "since Oct", "this December", "May 5", "in May 2024", "may I",
    "昨天", "前天", "大前天", "今天", "三天前", "两个月前", "上周", "上上周", "上个周末", "上周三", "这周",
    "星期五", "上个月", "上上个月", "这个月", "去年", "今年", "前年", "去年五月", "三月", "10月", "5月3日",
    "what", "did", "I", "pack", "for", "Oslo", "?", "林悦", "买了什么", "ago", "days", "the", "Thistle",
    "ſince", "ſeptember", "laſt week", "\u212aeep", "DAY", "İn March", "\u0131n May", "weekday", "yesterdays",
]  # fmt: skip


def _phrases(n: int) -> list[str]:
    rng = random.Random(24)
    out = []
    for _ in range(n):
        words = [rng.choice(PIECES) for _ in range(rng.randint(1, 6))]
        words = [w.upper() if rng.random() < 0.1 else w.title() if rng.random() < 0.1 else w for w in words]
        out.append(rng.choice([" ", "", ", "]).join(words))
    return out


def test_skipping_rules_by_their_words_changes_nothing() -> None:
    today = date(2026, 11, 27)
    for text in _phrases(6_000) + PIECES:
        assert _resolved(text, today, UTC) == _resolved(text, today, UTC, gated=False), text


@pytest.mark.parametrize(
    "text", ["ſince ſeptember", "laſt ſunday", "thiſ may", "LAST WEEK", "İn March", "\u0131n may", "上周三"]
)
def test_letters_that_match_ascii_when_case_is_ignored_still_find_the_rule(text: str) -> None:
    assert time_span(text, 1_790_000_000.0)[0] is not None  # and resolve (a long s once raised here)


def test_every_rule_says_what_it_needs() -> None:
    assert all(needs for *_, needs in relative_dates._RULES)  # none is skipped by mistake: each has words
    assert all(w == w.lower() for *_, needs in relative_dates._EN_RULES for w in needs)


def test_a_long_text_with_many_expressions_resolves_as_its_parts_do() -> None:
    today = date(2026, 11, 27)
    text = " ".join(["We met yesterday, and the day before yesterday, in May; 上周 and 昨天."] * 300)
    span, kept = _resolved(text, today, UTC)
    assert (span, kept) == _resolved(text, today, UTC, gated=False)
    one_span, one_kept = _resolved(
        "We met yesterday, and the day before yesterday, in May; 上周 and 昨天.", today, UTC
    )
    assert span == one_span and kept == " ".join([one_kept] * 300)
    assert "yesterday" not in kept and "昨天" not in kept and kept.count("May") == 300
