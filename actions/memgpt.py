"""One step of a MemGPT-style agent, streamed: what the model says to the user through `send_message` comes
out as the tool call's arguments arrive, not when the step ends.

`JsonStringField` decodes one string field of a JSON object from fragments (pure); `stream_step` runs one
model call and yields the user-facing text, then the step's `Completion`.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Sequence

from actions.memory_section import TOOL_RESULT, MemoryItem
from brain.errors import LLMError
from brain.llm.protocol import LLM, ChatMessage, Completion, TextDelta, ToolCallDelta, ToolSpec

__all__ = [
    "MEMGPT_INSTRUCTIONS",
    "SEARCH_TOOLS",
    "SEND_MESSAGE",
    "JsonStringField",
    "search_result",
    "stream_step",
]

MEMGPT_INSTRUCTIONS = (
    "You have memory tools. Core memory (the core block items of the memory section below) is always in "
    "view: keep what you learn about the user in the human block and about yourself in the persona block. "
    "Archival memory holds long-term passages; conversation search finds anything said before. What a "
    "search finds is added to the memory section as a search result item. Reply to the user with "
    "send_message. Set request_heartbeat to true when you need another step after a tool result."
)
SEARCH_TOOLS = frozenset(
    {"archival_memory_search", "conversation_search", "conversation_search_date", "graph_search"}
)
"""The memory tools whose results are recalled memory: they go to the memory section, not the tool turn."""
SEND_MESSAGE = "send_message"
_HEX = frozenset("0123456789abcdefABCDEF")


def search_result(name: str, result: str, number: int) -> tuple[MemoryItem, str]:
    """A memory search's result (its JSON as the tool gave it) as the memory section's item number
    `number`, lower trust (tool output), and what the tool turn says instead. Pure."""
    kind = f"search result {number} ({name})"
    note = f'{name}: the result is in the memory section of the system message, item "{kind}".'
    return MemoryItem(kind, result, f"{TOOL_RESULT} ({name})", lower_trust=True), note


class JsonStringField:
    """Feed fragments of a JSON object's text; get back the newly decoded part of one top-level string
    field (e.g. `message` of `{"message": "Hi \\u00e9", ...}`) as soon as it is unambiguous."""

    def __init__(self, name: str) -> None:
        self._start = re.compile(r'[{,]\s*"' + re.escape(name) + r'"\s*:\s*"')
        self._raw = ""
        self._value_at: int | None = None
        self._emitted = 0  # characters of the decoded value given out so far
        self.done = False

    def feed(self, fragment: str) -> str:
        self._raw += fragment
        if self.done:
            return ""
        if self._value_at is None:
            match = self._start.search(self._raw)
            if match is None:
                return ""
            self._value_at = match.end()
        decoded = self._decode(self._raw[self._value_at :])
        new, self._emitted = decoded[self._emitted :], len(decoded)
        return new

    def _decode(self, raw: str) -> str:
        """The value's text up to the last point where no escape is cut in half."""
        i, safe = 0, 0
        while i < len(raw):
            char = raw[i]
            if char == '"':
                self.done = True
                safe = i
                break
            if char != "\\":
                i += 1
                safe = i
                continue
            if i + 1 >= len(raw):
                break
            if raw[i + 1] != "u":
                i += 2
                safe = i
                continue
            if i + 6 > len(raw) or not set(raw[i + 2 : i + 6]) <= _HEX:
                break
            code = int(raw[i + 2 : i + 6], 16)
            if 0xD800 <= code < 0xDC00:  # a high surrogate: wait for its low half
                if i + 12 > len(raw):
                    break
                i += 12
            else:
                i += 6
            safe = i
        try:
            return str(json.loads('"' + raw[:safe] + '"'))
        except ValueError:  # not JSON after all: give nothing now; the final arguments decide
            return ""


async def stream_step(
    llm: LLM,
    prompt: Sequence[ChatMessage],
    tools: Sequence[ToolSpec],
    said: dict[int, str],
    *,
    separate: bool = False,
) -> AsyncIterator[str | Completion]:
    """One model call: the text of each `send_message` call as it streams, then the `Completion`. `said`
    receives, per tool call index, the text already given out (the caller adds what the final arguments
    hold beyond it). Plain content is inner monologue while the model also calls tools, so it is given out
    only when the step ends without tool calls. Messages are separated by a blank line (`separate`: the
    turn already said something before this step)."""
    fields: dict[int, JsonStringField] = {}
    names: dict[int, str] = {}
    content: list[str] = []
    final: Completion | None = None
    async for event in llm.stream(prompt, tools=tools):
        if isinstance(event, TextDelta):
            content.append(event.text)
        elif isinstance(event, ToolCallDelta):
            names[event.index] = names.get(event.index, "") + event.name
            if names[event.index] != SEND_MESSAGE:
                continue
            field = fields.setdefault(event.index, JsonStringField("message"))
            text = field.feed(event.arguments)
            if text:
                if event.index not in said and (separate or said):
                    yield "\n\n"
                said[event.index] = said.get(event.index, "") + text
                yield text
        else:
            final = event
    if final is None:
        raise LLMError(f"{llm.model}: the reply stream ended without a completion")
    if not final.tool_calls and content:
        yield ("\n\n" if separate else "") + "".join(content)
    yield final
