"""Fields of a dated index (BM25F-style): the day's words weighed apart, a turn's speaker and role, and the
role a question addresses. Pure."""

from __future__ import annotations

import pytest

from brain.search.analyses import analysed
from brain.search.analysis import ANALYSIS, DATED, term_counts
from brain.search.dates import dated_text
from brain.search.fields import (
    DATE_WEIGHT,
    MAX_SPEAKER,
    ROLE_WEIGHT,
    addressed_role,
    field_counts,
    role_term,
    turn_parts,
)
from brain.search.query import analyse_query

TS = 1_644_192_000  # 7 February 2022


def test_the_day_counts_as_its_weight_and_tells_no_time_of_its_own() -> None:
    counts = field_counts("Maya: I planted tulips", TS, level=4)
    assert counts["2022"] == counts["7"] == counts["februari"] == DATE_WEIGHT > 1
    assert counts["maya"] == 1 and counts["tulip"] == 1 and DATED not in counts
    assert field_counts("Maya: I planted tulips yesterday", TS, level=4)[DATED] == 1  # the text's own time
    zh = field_counts("刘洋: 我在学西班牙语", TS, level=4)
    assert zh["2022"] == DATE_WEIGHT and "西班牙语" in zh  # the day in Chinese beside Chinese text
    # the day heading the text as words of it: the same terms, each once
    assert set(term_counts(dated_text("Maya: I planted tulips", TS))) == set(counts)


def test_a_turn_has_its_speaker_and_role_as_fields() -> None:
    turn = field_counts("Maya: I planted tulips", TS, level=4, turn=True, role="user")
    assert turn[role_term("user")] == 1 and turn["maya"] == 1
    assert role_term("user") not in field_counts("Maya: I planted tulips", TS, level=4, role="user")
    assert role_term(" Assistant ") == role_term("assistant") != role_term("user")
    assert not any(k.startswith("#role") for k in field_counts("Maya: hi", TS, level=4, turn=True))


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("Maya: I planted tulips", ("Maya", "I planted tulips")),
        ("助手: 好的，记下了。", ("助手", "好的，记下了。")),
        ("no label here", ("", "no label here")),
        (": starts with a colon", ("", ": starts with a colon")),
        ("two\nlines: not a label", ("", "two\nlines: not a label")),
        ("x" * (MAX_SPEAKER + 1) + ": text", ("", "x" * (MAX_SPEAKER + 1) + ": text")),
        ("Maya: time 10:30: late", ("Maya", "time 10:30: late")),
    ],
)
def test_turn_parts(text: str, parts: tuple[str, str]) -> None:
    assert turn_parts(text) == parts


@pytest.mark.parametrize(
    ("question", "role"),
    [
        ("What did I plant by the fence?", "user"),
        ("Which school is my son at?", "user"),
        ("我在学哪门外语？", "user"),
        ("What did you suggest for dinner?", "assistant"),
        ("你推荐了哪本书？", "assistant"),
        ("What did you tell me about Oslo?", None),  # both persons
        ("Which school is Leo enrolled at?", None),
        ("Iris planted tulips", None),  # 'i' inside a word is no pronoun
    ],
)
def test_the_role_a_question_addresses(question: str, role: str | None) -> None:
    assert addressed_role(question) == role
    assert analyse_query(question, TS).role == role


def test_every_fielded_analysis_is_known_and_named() -> None:
    text = "Maya: I bought tulips"
    assert analysed(text, TS, ANALYSIS + "w") == field_counts(text, TS, level=4)
    assert analysed(text, TS, ANALYSIS + "wt", role="user") == field_counts(
        text, TS, level=4, turn=True, role="user"
    )
    assert analysed(text, TS, ANALYSIS + "d", role="user") == dict(term_counts(dated_text(text, TS)))
    assert 0 < ROLE_WEIGHT < 1  # a preference, below a word of the question
