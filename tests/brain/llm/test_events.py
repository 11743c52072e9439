"""`StreamEvents`: a chat stream's server-sent events from the body's bytes, however they are cut."""

from __future__ import annotations

import json
import math

import openai
import pytest

from brain.llm.events import StreamEvents, decode_json

BODY = (
    ": a comment\r\n"
    'data: {"a":\n'
    "data: 1}\n"
    "\n"
    "\n"
    "event: chunk\r\n"
    'data: {"text": "行李 é 🧠"}\r\n'
    "\r\n"
    "id: 7\n"
    "data: null\n"
    "\n"
    "data: [DONE]\n"
    "\n"
    'data: {"after": "done"}\n'
    "\n"
).encode()
EVENTS = [{"a": 1}, {"text": "行李 é 🧠"}, None]


def _fed(*pieces: bytes) -> tuple[list[object], bool]:
    events = StreamEvents()
    return [e for piece in pieces for e in events.feed(piece)], events.done


def test_events_are_the_same_however_the_body_is_cut() -> None:
    assert _fed(BODY) == (EVENTS, True)
    for cut in range(len(BODY) + 1):  # every place, inside a multibyte character and a CRLF too
        assert _fed(BODY[:cut], BODY[cut:]) == (EVENTS, True), cut
    assert _fed(*(BODY[i : i + 1] for i in range(len(BODY)))) == (EVENTS, True)


def test_lines_read_one_by_one_give_the_same_events() -> None:
    events = StreamEvents()
    lines = BODY.decode().replace("\r\n", "\n").split("\n")
    assert [e for line in lines for e in events.line(line)] == EVENTS and events.done


def test_an_event_is_dispatched_by_its_blank_line_only() -> None:
    assert _fed(b'data: {"cut": true}') == ([], False)
    assert _fed(b'data: {"cut": true}\n') == ([], False)
    assert _fed(b'data: {"cut": true}\n', b"\n") == ([{"cut": True}], False)


def test_an_error_event_is_the_sdks_api_error() -> None:
    with pytest.raises(openai.APIError, match="overloaded") as caught:
        _fed(b'data: {"a": 1}\n\ndata: {"error": {"message": "overloaded", "code": 1}}\n\n')
    assert caught.value.body == {"message": "overloaded", "code": 1}
    with pytest.raises(openai.APIError, match="An error occurred during streaming"):
        _fed(b'data: {"error": "x"}\n\n')
    with pytest.raises(json.JSONDecodeError):
        _fed(b"data: not json\n\n")


@pytest.mark.parametrize(
    "text",
    [
        '{"choices": [{"index": 0, "delta": {"content": "行李 é"}, "finish_reason": null}]}',
        '{"a": 1, "a": 2}',
        '{"a": "\\ud800x", "b": "\\udc00"}',  # lone surrogates: json.loads keeps them
        '{"a": Infinity, "b": -Infinity, "c": 1e400, "d": 1.5e-400, "e": -0.0}',
        '{"big": 123456789012345678901234567890}',
        ' {"x": 1}  ',
        "[]",
        "null",
    ],
)
def test_decoded_json_is_json_loads(text: str) -> None:
    assert decode_json(text) == json.loads(text)
    assert decode_json(text.encode()) == json.loads(text.encode())
    assert decode_json(text.encode("utf-16")) == json.loads(text.encode("utf-16"))


@pytest.mark.parametrize("text", ["not json", '{"x": 1} x', "", '{"a": 1'])
def test_what_json_loads_refuses_is_its_error(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as caught:
        decode_json(text)
    assert str(caught.value) == str(expected.value)


def test_nan_is_read_as_json_loads_reads_it() -> None:
    assert math.isnan(decode_json('{"a": NaN}')["a"])
