"""JSON for a model: Chinese as it is (a sixth of the tokens of its escapes), valid, no lone surrogates."""

from __future__ import annotations

import json

from brain.jsontext import lone_surrogate_at, model_json, without_surrogates


def test_non_ascii_text_is_kept_as_it_is() -> None:
    value = {"text": "我家的猫咪", "score": 1.5, "tags": ["é", "🐈"]}
    text = model_json(value)
    assert "猫" in text and "\\u" not in text and json.loads(text) == value
    assert model_json({"a": [1, "x"]}) == json.dumps({"a": [1, "x"]})  # ASCII: as json.dumps has it
    assert model_json({"when": 1j}, default=str) == '{"when": "1j"}'


def test_no_lone_surrogate_is_ever_written() -> None:
    text = model_json({"bad": "a\udc80b猫", "pair": "\ud83d\udc08", "end": "\ud800"})
    assert json.loads(text) == {"bad": "a\ufffdb猫", "pair": "🐈", "end": "\ufffd"}
    assert text.encode("utf-8")  # any request can carry it
    assert (
        without_surrogates("plain 猫") == "plain 猫" and without_surrogates("\udfff\ud800") == "\ufffd\ufffd"
    )


def test_the_first_lone_surrogate_is_named_by_its_path() -> None:
    assert lone_surrogate_at({"a": "ok", "turns": [{"m": {"content": "x\ud800"}}]}) == "turns.0.m.content"
    assert lone_surrogate_at(("fine", "猫🐈", {"k": 1})) is None
    assert lone_surrogate_at("\udfff") == "value"
    assert lone_surrogate_at({"meta": {"bad\ud800key": "v"}}) == "meta (a key)"
