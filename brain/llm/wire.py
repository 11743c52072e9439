"""The chat completions wire format, read from plain JSON. Pure.

The `openai` client sends our request as it is and hands back decoded JSON (a completion, or one dict per
streamed chunk); these functions turn that into the gateway's records. Anything of the wrong shape raises
`MalformedReply` saying what is wrong and what came back (cut short, `brain.llm.json_reply.excerpt`), which
the gateway reports as an `LLMError`.
"""

from __future__ import annotations

from typing import Any

from brain.llm.json_reply import excerpt
from brain.llm.protocol import TextDelta, ToolCall, ToolCallDelta
from brain.llm.usage import Usage

__all__ = ["ChunkReader", "MalformedReply", "parse_completion", "parse_usage"]


class MalformedReply(ValueError):
    """The endpoint's JSON is not a chat completion."""


def _dict(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise MalformedReply(f"{what} is not an object")
    return value


def _list(value: Any, what: str) -> list[Any]:
    """A list the reply may leave out (null, or empty)."""
    if not value:
        return []
    if not isinstance(value, list):
        raise MalformedReply(f"{what} are not a list")
    return value


def _text(value: Any, what: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise MalformedReply(f"{what} is not text")
    return value


def parse_usage(value: Any) -> Usage | None:
    """The `usage` object, when the endpoint reported one."""
    if value is None:
        return None
    usage = _dict(value, "usage")
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens") or 0
    if not isinstance(prompt, int) or not isinstance(completion, int):
        raise MalformedReply("usage token counts are not integers")
    return Usage(prompt_tokens=prompt, completion_tokens=completion)


def parse_completion(data: Any) -> tuple[str | None, tuple[ToolCall, ...], str | None, Usage | None]:
    """(content, tool calls, finish_reason, usage) of a non-streamed completion; `MalformedReply` saying
    what came back when it is not one (an error page, a body of another API, garbage)."""
    try:
        return _completion(data)
    except MalformedReply as exc:
        raise MalformedReply(f"{exc}; got {excerpt(data)}") from None


def _completion(data: Any) -> tuple[str | None, tuple[ToolCall, ...], str | None, Usage | None]:
    body = _dict(data, "the reply")
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices:
        raise MalformedReply("no choices")
    choice = _dict(choices[0], "choices[0]")
    message = _dict(choice.get("message"), "choices[0].message")
    calls = []
    for raw in _list(message.get("tool_calls"), "the tool calls"):
        call = _dict(raw, "a tool call")
        if call.get("type", "function") != "function":
            continue
        function = _dict(call.get("function"), "a tool call's function")
        calls.append(
            ToolCall(
                id=_text(call.get("id"), "a tool call id") or "",
                name=_text(function.get("name"), "a tool name") or "",
                arguments=_text(function.get("arguments"), "tool arguments") or "{}",
            )
        )
    content = _text(message.get("content"), "the content")
    return (
        content,
        tuple(calls),
        _text(choice.get("finish_reason"), "finish_reason"),
        parse_usage(body.get("usage")),
    )


class ChunkReader:
    """Reads streamed chunks one by one: the deltas to pass on, and the assembled reply at the end."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self._calls: dict[int, dict[str, str]] = {}

    def feed(self, chunk: Any) -> list[TextDelta | ToolCallDelta]:
        """The deltas of one chunk; `MalformedReply` saying what came back when it is not a chunk."""
        try:
            return self._feed(chunk)
        except MalformedReply as exc:
            raise MalformedReply(f"{exc}; got {excerpt(chunk)}") from None

    def _feed(self, chunk: Any) -> list[TextDelta | ToolCallDelta]:
        # Nearly every chunk is one choice's piece of text: read at once, as the general reading below
        # reads it (every other shape, and anything that reading refuses, goes there).
        if type(chunk) is dict and chunk.get("usage") is None:
            choices = chunk.get("choices")
            if type(choices) is list and choices:
                choice = choices[0]
                if type(choice) is dict and choice.get("finish_reason") is None:
                    delta = choice.get("delta")
                    if type(delta) is dict and not delta.get("tool_calls"):
                        text = delta.get("content")
                        if text is None or type(text) is str:
                            if not text:
                                return []
                            self.parts.append(text)
                            return [TextDelta(text=text)]
        return self._general(chunk)

    def _general(self, chunk: Any) -> list[TextDelta | ToolCallDelta]:
        body = _dict(chunk, "a stream chunk")
        if body.get("usage") is not None:
            self.usage = parse_usage(body["usage"])
        choices = body.get("choices") or []
        if not isinstance(choices, list) or not choices:
            return []
        choice = _dict(choices[0], "a chunk's choice")
        self.finish_reason = _text(choice.get("finish_reason"), "finish_reason") or self.finish_reason
        delta = _dict(choice.get("delta") or {}, "a chunk's delta")
        events: list[TextDelta | ToolCallDelta] = []
        for raw in _list(delta.get("tool_calls"), "a chunk's tool calls"):
            piece = _dict(raw, "a tool call delta")
            index = piece.get("index", 0)
            if not isinstance(index, int):
                raise MalformedReply("a tool call delta's index is not an integer")
            function = _dict(piece.get("function") or {}, "a tool call delta's function")
            call_id = _text(piece.get("id"), "a tool call id") or ""
            name = _text(function.get("name"), "a tool name") or ""
            arguments = _text(function.get("arguments"), "tool arguments") or ""
            call = self._calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
            call["id"] = call_id or call["id"]
            call["name"] += name
            call["arguments"] += arguments
            events.append(ToolCallDelta(index=index, id=call_id, name=name, arguments=arguments))
        text = _text(delta.get("content"), "the content")
        if text:
            self.parts.append(text)
            events.append(TextDelta(text=text))
        return events

    @property
    def content(self) -> str | None:
        return "".join(self.parts) if self.parts else None

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        return tuple(
            ToolCall(id=c["id"], name=c["name"], arguments=c["arguments"] or "{}")
            for _, c in sorted(self._calls.items())
        )
