"""`StreamEvents`: the server-sent events of a streamed chat completion, read as the `openai` SDK reads them,
from the body's bytes as they arrive. Pure: no I/O.

Every piece of a streamed answer passes through each layer between the socket and the client it is sent
on to, and an async generator costs a raised `StopIteration` per item and layer, which walks every frame
in flight: here the body's pieces become events in one plain loop, and one generator (`ChatHTTP.stream`)
yields them.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pydantic_core import from_json

if TYPE_CHECKING:
    import httpx2

__all__ = ["StreamEvents", "decode_json", "endpoint_request"]


class StreamEvents:
    """Feed the body's pieces (`feed`) or its lines (`line`); each returns the JSON of the events it
    completed, up to `[DONE]` (then `done`, and nothing more is read). An event carrying `error` raises
    `openai.APIError` with its message and body, as the SDK does; an event is dispatched by its blank
    line only."""

    __slots__ = ("_data", "_rest", "_seen", "done")

    def __init__(self) -> None:
        self._rest = b""  # the start of a line whose end has not come yet
        self._data: list[str] = []
        self._seen = False  # a field of the current event was read
        self.done = False

    def feed(self, piece: bytes) -> list[Any]:
        """The events completed by `piece`, the body's next bytes."""
        lines = (self._rest + piece).split(b"\n")
        self._rest = lines.pop()
        events: list[Any] = []
        for raw in lines:
            if self.done:
                break
            self._read(raw.decode().rstrip("\r"), events)
        return events

    def line(self, line: str) -> list[Any]:
        """The event `line` (without its line end) completes: none or one."""
        events: list[Any] = []
        if not self.done:
            self._read(line, events)
        return events

    def _read(self, line: str, events: list[Any]) -> None:
        if line.startswith("data: "):  # nearly every line but the blank ones
            self._data.append(line[6:])
            self._seen = True
            return
        if line:
            if line.startswith(":"):
                return
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "data":
                self._data.append(value)
            elif field not in ("event", "id", "retry"):
                return
            self._seen = True
            return
        if not self._seen:
            return
        text, self._data, self._seen = "\n".join(self._data), [], False
        if text.startswith("[DONE]"):
            self.done = True
            return
        decoded = decode_json(text)
        if isinstance(decoded, dict) and decoded.get("error"):
            error = decoded["error"]
            message = error.get("message") if isinstance(error, dict) else None
            if not message or not isinstance(message, str):
                message = "An error occurred during streaming"
            import openai  # the SDK is imported where its errors are made (`brain.llm.endpoint`)

            raise openai.APIError(message, endpoint_request(), body=error)
        events.append(decoded)


def decode_json(text: str | bytes) -> Any:
    """`json.loads(text)`, read by pydantic-core's parser where it can (a streamed chunk in less than half
    the time); what that parser refuses (a lone surrogate escaped, `NaN`, trailing data) goes to
    `json.loads`, whose value or `JSONDecodeError` it is then."""
    try:
        return from_json(text)
    except ValueError:
        return json.loads(text)


def endpoint_request(url: str = "") -> httpx2.Request:
    """The request an `openai` error of a chat call names: POST to `url`, or to a stand-in where the URL is
    not known (an error inside a stream)."""
    import httpx2

    return httpx2.Request("POST", url or "http://endpoint/chat/completions")
