"""Tool calls through structured output, for endpoints that constrain JSON but have no tool calling of their
own (`llm.tool_calls: json`; the embedded model). Pure.

The offered tools become one JSON schema, a choice of `{"name": <tool>, "arguments": {...}}` objects (and,
unless a call is required, `{"content": "..."}` for a plain answer); the tools are described in the system
message; earlier calls and results are written as text, since such templates know no tool messages; and the
reply, streamed or not, is read back as tool calls.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import jiter

from brain.llm.json_reply import excerpt, json_value
from brain.llm.protocol import ChatMessage, JsonSchema, ToolCall, ToolCallDelta, ToolChoice, ToolSpec
from brain.llm.wire import MalformedReply

__all__ = ["ToolCallStream", "bounded", "json_tool_messages", "json_tool_schema", "parse_json_tool_reply"]

_HEAD = re.compile(r'\s*\{\s*"name"\s*:\s*"((?:[^"\\]|\\.)*)"\s*,\s*"arguments"\s*:\s*(?=\S)')
_TAIL = re.compile(r"\}\s*$")


def bounded(shape: Any, max_chars: int | None, max_items: int | None) -> Any:
    """`shape` with every string at most `max_chars` long and every array at most `max_items` long (tighter
    bounds already there are kept): a small model that loops inside a string or a list then stops at the
    bound, not at the token limit in the middle of the JSON."""
    if isinstance(shape, list):
        return [bounded(s, max_chars, max_items) for s in shape]
    if not isinstance(shape, dict):
        return shape
    out = {k: bounded(v, max_chars, max_items) for k, v in shape.items()}
    kinds = shape.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    for kind, limit, key in (("string", max_chars, "maxLength"), ("array", max_items, "maxItems")):
        if kind in kinds and limit is not None:
            out[key] = min(limit, shape.get(key, limit))
    return out


def json_tool_schema(tools: Sequence[ToolSpec], choice: ToolChoice) -> JsonSchema:
    """The shape of a reply that calls one of `tools` (or answers in plain text, when `choice` is auto)."""
    options: list[dict[str, Any]] = [
        {
            "type": "object",
            "properties": {"name": {"const": t.name}, "arguments": t.parameters},
            "required": ["name", "arguments"],
            "additionalProperties": False,
        }
        for t in tools
    ]
    if choice == "auto":
        options.append(
            {
                "type": "object",
                "properties": {"content": {"type": "string", "minLength": 1}},
                "required": ["content"],
                "additionalProperties": False,
            }
        )
    return JsonSchema(name="tool_call", shape={"anyOf": options})


def _describe(tools: Sequence[ToolSpec], choice: ToolChoice) -> str:
    lines = ["Reply with one JSON object that calls one of these functions:"]
    for t in tools:
        params = ", ".join(t.parameters.get("properties", {}))
        lines.append(f"- {t.name}({params}): {t.description}".rstrip(": "))
    lines.append('Write {"name": "<function>", "arguments": {...}}.')
    if choice == "auto":
        lines.append('Or, to answer without a function, write {"content": "<your answer>"}.')
    return "\n".join(lines)


def json_tool_messages(
    messages: Sequence[ChatMessage], tools: Sequence[ToolSpec], choice: ToolChoice
) -> list[ChatMessage]:
    """`messages` for an endpoint without tool messages: the tools described in the system message (one is
    added in front when there is none), each earlier call written as the JSON the model would write, and
    each result as a user message."""
    names = {c.id: c.name for m in messages for c in m.tool_calls}
    out: list[ChatMessage] = []
    for m in messages:
        if m.role == "assistant" and m.tool_calls:
            calls = [
                json.dumps({"name": c.name, "arguments": _arguments(c.arguments)}, ensure_ascii=False)
                for c in m.tool_calls
            ]
            out.append(ChatMessage(role="assistant", content="\n".join(filter(None, [m.content, *calls]))))
        elif m.role == "tool":
            name = names.get(m.tool_call_id or "", "the function")
            out.append(ChatMessage(role="user", content=f"[result of {name}]\n{m.content or ''}"))
        else:
            out.append(m)
    if tools:
        described = _describe(tools, choice)
        if out and out[0].role == "system":
            out[0] = ChatMessage(role="system", content=f"{out[0].content or ''}\n\n{described}".strip())
        else:
            out.insert(0, ChatMessage(role="system", content=described))
    return out


def _arguments(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def parse_json_tool_reply(text: str, cut: bool = False) -> tuple[str | None, tuple[ToolCall, ...]]:
    """(content, tool calls) of a reply written under `json_tool_schema`. A reply `cut` by the token limit
    keeps what was written (its last string ends where the reply did), as a cut plain reply would; a whole
    one is read tolerantly (`json_value`: code fences, prose around it, trailing commas), but one that
    ends inside its JSON without being `cut` is refused. `MalformedReply` saying what came back when it is
    not such a reply, e.g. from an endpoint that ignored the schema."""
    try:
        data = jiter.from_json(text.encode(), partial_mode="trailing-strings") if cut else json_value(text)
    except ValueError as exc:
        raise MalformedReply(str(exc) if not cut else f"no JSON in the reply: {excerpt(text)}") from None
    if not isinstance(data, dict):
        raise MalformedReply(f"the reply is not a JSON object: {excerpt(text)}")
    if isinstance(data.get("content"), str) and "name" not in data:
        return data["content"], ()
    name, arguments = data.get("name"), data.get("arguments", {})
    if not isinstance(name, str) or not name:
        raise MalformedReply(f"the reply names no function: {excerpt(text)}")
    if not isinstance(arguments, dict):
        raise MalformedReply(f"the function's arguments are not an object: {excerpt(text)}")
    return None, (ToolCall(id="call_0", name=name, arguments=json.dumps(arguments, ensure_ascii=False)),)


class ToolCallStream:
    """Turns the streamed text of a `json_tool_schema` reply into tool-call deltas as it arrives: the name
    once it is complete, then the raw JSON of the arguments in pieces (all but a final `}` that may close
    the outer object). The whole text, parsed at the end, is what counts."""

    def __init__(self) -> None:
        self.text = ""
        self._start: int | None = None  # where the arguments begin, once the name is known
        self._sent = 0

    def feed(self, piece: str) -> list[ToolCallDelta]:
        self.text += piece
        deltas: list[ToolCallDelta] = []
        if self._start is None:
            head = _HEAD.match(self.text)
            if head is None:
                return deltas
            self._start = self._sent = head.end()
            deltas.append(ToolCallDelta(index=0, id="call_0", name=json.loads(f'"{head.group(1)}"')))
        tail = _TAIL.search(self.text, self._sent)
        end = tail.start() if tail is not None else len(self.text)
        if end > self._sent:
            deltas.append(ToolCallDelta(index=0, arguments=self.text[self._sent : end]))
            self._sent = end
        return deltas
