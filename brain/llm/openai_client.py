"""The `LLM` Protocol over the official `openai` async client, for any OpenAI-compatible endpoint."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

from brain import telemetry
from brain.errors import LLMError, LLMTimeoutError, MalformedReplyError
from brain.llm.batching import cut
from brain.llm.capabilities import STRICTNESS, Capabilities
from brain.llm.chat_http import ChatHTTP
from brain.llm.endpoint import as_llm_error, check_endpoint, create_openai_client, failures, refused_request
from brain.llm.overflow import has_overflow_code
from brain.llm.pace import Pace
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
from brain.llm.rerank import cosine_scores, parse_rerank
from brain.llm.tokens import Tokenizer
from brain.llm.tool_json import (
    ToolCallStream,
    bounded,
    json_tool_messages,
    json_tool_schema,
    parse_json_tool_reply,
)
from brain.llm.usage import CallRecord, Usage, UsageLedger
from brain.llm.windows import listed_context_window
from brain.llm.wire import ChunkReader, parse_completion
from brain.settings import LLMSettings

if TYPE_CHECKING:
    import openai

__all__ = ["OpenAILLM"]

_PATH = "/chat/completions"
_MODELS_TIMEOUT = 5.0  # seconds the runtime waits for the model list at start, at most
_log = logging.getLogger("brain.llm")


class OpenAILLM:
    """An `LLM` over an injected `openai.AsyncOpenAI`, or over one built from `settings` when first needed
    (`client=None`; with `lean_chat`, chat completions never need it); closes the client only if it
    created it."""

    def __init__(
        self,
        client: openai.AsyncOpenAI | None,
        settings: LLMSettings,
        tokenizer: Tokenizer | None = None,
        *,
        owns_client: bool = False,
        capabilities: Capabilities | None = None,
        lean_chat: bool = False,
        usage: UsageLedger | None = None,
    ) -> None:
        self._client = client
        # Chat completions of a client built here from settings go over `ChatHTTP` where it applies (no
        # proxy): the same request, retries and errors at a fraction of the CPU, without the SDK (its
        # import is a third of `brain chat`'s start). An injected client is used for everything.
        self._chat = _lean_chat(client, settings) if lean_chat else None
        self._settings = settings
        self._tokenizer = tokenizer  # loaded on first use: only needed when a server reports no usage
        self._owns_client = owns_client
        self._usage = usage if usage is not None else UsageLedger()
        key = settings.api_key.get_secret_value() if settings.api_key is not None else ""
        self._secrets = (key,) if key else ()
        self.capabilities = capabilities or Capabilities(settings.structured_output)

    @classmethod
    def from_settings(
        cls,
        settings: LLMSettings,
        tokenizer: Tokenizer | None = None,
        *,
        capabilities: Capabilities | None = None,
        usage: UsageLedger | None = None,
    ) -> OpenAILLM:
        """A client of the settings' endpoint that owns what it builds (`aclose()`, or `async with`, closes
        it): the SDK's client is built when a call first needs it. `ConfigError` for settings no client
        can be built from. `capabilities`: the endpoint's, when other clients share it; `usage`: the
        ledger to record calls in (default: a new one)."""
        check_endpoint(settings)
        return cls(
            None,
            settings,
            tokenizer,
            owns_client=True,
            capabilities=capabilities,
            lean_chat=True,
            usage=usage,
        )

    @property
    def model(self) -> str:
        return self._settings.model

    @property
    def usage(self) -> UsageLedger:
        return self._usage

    @property
    def tokenizer(self) -> Tokenizer:
        if self._tokenizer is None:
            self._tokenizer = Tokenizer.for_model(self._settings.model, self._settings.encoding)
        return self._tokenizer

    def _sdk(self) -> openai.AsyncOpenAI:
        """The SDK's client: the injected one, else one built from the settings now (owned)."""
        if self._client is None:
            self._client = create_openai_client(self._settings)
            self._owns_client = True
        return self._client

    async def aclose(self) -> None:
        if self._chat is not None:
            await self._chat.aclose()
        if self._owns_client and self._client is not None:
            await self._client.close()

    async def __aenter__(self) -> OpenAILLM:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    def _request(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec],
        max_tokens: int | None,
        temperature: float | None,
        tool_choice: ToolChoice,
        json_reply: bool = False,
    ) -> dict[str, Any]:
        if not messages:
            raise LLMError("a chat completion needs at least one message")
        request: dict[str, Any] = {"model": self._settings.model}
        if self._json_tools(messages, tools):
            schema = self._bound(json_tool_schema(tools, tool_choice))
            request["response_format"] = schema.to_openai("json_schema")
            messages = json_tool_messages(messages, tools, tool_choice)
        elif tools:
            request["tools"] = [t.to_openai() for t in tools]
            if tool_choice != "auto":
                request["tool_choice"] = tool_choice
        request["messages"] = [m.to_openai() for m in messages]
        if max_tokens is None:  # a plain-text reply (no JSON asked, no tools) may have a cap of its own
            plain = self._settings.max_text_tokens if not tools and not json_reply else None
            max_tokens = plain if plain is not None else self._settings.max_tokens
        if max_tokens is not None:
            request["max_tokens"] = max_tokens
        temperature = temperature if temperature is not None else self._settings.temperature
        if temperature is not None:
            request["temperature"] = temperature
        return request

    def _bound(self, schema: JsonSchema) -> JsonSchema:
        """`schema` within `llm.json_max_chars` and `llm.json_max_items`, when set."""
        chars, items = self._settings.json_max_chars, self._settings.json_max_items
        if chars is None and items is None:
            return schema
        return schema.model_copy(update={"shape": bounded(schema.shape, chars, items)})

    def _json_tools(self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> bool:
        """Whether the reply is asked for as JSON under `json_tool_schema` (`llm.tool_calls: json`): with
        tools, and after calls without them (a plain answer as `{"content": ...}`: in free text, a small
        model copies the calls it sees above)."""
        if self._settings.tool_calls != "json":
            return False
        return bool(tools) or any(m.tool_calls or m.role == "tool" for m in messages)

    def _read_tools(
        self, content: str | None, finish_reason: str | None, started: float
    ) -> tuple[str | None, tuple[ToolCall, ...]]:
        """The content and tool calls of a reply written as JSON (`llm.tool_calls: json`)."""
        try:
            return parse_json_tool_reply(content or "", cut=finish_reason == "length")
        except ValueError as exc:
            raise self._failed("chat", self.model, started, exc) from exc

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
        """The whole reply, within `llm.timeout` (retries included)."""
        json_reply = json_schema is not None
        request = self._request(messages, tools, max_tokens, temperature, tool_choice, json_reply)
        if json_schema is not None and self._json_tools(messages, tools):
            raise LLMError("a request cannot ask for both a JSON reply and tool calls written as JSON")
        started = time.perf_counter()
        try:
            async with asyncio.timeout(self._settings.timeout):
                data = await self._post(request, json_schema, started)
        except TimeoutError as exc:
            raise self._late("chat", self.model, started, "no reply", "llm.timeout") from exc
        try:
            content, calls, finish_reason, server_usage = parse_completion(data)
        except failures() as exc:
            raise self._failed("chat", self.model, started, exc) from exc
        if self._json_tools(messages, tools):
            content, calls = self._read_tools(content, finish_reason, started)
        usage = server_usage or self._count(messages, content, calls)
        return self._finish("chat", content, calls, finish_reason, usage, started)

    async def _post(self, request: dict[str, Any], json_schema: JsonSchema | None, started: float) -> Any:
        """The endpoint's answer to `request`, asking for `json_schema` as strictly as the endpoint allows."""
        mode = self.capabilities.structured_output if json_schema is not None else "off"
        while True:
            if json_schema is not None and mode != "off":
                request["response_format"] = self._bound(json_schema).to_openai(mode)
            elif json_schema is not None:
                request.pop("response_format", None)
            try:
                # The request is plain JSON already: the client's generic `post` sends it as it is (the
                # typed `create` re-walks every message, milliseconds per call); retries, auth and Azure
                # routing stay.
                if self._chat is not None:
                    data = await self._chat.complete(request)
                else:
                    data = await self._sdk().post(_PATH, body=request, cast_to=object)
            except failures() as exc:
                refused = refused_request(exc)
                # A prompt too long is refused in every mode: said as a code, it is not asked again; said
                # only in words (which might be about the format), it is an overflow at the last step.
                if refused is None or mode == "off" or has_overflow_code(refused.body):
                    raise self._failed("chat", self.model, started, exc) from exc
                # Endpoints without structured output refuse the request (400 or 422): one step lower.
                weaker = STRICTNESS[STRICTNESS.index(mode) + 1]
                _log.warning(
                    "%s: the endpoint refused response_format %s (HTTP %s); asking with %s",
                    self.model,
                    mode,
                    refused.status_code,
                    weaker,
                )
                mode = weaker
                continue
            if json_schema is not None:
                self.capabilities.accepted(mode)
            return data

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int | None = None,
        temperature: float | None = None,
        tool_choice: ToolChoice = "auto",
    ) -> AsyncIterator[TextDelta | ToolCallDelta | Completion]:
        """The reply as it comes: its first chunk within `llm.first_token_timeout` (retries included), each
        next one within `llm.chunk_timeout` of the last."""
        request = self._request(messages, tools, max_tokens, temperature, tool_choice)
        request["stream"] = True
        calls_as_json = ToolCallStream() if self._json_tools(messages, tools) else None
        if self._settings.stream_usage:
            request["stream_options"] = {"include_usage": True}
        started = time.perf_counter()
        reader = ChunkReader()
        pace = Pace(self._settings.first_token_timeout, self._settings.chunk_timeout)
        try:
            chunks: AsyncIterator[object]
            batches: AsyncIterator[list[object]]
            if self._chat is not None:
                # sent on the first `anext`, within the first deadline; the chunks that came together at once
                chunks = batches = self._chat.stream(request)
            else:
                client = self._sdk()
                import openai  # imported by `_sdk` already

                with pace:
                    chunks = await client.post(
                        _PATH,
                        body=request,
                        cast_to=object,
                        stream=True,
                        stream_cls=openai.AsyncStream[object],
                    )
                batches = _one_by_one(chunks)
            try:
                following = aiter(batches).__anext__  # not `anext(..., default)`: a wrapper per batch
                while True:
                    try:
                        with pace:
                            batch = await following()
                    except StopAsyncIteration:
                        break
                    pace.arrived()
                    if calls_as_json is None:
                        for event in _joined(reader, batch):
                            yield event
                        continue
                    for chunk in batch:
                        for event in reader.feed(chunk):
                            if not isinstance(event, TextDelta):
                                yield event
                            else:
                                for delta in calls_as_json.feed(event.text):
                                    yield delta
            finally:
                await _close(chunks)
        except TimeoutError as exc:
            if pace.late == "first":
                raise self._late(
                    "chat", self.model, started, "no first token", "llm.first_token_timeout"
                ) from exc
            raise self._late("chat", self.model, started, "the reply stalled", "llm.chunk_timeout") from exc
        except failures() as exc:
            raise self._failed("chat", self.model, started, exc) from exc
        finally:
            pace.close()
        content, tool_calls = reader.content, reader.tool_calls
        if calls_as_json is not None:
            content, tool_calls = self._read_tools(content, reader.finish_reason, started)
            if content:
                yield TextDelta(text=content)
        usage = reader.usage or self._count(messages, content, tool_calls)
        yield self._finish("stream", content, tool_calls, reader.finish_reason, usage, started)

    async def listed_context_window(self) -> int | None:
        """The model's context window as the endpoint's `GET /models` lists it (vLLM's `max_model_len`,
        OpenRouter's `context_length`: `brain.llm.windows`), or None: not listed, not an own endpoint
        (OpenAI's and Azure's list no windows), or no answer within 5 s (asked once, no retries, never
        an error)."""
        if self._settings.base_url is None or self._settings.api_type != "openai":
            return None
        try:
            async with asyncio.timeout(min(self._settings.timeout, _MODELS_TIMEOUT)):
                if self._chat is not None:  # the lean client: the SDK is not imported at start for it
                    data = await self._chat.models()
                else:
                    data = await self._sdk().with_options(max_retries=0).get("/models", cast_to=object)
        except TimeoutError:
            _log.debug("%s: no model list from the endpoint within %s s", self.model, _MODELS_TIMEOUT)
            return None
        except failures() as exc:
            _log.debug("no model list: %s", as_llm_error(self.model, exc, self._secrets))
            return None
        return listed_context_window(data, self.model)

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in requests within the endpoint's limits (`llm.embedding_batch_size` inputs
        and `llm.embedding_batch_tokens` tokens each); each request is recorded as one call."""
        model = self._settings.embedding_model
        if model is None:
            raise LLMError("no embedding model configured: set llm.embedding_model")
        return await self._embed_all(model, texts)

    async def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        """The relevance of each document to `query`, in order, from `llm.rerank_model`: through the
        endpoint's `/rerank`, or as the cosine of that model's embeddings (`llm.rerank_via`). One call."""
        model = self._settings.rerank_model
        if model is None:
            raise LLMError("no rerank model configured: set llm.rerank_model")
        if not documents:
            return []
        if self._settings.rerank_via == "embeddings":
            vectors = await self._embed_all(model, [query, *documents])
            return cosine_scores(vectors[0], vectors[1:])
        started = time.perf_counter()
        body = {"model": model, "query": query, "documents": list(documents), "top_n": len(documents)}
        try:
            async with asyncio.timeout(self._settings.timeout):
                reply = await self._sdk().post("/rerank", cast_to=object, body=body)
            scores = parse_rerank(reply, len(documents))
        except TimeoutError as exc:
            raise self._late("rerank", model, started, "no scores", "llm.timeout") from exc
        except failures() as exc:
            raise self._failed("rerank", model, started, exc) from exc
        except LLMError as exc:  # a reply that does not score every document
            telemetry.llm_call("rerank", model, started, error=exc)
            raise
        reported = reply.get("usage", {}) if isinstance(reply, dict) else {}
        tokens = reported.get("total_tokens") if isinstance(reported, dict) else None
        usage = Usage(
            prompt_tokens=tokens
            if isinstance(tokens, int)
            else self.tokenizer.count(query + "".join(documents)),
            completion_tokens=0,
            counted_locally=not isinstance(tokens, int),
        )
        latency = time.perf_counter() - started
        self._usage.record(CallRecord(kind="rerank", model=model, usage=usage, latency_s=latency))
        telemetry.llm_call("rerank", model, started, usage)
        return scores

    async def _embed_all(self, model: str, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        counts = [self.tokenizer.count(t) for t in texts]
        vectors: list[list[float]] = []
        settings = self._settings
        for part in cut(counts, settings.embedding_batch_size, settings.embedding_batch_tokens):
            vectors += await self._embed(
                model, texts[part.start : part.stop], sum(counts[part.start : part.stop])
            )
        return vectors

    async def _embed(self, model: str, texts: Sequence[str], tokens: int) -> list[list[float]]:
        started = time.perf_counter()
        try:
            async with asyncio.timeout(self._settings.timeout):
                response = await self._sdk().embeddings.create(model=model, input=list(texts))
            vectors = [d.embedding for d in sorted(response.data, key=lambda d: d.index)]
            prompt_tokens = response.usage.prompt_tokens if response.usage is not None else None
        except TimeoutError as exc:
            raise self._late("embeddings", model, started, "no vectors", "llm.timeout") from exc
        except failures() as exc:
            raise self._failed("embeddings", model, started, exc) from exc
        if len(vectors) != len(texts) or any(not v for v in vectors):
            raise LLMError(
                f"{model}: malformed embeddings reply: {len(vectors)} vectors for {len(texts)} texts"
            )
        usage = Usage(
            prompt_tokens=prompt_tokens if prompt_tokens is not None else tokens,
            completion_tokens=0,
            counted_locally=prompt_tokens is None,
        )
        self._usage.record(
            CallRecord(kind="embed", model=model, usage=usage, latency_s=time.perf_counter() - started)
        )
        telemetry.llm_call("embeddings", model, started, usage)
        return vectors

    def _failed(self, operation: str, model: str, started: float, exc: Exception) -> LLMError:
        """The `LLMError` for a failed call, recorded (telemetry) as a failed `operation`."""
        telemetry.llm_call(operation, model, started, error=exc)
        return as_llm_error(model, exc, self._secrets)

    def _late(self, operation: str, model: str, started: float, what: str, setting: str) -> LLMTimeoutError:
        """The `LLMTimeoutError` for a call past its deadline (`setting`), recorded as failed."""
        seconds = getattr(self._settings, setting.removeprefix("llm."))
        error = LLMTimeoutError(f"{model}: {what} within {seconds} s ({setting})")
        telemetry.llm_call(operation, model, started, error=error)
        return error

    def _count(
        self, messages: Sequence[ChatMessage], content: str | None, calls: Sequence[ToolCall]
    ) -> Usage:
        prompt = self.tokenizer.count_messages(
            (m.content or "") + "".join(c.name + c.arguments for c in m.tool_calls) for m in messages
        )
        completion = self.tokenizer.count((content or "") + "".join(c.name + c.arguments for c in calls))
        return Usage(prompt_tokens=prompt, completion_tokens=completion, counted_locally=True)

    def _finish(
        self,
        kind: Literal["chat", "stream"],
        content: str | None,
        calls: tuple[ToolCall, ...],
        finish_reason: str | None,
        usage: Usage,
        started: float,
    ) -> Completion:
        """The reply as a `Completion`, recorded. A model that answered nothing (an empty reply) or a tool
        call without a name is a `MalformedReplyError`; a reply with nothing of a chat completion in it at
        all (no content, no tool call, no finish_reason, no usage: e.g. a stream of something else) is an
        `LLMError` that says so, never an "empty reply"."""

        latency = time.perf_counter() - started
        self._usage.record(CallRecord(kind=kind, model=self.model, usage=usage, latency_s=latency))
        telemetry.llm_call("chat", self.model, started, usage)
        if not calls and not (content and content.strip()):
            if content is None and finish_reason is None and usage.counted_locally:
                raise LLMError(
                    f"{self.model}: the endpoint's reply is not a chat completion: no content, no tool "
                    "call, no finish_reason and no usage came back"
                )
            shown = "" if content is None else f", content {content[:20]!r}"
            raise MalformedReplyError(f"{self.model}: empty reply (finish_reason={finish_reason}{shown})")
        for call in calls:
            if not call.name:
                raise MalformedReplyError(
                    f"{self.model}: malformed tool call without a name (arguments {call.arguments[:80]!r})"
                )
        return Completion(
            content=content,
            tool_calls=calls,
            finish_reason=finish_reason,
            model=self.model,
            usage=usage,
            latency_s=latency,
        )


def _lean_chat(client: openai.AsyncOpenAI | None, settings: LLMSettings) -> ChatHTTP | None:
    """`ChatHTTP` where it applies: for the settings' endpoint when no client is injected (the SDK is not
    imported), else for a plain `openai.AsyncOpenAI`'s (not Azure's, not a subclass's)."""
    if client is None:
        return ChatHTTP.for_settings(settings)
    import openai

    return ChatHTTP.for_client(client) if type(client) is openai.AsyncOpenAI else None


async def _one_by_one(chunks: AsyncIterator[object]) -> AsyncIterator[list[object]]:
    """The SDK's chunks, each a batch of its own (`ChatHTTP.stream`'s are those that came together)."""
    async for chunk in chunks:
        yield [chunk]


def _joined(reader: ChunkReader, batch: list[object]) -> list[TextDelta | ToolCallDelta]:
    """The events of a batch of chunks, the text of consecutive chunks in one `TextDelta`: pieces of an
    answer that came together go on together (a server behind its streams passes on fewer, longer pieces,
    not as many as the model sent, each costing it its way to the client)."""
    if len(batch) == 1:
        return reader.feed(batch[0])
    events: list[TextDelta | ToolCallDelta] = []
    text: list[str] = []
    for chunk in batch:
        for event in reader.feed(chunk):
            if type(event) is TextDelta:
                text.append(event.text)
                continue
            if text:
                events.append(TextDelta(text="".join(text)))
                text = []
            events.append(event)
    if text:
        events.append(TextDelta(text="".join(text)))
    return events


async def _close(chunks: AsyncIterator[object]) -> None:
    """Close a stream: the SDK's (`AsyncStream.aclose`, its `close`) or `ChatHTTP`'s (a generator)."""
    await chunks.aclose()  # type: ignore[attr-defined]
