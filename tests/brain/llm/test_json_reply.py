"""The one tolerant parser of a model's JSON: valid JSON exactly as `json.loads` reads it (and without the
repair), dressed-up JSON repaired, garbage and cut JSON refused with what came back."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import json_repair
import pytest

from brain.llm.json_reply import REPAIR_LIMIT, excerpt, json_object, json_value

VALID = [
    '{"facts": [{"text": "Is vegetarian", "category": "preferences", "valid_at": null}]}',
    '  {"a": 1.5e3, "b": [true, false, null], "c": {"d": "\\u732b \\ud83d\\ude00"}}\n',
    '"just a string"',
    "[1, 2, 3]",
    "42",
    '{"text": "我喜欢喝乌龙茶"}',
    '{"lone": "\\ud800"}',  # an escaped lone surrogate: read as json.loads reads it
]


@pytest.mark.parametrize("reply", VALID)
def test_valid_json_reads_exactly_as_json_loads_does_without_a_repair(
    reply: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_repair(*_: Any, **__: Any) -> Any:
        raise AssertionError("valid JSON must not be repaired")

    monkeypatch.setattr(json_repair, "loads", no_repair)
    value = json_value(reply)
    assert value == json.loads(reply) and type(value) is type(json.loads(reply))


FACTS = {"facts": [{"text": "Likes tea", "category": "preferences"}]}


@pytest.mark.parametrize(
    "reply",
    [
        '```json\n{"facts": [{"text": "Likes tea", "category": "preferences"}]}\n```',
        '```\n{"facts": [{"text": "Likes tea", "category": "preferences"}]}\n```',
        'Sure! Here you go:\n```json\n{"facts": [{"text": "Likes tea", "category": "preferences"}]}\n```\n'
        "Bye.",
        'Here it is: {"facts": [{"text": "Likes tea", "category": "preferences"}]} Hope that helps!',
        '{"facts": [{"text": "Likes tea", "category": "preferences",},],}',
        "{'facts': [{'text': 'Likes tea', 'category': 'preferences'}]}",
        '{facts: [{text: "Likes tea", category: "preferences"}]}',
        '<think>they said {tea}</think>{"facts": [{"text": "Likes tea", "category": "preferences"}]}',
    ],
)
def test_dressed_up_json_is_repaired(reply: str) -> None:
    assert json_value(reply) == FACTS


def test_python_literals_are_read_as_json_ones() -> None:
    assert json_value('{"related": True, "rewritten": None, "sure": False}') == {
        "related": True,
        "rewritten": None,
        "sure": False,
    }


def test_chinese_text_comes_through_intact() -> None:
    text = "我喜欢喝乌龙茶，也喜欢在里斯本的海边散步"
    assert json_value(f"```json\n{{'facts': ['{text}',]}}\n```") == {"facts": [text]}


@pytest.mark.parametrize(
    "reply", ["I am not JSON", "", "   ", "TRUE", "<html><body>502 Bad Gateway</body></html>"]
)
def test_garbage_is_a_value_error_naming_what_came_back(reply: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(f'no JSON in the reply: {reply!r}')}$"):
        json_value(reply)


def test_what_came_back_is_cut_to_120_characters() -> None:
    reply = "Sorry, " + "I cannot help with that. " * 20
    with pytest.raises(ValueError, match=f"^{re.escape(f'no JSON in the reply: {reply[:120]!r}…')}$"):
        json_value(reply)


def test_a_lone_surrogate_in_the_reply_never_reaches_the_message() -> None:
    with pytest.raises(ValueError, match="no JSON") as caught:
        json_value("garbage \ud800 here")
    message = str(caught.value)
    assert message == "no JSON in the reply: 'garbage \ufffd here'"
    message.encode("utf-8")  # a lone surrogate could not be encoded, logged or sent


@pytest.mark.parametrize(
    "reply",
    [
        '{"facts": [{"text": "Likes te',
        '{"facts": [{"text": "Likes tea"}, ',
        '{"name": "x", "arguments": {"a": 1',
    ],
)
def test_json_cut_short_is_refused_not_closed(reply: str) -> None:
    with pytest.raises(ValueError, match=r"^the reply ends inside its JSON: "):
        json_value(reply)


@pytest.mark.serial
def test_deep_nesting_and_huge_garbage_are_value_errors_and_quick() -> None:
    started = time.perf_counter()
    for reply in ("[" * 100_000, '{"a": [' * 5_000, "{" * 3_000 + "x", "x" * (REPAIR_LIMIT + 1)):
        with pytest.raises(ValueError, match=r"nested too deeply|ends inside|no valid JSON|no JSON"):
            json_value(reply)
    assert time.perf_counter() - started < 2


def test_json_object_takes_the_object_or_the_first_of_several() -> None:
    assert json_object('{"a": 1} and then {"b": 2}') == {"a": 1}
    assert json_object('[{"a": 1}, {"b": 2}]') == {"a": 1}
    for reply in ("[1, 2]", '"text"', "3"):
        with pytest.raises(ValueError, match=f"^{re.escape(f'expected a JSON object, got {reply!r}')}$"):
            json_object(reply)


def test_excerpt_shows_any_value_quoted_and_cut() -> None:
    assert excerpt("abc") == "'abc'"
    assert excerpt({"choices": [], "猫": 1}) == """'{"choices": [], "猫": 1}'"""
    assert excerpt(["x" * 200], 10) == """'["xxxxxxxx'…"""
    assert excerpt(None) == "'null'"
