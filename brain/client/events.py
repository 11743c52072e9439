"""The chat route's server-sent events, read: `delta` pieces of the answer, then `done` with the whole
answer, or `error` (the model failed mid-answer). `EventReader` turns the stream's lines into
`ChatEvent`s; one reader per stream."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from brain.client.errors import ApiStreamError

__all__ = ["ChatEvent", "EventReader", "chat_event"]


class ChatEvent(BaseModel):
    """One event of a streamed answer: a `delta` (`text`: the next piece) or `done` (`text`: the whole
    answer, `chat_id`: the chat it went to)."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["delta", "done"]
    text: str = ""
    chat_id: str | None = None


def chat_event(name: str, data: str) -> ChatEvent | None:
    """The event named `name` with `data`; None for one this client does not know (a newer server's).
    `ApiStreamError` for `error`. Pure."""
    body: Any = json.loads(data) if data else {}
    if name == "error":
        detail = body.get("detail") if isinstance(body, dict) else body
        request_id = body.get("request_id") if isinstance(body, dict) else None
        raise ApiStreamError(
            f"the answer failed mid-stream: {detail}",
            status=0,
            detail=detail,
            request_id=request_id,
            body=body,
        )
    if name == "delta":
        return ChatEvent(kind="delta", text=body.get("text", ""))
    if name == "done":
        return ChatEvent(kind="done", text=body.get("text", ""), chat_id=body.get("chat_id"))
    return None


class EventReader:
    """Server-sent events from lines, as the SSE format has them: `event:` and `data:` fields, an empty
    line ending each event, `:` comments."""

    def __init__(self) -> None:
        self._name, self._data = "message", list[str]()

    def line(self, text: str) -> ChatEvent | None:
        """Take one line (without its end); the event it completes, if any."""
        text = text.rstrip("\r\n")
        if not text:
            name, data = self._name, "\n".join(self._data)
            self._name, self._data = "message", []
            return chat_event(name, data) if data or name != "message" else None
        if text.startswith(":"):
            return None
        field, _, value = text.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            self._name = value
        elif field == "data":
            self._data.append(value)
        return None

    def end(self) -> ChatEvent | None:
        """The stream ended: an event left without its empty line, if any."""
        return self.line("") if self._data else None
