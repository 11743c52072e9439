"""The dated dev set (`benchmarks/retrieval_dev/dated_*.py`): deterministic, big enough, well formed."""

import random
from datetime import date, timedelta

import pytest

from benchmarks.retrieval_dev.dated_generate import generate_dated
from benchmarks.retrieval_dev.dated_model import TYPES, DatedConversation
from benchmarks.retrieval_dev.dated_time import month_end, windows


@pytest.fixture(scope="module", params=["en", "zh"])
def convs(request: pytest.FixtureRequest) -> list[DatedConversation]:
    return generate_dated(request.param)


def test_the_set_is_deterministic_and_seeded() -> None:
    assert generate_dated("en", conversations=2) == generate_dated("en", conversations=2)
    assert generate_dated("zh", conversations=1) != generate_dated("zh", seed=1, conversations=1)


def test_each_language_has_300_questions_of_every_type(convs: list[DatedConversation]) -> None:
    questions = [q for c in convs for q in c.questions]
    assert len(questions) >= 300
    counts = {t: sum(q.type == t for q in questions) for t in TYPES}
    assert min(counts.values()) >= 50, counts
    assert len({q.id for q in questions}) == len(questions)
    assert len({q.text for c in convs for q in c.questions}) > len(questions) // 2  # worded variously


def test_sessions_are_dated_and_turns_timed_in_order(convs: list[DatedConversation]) -> None:
    for conv in convs:
        days = [s.day for s in conv.sessions]
        assert days == sorted(set(days))
        turns = conv.turns
        assert len({t.id for t in turns}) == len(turns)
        assert [t.at for t in turns] == sorted(t.at for t in turns)
        for session in conv.sessions:
            assert {t.at.date() for t in session.turns} == {session.day}
            assert {t.role for t in session.turns} == {"user", "assistant"}


def test_evidence_is_user_turns_of_named_sessions_before_asking(convs: list[DatedConversation]) -> None:
    for conv in convs:
        turns = {t.id: t for t in conv.turns}
        for q in conv.questions:
            evidence = [turns[e] for e in q.evidence_turns]
            assert all(t.role == "user" for t in evidence)
            assert {t.session_id for t in evidence} == set(q.evidence_sessions)
            assert all(t.at < q.asked_at for t in evidence), q
            if q.type == "multi_hop":
                assert len(q.evidence_sessions) == 2, q
            if q.type in ("single", "latest"):
                assert q.answer in evidence[0].text, q


def test_a_latest_question_has_earlier_values_as_distractors(convs: list[DatedConversation]) -> None:
    latest = [q for c in convs for q in c.questions if q.type == "latest"]
    for conv in convs:
        texts = [t.text for t in conv.turns if t.role == "user"]
        for q in (q for q in latest if q.id.startswith(f"{conv.id}-")):
            told = next(t for t in conv.turns if t.id == q.evidence_turns[0])
            assert texts.count(told.text) == 1
    assert sum("minutes" in q.answer or "分钟" in q.answer for q in latest) >= 3


def test_windows_name_the_day_and_are_asked_after_it() -> None:
    rng = random.Random(7)
    for offset in range(0, 400, 13):
        day = date(2023, 1, 1) + timedelta(days=offset)
        found = {w.kind: w for w in windows(day, rng)}
        assert set(found) == {"yesterday", "days_ago", "last_week", "last_month", "on_day", "in_month"}
        for w in found.values():
            assert w.start <= day <= w.end
            assert w.asked is None or w.asked > day
        week = found["last_week"]
        assert week.asked is not None
        assert week.asked.isocalendar()[1] != day.isocalendar()[1]
        assert (week.asked - week.start).days in range(7, 14)
        month = found["last_month"]
        assert month.asked is not None
        assert month.asked > month_end(day)
        assert month.asked - timedelta(days=31) <= month_end(day)
    assert month_end(date(2024, 2, 10)) == date(2024, 2, 29)
    assert month_end(date(2023, 12, 1)) == date(2023, 12, 31)
