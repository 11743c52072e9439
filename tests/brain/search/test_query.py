"""Query analysis: question words dropped, "when" as intent, time expressions resolved against the moment
a question is asked (English and Chinese), a period's documents preferred; irregular verbs and stop words."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta, timezone

import pytest

from brain.search.analysis import DATED, dated, query_weights, terms
from brain.search.dates import dated_text
from brain.search.query import PERIOD_WEIGHT, TIME_BOOST, WHEN_WEIGHT, analyse_query, boost_span
from brain.search.relative_dates import time_span

ASKED = datetime(2023, 3, 15, 12, tzinfo=UTC).timestamp()  # a Wednesday


def days(text: str, asked: float = ASKED) -> tuple[str, str] | None:
    span, _ = time_span(text, asked)
    if span is None:
        return None
    first, last = (datetime.fromtimestamp(t, UTC).date().isoformat() for t in (span.start, span.end))
    return first, last


@pytest.mark.parametrize(
    ("text", "first", "last"),
    [
        ("What did I buy yesterday?", "2023-03-14", "2023-03-14"),
        ("what did we talk about last week", "2023-03-06", "2023-03-12"),
        ("the day before yesterday", "2023-03-13", "2023-03-13"),
        ("3 days ago", "2023-03-12", "2023-03-12"),
        ("a few days ago", "2023-03-10", "2023-03-14"),
        ("two weeks ago", "2023-02-26", "2023-03-04"),
        ("last Friday", "2023-03-10", "2023-03-10"),
        ("on Wednesday", "2023-03-08", "2023-03-08"),
        ("last weekend", "2023-03-11", "2023-03-12"),
        ("last month", "2023-02-01", "2023-02-28"),
        ("this year", "2023-01-01", "2023-12-31"),
        ("in March", "2023-03-01", "2023-03-31"),
        ("last March", "2022-03-01", "2022-03-31"),
        ("in May", "2022-05-01", "2022-05-31"),
        ("今天", "2023-03-15", "2023-03-15"),
        ("昨天", "2023-03-14", "2023-03-14"),
        ("前天", "2023-03-13", "2023-03-13"),
        ("三天前", "2023-03-12", "2023-03-12"),
        ("上周", "2023-03-06", "2023-03-12"),
        ("上个星期", "2023-03-06", "2023-03-12"),
        ("上周三", "2023-03-08", "2023-03-08"),
        ("上个月林悦买了什么？", "2023-02-01", "2023-02-28"),
        ("两个月前", "2023-01-01", "2023-01-31"),
        ("去年", "2022-01-01", "2022-12-31"),
        ("三月", "2023-03-01", "2023-03-31"),
        ("十二月份", "2022-12-01", "2022-12-31"),
        ("去年五月", "2022-05-01", "2022-05-31"),
    ],
)
def test_time_expressions_resolve_against_the_asking_moment(text: str, first: str, last: str) -> None:
    assert days(text) == (first, last)


def test_what_is_not_a_time_expression_or_is_a_whole_date_is_left_alone() -> None:
    for text in (
        "Where may I park?",
        "What did she bake in May 2022?",
        "on Jul 8",
        "3月5日",
        "2022年3月",
        "猫",
    ):
        assert time_span(text, ASKED) == (None, text), text


def test_the_relative_words_leave_the_query_and_a_month_stays() -> None:
    assert time_span("What did I buy yesterday?", ASKED)[1].split() == ["What", "did", "I", "buy", "?"]
    assert time_span("上个月林悦买了什么？", ASKED)[1].strip() == "林悦买了什么？"
    assert time_span("last March", ASKED)[1].strip() == "March"
    assert time_span("去年五月", ASKED)[1].strip() == "五月"


def test_days_are_the_asking_time_zone_s() -> None:
    late = datetime(2023, 3, 15, 23, 30, tzinfo=UTC).timestamp()  # already the 16th in Shanghai
    span, _ = time_span("yesterday", late, tz=timezone(timedelta(hours=8)))
    assert span is not None
    assert datetime.fromtimestamp(span.start, UTC) == datetime(2023, 3, 14, 16, tzinfo=UTC)
    assert span.end - span.start == pytest.approx(86_400 - 0.001)


def test_question_words_are_not_searched_for() -> None:
    assert analyse_query("Whose dog barked?", ASKED).weights == query_weights("dog barked")
    assert "when" not in analyse_query("When did Ann run?", ASKED).weights
    for question, rest in (
        ("张敏什么时候去了上海？", "张敏 去了上海"),
        ("他曾经养过哪些宠物？", "他 养过 宠物"),
    ):
        weights = dict(analyse_query(question, ASKED).weights)
        weights.pop(DATED, None)
        assert weights == query_weights(rest), question
    assert query_weights("when") == {"when": 1.0}  # documents keep the word: only queries drop it


def test_a_when_question_looks_for_passages_telling_a_time() -> None:
    query = analyse_query("When did Ann run the marathon?", ASKED)
    assert query.when and query.weights[DATED] == WHEN_WEIGHT and query.span is None
    assert DATED not in analyse_query("Which race did Ann run?", ASKED).weights
    assert analyse_query("张敏什么时候去的上海？", ASKED).when
    assert analyse_query("When?", ASKED).weights == {}  # nothing else to look for: nothing at all


def test_a_question_naming_a_period_carries_it() -> None:
    query = analyse_query("What did Tom buy last week?", ASKED)
    assert set(query.weights) == {"tom", "buy"} and query.span is not None
    assert query.span.start == datetime(2023, 3, 6, tzinfo=UTC).timestamp()


def test_passages_telling_a_time_are_dated_but_not_by_their_heading() -> None:
    for text in (
        "I ran it this morning",
        "我昨天去了成都",
        "on 2022-02-07",
        "see you on Monday",
        "上周末很忙",
    ):
        assert dated(text) and DATED in terms(text), text
    for text in ("I may go", "Ha, I did not expect that", "我喜欢猫"):
        assert not dated(text) and not dated(dated_text(text, ASKED)), text
    assert DATED not in query_weights("I ran it this morning")  # only a "when" question looks for it


def test_irregular_verbs_meet_their_present_and_stop_words_go_by_their_form() -> None:
    assert terms("I bought a kayak and ran") == terms("buy kayak run")
    assert terms("we went, she gave, they saw") == terms("we go, she give, they see")
    assert terms("a bit of rose") == ["bit", "rose"]  # forms more often other words stay
    assert "most" in terms("mostly") and "other" in terms("others")  # their stems are stop words
    assert terms("most other") == []


def test_documents_within_the_period_score_more() -> None:
    ranked = [("a", 10.0), ("b", 8.0), ("c", 6.0)]
    within = [("c", 6.0), ("d", 1.0)]
    boosted = boost_span(ranked, within)
    assert boosted[0] == ("c", 6.0 * (1 + TIME_BOOST)) and [d for d, _ in boosted] == ["c", "a", "b", "d"]
    assert boost_span(ranked, within, boost=0.0) == [*ranked, ("d", 1.0)]
    assert boost_span([("b", 1.0), ("a", 1.0)], []) == [("a", 1.0), ("b", 1.0)]  # ties by id


def test_the_period_counts_as_a_term_of_the_question() -> None:
    """Every passage of the period scores its idf (among all passages) times `PERIOD_WEIGHT` more: one
    without the question's words ranks too; a narrow period weighs more than a wide one."""
    ranked = [("a", 10.0), ("b", 3.0)]
    within = [("b", 3.0)]
    narrow = PERIOD_WEIGHT * math.log(1 + (100 - 2 + 0.5) / 2.5)  # 2 of 100 passages
    boosted = boost_span(ranked, within, period={"b", "e"}, n_docs=100)
    assert boosted == [("b", 3.0 * (1 + TIME_BOOST) + narrow), ("a", 10.0), ("e", narrow)]
    wide = boost_span(ranked, within, period={"b", *"efghijklmnopqrstuvwxyz"}, n_docs=100)
    assert [d for d, _ in wide][:3] == ["a", "b", "e"]  # a period of 23 passages: less telling
    assert boost_span(ranked, within, period={"b"}, n_docs=1, weight=0.0) == boost_span(ranked, within)


def test_a_text_is_analysed_once_a_day_and_its_weights_are_read_only() -> None:
    first = analyse_query("What did I pack in May?", ASKED)
    assert analyse_query("What did I pack in May?", ASKED + 60) is first  # the same day: made once
    next_year = analyse_query("What did I pack in May?", ASKED + 366 * 86_400)
    assert next_year.weights == first.weights and next_year.span != first.span  # another day: its own May
    with pytest.raises(TypeError):
        first.weights["pack"] = 9.0  # type: ignore[index]  # shared by every caller: nobody changes it
    assert analyse_query("What did I pack in May?", ASKED).weights == {"pack": 1.0, "may": 1.0}
