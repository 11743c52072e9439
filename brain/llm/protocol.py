"""The narrow LLM Protocol everything else talks to, and the data it exchanges."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from brain.llm.usage import Usage, UsageLedger

__all__ = [
    "LLM",
    "ChatMessage",
    "Completion",
    "Embed",
    "JsonSchema",
    "TextDelta",
    "ToolCall",
    "ToolCallDelta",
    "ToolChoice",
    "ToolSpec",
    "embed_one",
]

ToolChoice = Literal["auto", "required"]
"""Whether the model may answer in plain text (`auto`) or must call one of the tools (`required`)."""

Embed = Callable[[Sequence[str]], Awaitable[list[list[float]]]]
"""An embedding endpoint: one vector per text, in order (`LLM.embed`)."""


async def embed_one(embed: Embed | None, text: str) -> list[float] | None:
    """The vector of `text`, or None without an embedding endpoint (or for blank text)."""
    if embed is None or not text.strip():
        return None
    return (await embed([text]))[0]


_FROZEN = ConfigDict(frozen=True, extra="forbid")


class ToolCall(BaseModel):
    """A function call the model asked for; `arguments` is the raw JSON text the model wrote."""

    model_config = _FROZEN

    id: str
    name: str
    arguments: str = "{}"


class ToolSpec(BaseModel):
    """A function offered to the model: name, description and JSON-schema parameters."""

    model_config = _FROZEN

    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})

    def to_openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


class JsonSchema(BaseModel):
    """The shape a JSON reply must have. An endpoint with structured output is held to it, so `shape`
    follows the strict subset (every property required, no others); the caller still parses the reply
    as untrusted text, because endpoints without structured output only read the prompt."""

    model_config = _FROZEN

    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")
    shape: dict[str, Any]

    def to_openai(self, mode: Literal["json_schema", "json_object"]) -> dict[str, Any]:
        """The `response_format` of a request in `mode`."""
        if mode == "json_object":
            return {"type": "json_object"}
        return {
            "type": "json_schema",
            "json_schema": {"name": self.name, "schema": self.shape, "strict": True},
        }


class ChatMessage(BaseModel):
    """One message of a chat prompt, in OpenAI's roles."""

    model_config = _FROZEN

    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    name: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None

    def to_openai(self) -> dict[str, Any]:
        msg: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.name is not None:
            msg["name"] = self.name
        if self.tool_calls:
            msg["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        if self.tool_call_id is not None:
            msg["tool_call_id"] = self.tool_call_id
        return msg


class Completion(BaseModel):
    """A finished reply: text and/or tool calls, never both empty."""

    model_config = _FROZEN

    content: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    model: str
    usage: Usage
    latency_s: float = 0.0

    def as_message(self) -> ChatMessage:
        """The reply as an assistant message to append to the next prompt."""
        return ChatMessage(role="assistant", content=self.content, tool_calls=self.tool_calls)


class TextDelta(BaseModel):
    """A piece of streamed reply text."""

    model_config = _FROZEN

    text: str


class ToolCallDelta(BaseModel):
    """A piece of a streamed tool call: `index` tells the calls of one reply apart; `name` comes first,
    then `arguments` in fragments of raw JSON text."""

    model_config = _FROZEN

    index: int
    id: str = ""
    name: str = ""
    arguments: str = ""


@runtime_checkable
class LLM(Protocol):
    """An LLM endpoint. Implementations record every call in `usage`.

    Errors: `LLMError` when the call fails after retries, or the reply is empty or malformed.
    """

    @property
    def model(self) -> str: ...

    @property
    def usage(self) -> UsageLedger: ...

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int | None = None,
        temperature: float | None = None,
        json_schema: JsonSchema | None = None,
        tool_choice: ToolChoice = "auto",
    ) -> Completion:
        """One chat completion. With `json_schema`, a JSON reply of that shape is asked for through the
        endpoint's structured output where it has it (the prompt must ask for JSON too). With `tools` and
        `tool_choice="required"`, the reply must call one of them."""
        ...

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int | None = None,
        temperature: float | None = None,
        tool_choice: ToolChoice = "auto",
    ) -> AsyncIterator[TextDelta | ToolCallDelta | Completion]:
        """Text and tool-call deltas as they arrive, then exactly one `Completion` with the whole reply."""
        ...

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order."""
        ...

    async def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        """The relevance of each document to `query`, in order (higher is more relevant)."""
        ...
