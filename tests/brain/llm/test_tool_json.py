"""Tool calls written as JSON under a schema (`llm.tool_calls: json`): the request, the reply, the stream."""

from __future__ import annotations

import json

import pytest

from brain.llm.protocol import ChatMessage, ToolCall, ToolSpec
from brain.llm.tool_json import (
    ToolCallStream,
    bounded,
    json_tool_messages,
    json_tool_schema,
    parse_json_tool_reply,
)
from brain.llm.wire import MalformedReply

SEND = ToolSpec(
    name="send_message",
    description="Send a message to the user",
    parameters={"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
)
NOTE = ToolSpec(name="note", description="Keep a note", parameters={"type": "object", "properties": {}})


def test_the_schema_offers_each_tool_and_a_plain_answer_only_when_no_call_is_required() -> None:
    auto = json_tool_schema([SEND, NOTE], "auto").shape["anyOf"]
    assert [o["properties"].get("name", {}).get("const") for o in auto] == ["send_message", "note", None]
    assert auto[0]["properties"]["arguments"] == SEND.parameters
    assert auto[2]["required"] == ["content"]
    required = json_tool_schema([SEND], "required").shape["anyOf"]
    assert len(required) == 1 and required[0]["required"] == ["name", "arguments"]


def test_messages_describe_the_tools_and_write_calls_and_results_as_text() -> None:
    call = ToolCall(id="c1", name="send_message", arguments='{"message": "你好"}')
    messages = [
        ChatMessage(role="system", content="You are Lily."),
        ChatMessage(role="user", content="hi"),
        ChatMessage(role="assistant", content=None, tool_calls=(call,)),
        ChatMessage(role="tool", tool_call_id="c1", content="sent"),
    ]
    out = json_tool_messages(messages, [SEND], "required")
    assert [m.role for m in out] == ["system", "user", "assistant", "user"]
    assert out[0].content is not None and out[0].content.startswith("You are Lily.\n\n")
    assert "send_message(message): Send a message to the user" in out[0].content
    assert "without a function" not in out[0].content  # a call is required
    assert json.loads(out[2].content or "") == {"name": "send_message", "arguments": {"message": "你好"}}
    assert out[2].content is not None and "你好" in out[2].content  # not \\u-escaped
    assert out[3].content == "[result of send_message]\nsent"
    assert all(not m.tool_calls and m.tool_call_id is None for m in out)


def test_a_system_message_is_added_when_there_is_none() -> None:
    out = json_tool_messages([ChatMessage(role="user", content="hi")], [NOTE], "auto")
    assert out[0].role == "system" and "note()" in (out[0].content or "")
    assert "without a function" in (out[0].content or "")


def test_replies_read_back_as_calls_or_content() -> None:
    content, calls = parse_json_tool_reply('{"name": "send_message", "arguments": {"message": "猫"}}')
    assert content is None
    assert calls == (ToolCall(id="call_0", name="send_message", arguments='{"message": "猫"}'),)
    assert parse_json_tool_reply('{"content": "just text"}') == ("just text", ())


def test_a_reply_cut_by_the_token_limit_keeps_what_was_written() -> None:
    cut = '{"name": "send_message", "arguments": {"message": "Hello, I am'
    assert parse_json_tool_reply(cut, cut=True)[1][0].arguments == '{"message": "Hello, I am"}'
    with pytest.raises(MalformedReply, match=r"ends inside its JSON: .*Hello, I am"):
        parse_json_tool_reply(cut)  # not cut by the token limit: never closed and passed off as whole


def test_a_whole_reply_dressed_up_is_read_tolerantly() -> None:
    fenced = '```json\n{"name": "send_message", "arguments": {"message": "猫",},}\n```'
    assert parse_json_tool_reply(fenced)[1] == (
        ToolCall(id="call_0", name="send_message", arguments='{"message": "猫"}'),
    )
    with pytest.raises(MalformedReply, match="no JSON in the reply: 'I would rather chat'"):
        parse_json_tool_reply("I would rather chat")


@pytest.mark.parametrize(
    "reply",
    [
        '{"name": "x", "arguments": {"message": "cut',
        "[1, 2]",
        '{"arguments": {}}',
        '{"name": "x", "arguments": 3}',
    ],
)
def test_a_reply_that_is_not_a_call_is_malformed(reply: str) -> None:
    with pytest.raises((MalformedReply, json.JSONDecodeError)):
        parse_json_tool_reply(reply)


def test_the_stream_gives_the_name_then_the_arguments_in_pieces() -> None:
    text = '{\n  "name": "send_message",\n  "arguments": {"message": "Hello } there"}\n}\n'
    stream = ToolCallStream()
    deltas = [d for i in range(0, len(text), 3) for d in stream.feed(text[i : i + 3])]
    assert deltas[0].name == "send_message" and deltas[0].id == "call_0"
    assert all(d.name == "" for d in deltas[1:])
    arguments = "".join(d.arguments for d in deltas)
    assert json.loads(arguments) == {"message": "Hello } there"}
    assert stream.text == text


def test_a_stream_that_answers_in_plain_text_gives_no_call_deltas() -> None:
    stream = ToolCallStream()
    assert stream.feed('{"content": "hi') == []
    assert stream.feed('"}') == []


def test_bounds_reach_every_string_and_list_and_keep_tighter_ones() -> None:
    shape = {
        "type": "object",
        "properties": {
            "type": {"type": "string"},  # a property named "type" is a schema, not a type
            "when": {"type": ["string", "null"]},
            "tags": {"type": "array", "items": {"type": "string", "maxLength": 5}, "maxItems": 3},
            "n": {"type": "integer"},
        },
        "anyOf": [{"type": "array", "items": {"type": "string"}}],
    }
    out = bounded(shape, 100, 8)
    props = out["properties"]
    assert props["type"] == {"type": "string", "maxLength": 100}
    assert props["when"]["maxLength"] == 100
    assert props["tags"]["maxItems"] == 3 and props["tags"]["items"]["maxLength"] == 5
    assert props["n"] == {"type": "integer"}
    assert out["anyOf"][0] == {"type": "array", "items": {"type": "string", "maxLength": 100}, "maxItems": 8}
    assert "maxItems" not in out and shape["properties"]["type"] == {"type": "string"}  # not changed in place
    assert bounded(shape, None, None) == shape
