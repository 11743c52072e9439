"""`ScriptedLLM`: an in-process `LLM` that answers from a script, for unit tests of code that uses an LLM.

It is strict: a call with no reply left raises `ScriptExhausted`, and `assert_consumed()` fails while
replies remain. Every call is recorded (messages, tools, prompt tokens) so tests can assert on what was asked.
"""

from __future__ import annotations

import inspect
import json
import re
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict

from brain.errors import LLMError, MalformedReplyError
from brain.llm.protocol import (
    ChatMessage,
    Completion,
    JsonSchema,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolChoice,
    ToolSpec,
)
from brain.llm.tokens import Tokenizer
from brain.llm.usage import CallRecord, Usage, UsageLedger

__all__ = [
    "Reply",
    "ScriptExhausted",
    "ScriptedCall",
    "ScriptedLLM",
    "echo_everything",
    "obey_word_limit",
    "tool_calls",
]


class ScriptedCall(BaseModel):
    """What one call asked of the scripted model."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["chat", "stream", "embed", "rerank"]
    messages: tuple[ChatMessage, ...] = ()
    tools: tuple[ToolSpec, ...] = ()
    texts: tuple[str, ...] = ()
    query: str = ""
    max_tokens: int | None = None
    json_schema: JsonSchema | None = None
    tool_choice: ToolChoice = "auto"
    prompt_tokens: int = 0

    @property
    def prompt_text(self) -> str:
        return "\n".join(m.content or "" for m in self.messages)


Reply: TypeAlias = (
    str
    | Completion
    | BaseException
    | list[list[float]]
    | list[float]
    | Callable[[ScriptedCall], "str | Completion | Awaitable[str | Completion]"]
)


class ScriptExhausted(AssertionError):
    """The code under test made a call the script has no reply for."""


def tool_calls(*calls: tuple[str, dict[str, Any]], content: str | None = None) -> Completion:
    """A reply asking for tool calls `(name, arguments)`, ids `call_0`, `call_1`, …"""
    return Completion(
        content=content,
        tool_calls=tuple(
            ToolCall(id=f"call_{i}", name=name, arguments=json.dumps(args))
            for i, (name, args) in enumerate(calls)
        ),
        finish_reason="tool_calls",
        model="scripted",
        usage=Usage(prompt_tokens=0, completion_tokens=0),
    )


def obey_word_limit(call: ScriptedCall) -> str:
    """A scripted summarizer that obeys "at most N words": the first N-1 words of its input."""
    system = call.messages[0].content or ""
    match = re.search(r"at most (\d+) words", system)
    limit = int(match.group(1)) if match else 50
    words = call.messages[-1].content.split() if call.messages[-1].content else []
    return " ".join(words[: max(limit - 1, 1)]) or "nothing"


def echo_everything(call: ScriptedCall) -> str:
    """A scripted model that ignores every limit: its whole input, and then some."""
    text = call.messages[-1].content or ""
    return text + " " + text[: len(text) // 2]


class ScriptedLLM:
    """An `LLM` whose replies come from a queue: text, a `Completion`, an exception to raise, vectors for
    `embed`, scores for `rerank`, or a function of the call, sync or async (for models that compute their
    answer, e.g. obey a word limit, or that do something while the call is in flight)."""

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        model: str = "scripted",
        tokenizer: Tokenizer | None = None,
        embedder: Callable[[str], list[float]] | None = None,
        reranker: Callable[[str, str], float] | None = None,
    ) -> None:
        self._replies: deque[Reply] = deque(replies)
        self._model = model
        self._tokenizer = tokenizer or Tokenizer.for_model("gpt-4o-mini")
        self._embedder = embedder
        self._reranker = reranker  # (query, document) -> relevance, instead of scripted scores
        self._usage = UsageLedger()
        self.calls: list[ScriptedCall] = []

    @property
    def model(self) -> str:
        return self._model

    @property
    def usage(self) -> UsageLedger:
        return self._usage

    def add(self, *replies: Reply) -> None:
        self._replies.extend(replies)

    @property
    def remaining(self) -> int:
        return len(self._replies)

    def assert_consumed(self) -> None:
        if self._replies:
            raise AssertionError(f"{len(self._replies)} scripted replies were never asked for")

    async def _next(self, call: ScriptedCall) -> Reply:
        self.calls.append(call)
        if not self._replies:
            raise ScriptExhausted(f"call #{len(self.calls)} ({call.kind}) has no scripted reply left")
        reply = self._replies.popleft()
        if isinstance(reply, BaseException):
            raise reply
        if callable(reply):
            answer = reply(call)
            return await answer if inspect.isawaitable(answer) else answer
        return reply

    async def _answer(
        self,
        kind: Literal["chat", "stream"],
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec],
        max_tokens: int | None,
        json_schema: JsonSchema | None = None,
        tool_choice: ToolChoice = "auto",
    ) -> Completion:
        if not messages:
            raise LLMError("a chat completion needs at least one message")
        prompt_tokens = self._tokenizer.count_messages(m.content or "" for m in messages)
        call = ScriptedCall(
            kind=kind,
            messages=tuple(messages),
            tools=tuple(tools),
            max_tokens=max_tokens,
            json_schema=json_schema,
            tool_choice=tool_choice,
            prompt_tokens=prompt_tokens,
        )
        reply = await self._next(call)
        if isinstance(reply, str):
            reply = Completion(
                content=reply,
                finish_reason="stop",
                model=self._model,
                usage=Usage(prompt_tokens=0, completion_tokens=0),
            )
        if not isinstance(reply, Completion):
            raise TypeError(
                f"scripted reply for a chat call must be text or a Completion, not {type(reply).__name__}"
            )
        completion_tokens = self._tokenizer.count(
            (reply.content or "") + "".join(c.name + c.arguments for c in reply.tool_calls)
        )
        usage = Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, counted_locally=True)
        self._usage.record(CallRecord(kind=kind, model=self._model, usage=usage, latency_s=0.0))
        if not reply.tool_calls and not (reply.content and reply.content.strip()):
            raise MalformedReplyError(f"{self._model}: empty reply (finish_reason={reply.finish_reason})")
        return reply.model_copy(update={"usage": usage, "model": self._model})

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
        return await self._answer("chat", messages, tools, max_tokens, json_schema, tool_choice)

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int | None = None,
        temperature: float | None = None,
        tool_choice: ToolChoice = "auto",
    ) -> AsyncIterator[TextDelta | ToolCallDelta | Completion]:
        completion = await self._answer("stream", messages, tools, max_tokens, tool_choice=tool_choice)
        text = completion.content or ""
        for start in range(0, len(text), 8):
            yield TextDelta(text=text[start : start + 8])
        for index, call in enumerate(completion.tool_calls):  # arguments in fragments, as servers send them
            yield ToolCallDelta(index=index, id=call.id, name=call.name)
            for start in range(0, len(call.arguments), 7):
                yield ToolCallDelta(index=index, arguments=call.arguments[start : start + 7])
        yield completion

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        call = ScriptedCall(
            kind="embed", texts=tuple(texts), prompt_tokens=sum(map(self._tokenizer.count, texts))
        )
        if self._embedder is not None:
            self.calls.append(call)
            vectors = [self._embedder(t) for t in texts]
        else:
            reply = await self._next(call)
            if not isinstance(reply, list) or len(reply) != len(texts):
                raise TypeError("scripted reply for embed must be one vector per text")
            vectors = [list(v) for v in reply if isinstance(v, list)]
            if len(vectors) != len(texts):
                raise TypeError("scripted reply for embed must be one vector per text")
        usage = Usage(prompt_tokens=call.prompt_tokens, completion_tokens=0, counted_locally=True)
        self._usage.record(CallRecord(kind="embed", model=self._model, usage=usage, latency_s=0.0))
        return vectors

    async def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        call = ScriptedCall(
            kind="rerank",
            query=query,
            texts=tuple(documents),
            prompt_tokens=sum(map(self._tokenizer.count, [query, *documents])),
        )
        if self._reranker is not None:
            self.calls.append(call)
            scores = [self._reranker(query, d) for d in documents]
        else:
            reply = await self._next(call)
            scores = (
                [float(x) for x in reply if isinstance(x, int | float)] if isinstance(reply, list) else []
            )
            if len(scores) != len(documents):
                raise TypeError("scripted reply for rerank must be one score per document")
        usage = Usage(prompt_tokens=call.prompt_tokens, completion_tokens=0, counted_locally=True)
        self._usage.record(CallRecord(kind="rerank", model=self._model, usage=usage, latency_s=0.0))
        return scores
