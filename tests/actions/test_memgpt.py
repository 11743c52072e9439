"""Streaming what a MemGPT-style model says through send_message, as its arguments arrive."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from actions.memgpt import JsonStringField, stream_step
from brain.llm.protocol import ChatMessage, Completion
from brain.testing import ScriptedLLM, tool_calls

PROMPT = [ChatMessage(role="user", content="hi")]


def pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


@given(st.text(), st.integers(min_value=1, max_value=9), st.booleans())
def test_decodes_any_string_in_any_fragments(message: str, size: int, heartbeat_first: bool) -> None:
    args = {"request_heartbeat": True, "message": message} if heartbeat_first else {"message": message}
    field = JsonStringField("message")
    got = "".join(field.feed(p) for p in pieces(json.dumps(args, ensure_ascii=size % 2 == 0), size))
    assert got == message and field.done


def test_escapes_and_chinese_split_mid_way() -> None:
    field = JsonStringField("message")
    text = json.dumps({"message": '你好 "Ann"\n😀 \\ done'})
    out = [field.feed(p) for p in pieces(text, 3)]
    assert "".join(out) == '你好 "Ann"\n😀 \\ done'
    assert sum(1 for o in out if o) > 3  # it really came out bit by bit


def test_a_look_alike_key_inside_a_value_is_not_the_field() -> None:
    field = JsonStringField("message")
    assert field.feed('{"note": "say \\"message\\": \\"x\\"", "message": "real"}') == "real"


async def test_stream_step_yields_the_message_before_the_step_ends() -> None:
    llm = ScriptedLLM([tool_calls(("send_message", {"message": "Hello there, Ann!"}))])
    said: dict[int, str] = {}
    events = [e async for e in stream_step(llm, PROMPT, [], said)]
    texts = [e for e in events if isinstance(e, str)]
    assert len(texts) > 2 and "".join(texts) == "Hello there, Ann!"
    assert isinstance(events[-1], Completion) and said == {0: "Hello there, Ann!"}


async def test_inner_monologue_is_not_shown() -> None:
    llm = ScriptedLLM([tool_calls(("send_message", {"message": "Hi"}), content="(thinking about Ann)")])
    events = [e async for e in stream_step(llm, PROMPT, [], {})]
    assert "".join(e for e in events if isinstance(e, str)) == "Hi"
