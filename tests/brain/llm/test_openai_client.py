"""The gateway through the real SDK and real HTTP against the scripted server."""

from __future__ import annotations

import logging
import time
from typing import Any

import openai
import pytest

from brain import (
    ChatMessage,
    Completion,
    JsonSchema,
    LLMError,
    LLMSettings,
    OpenAILLM,
    TextDelta,
    ToolSpec,
)
from brain.errors import LLMTimeoutError
from brain.llm.endpoint import _plain_local
from brain.llm.protocol import LLM, ToolCall, ToolCallDelta
from brain.llm.usage import Usage
from tests.support.openai_server import (
    Chat,
    Dynamic,
    Embeddings,
    Fault,
    Malformed,
    Payload,
    Ranked,
    ScriptedOpenAIServer,
    Slow,
)

USER = [ChatMessage(role="system", content="Be brief."), ChatMessage(role="user", content="Hello there")]


def gateway(server: ScriptedOpenAIServer, **overrides: object) -> OpenAILLM:
    settings = LLMSettings.model_validate(
        {
            "base_url": server.url,
            "api_key": "sk-test-SECRET",
            "model": "gpt-4o-mini",
            "timeout": 5,
            "max_retries": 2,
            **overrides,
        }
    )
    return OpenAILLM.from_settings(settings)


async def test_completion_records_server_usage_and_sends_the_prompt(
    openai_server: ScriptedOpenAIServer,
) -> None:
    openai_server.script(Chat("Hi!", usage=(17, 3)))
    async with gateway(openai_server, temperature=0.2, max_tokens=50) as llm:
        assert isinstance(llm, LLM)
        reply = await llm.complete(USER)
    assert reply.content == "Hi!"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (17, 3)
    assert not reply.usage.counted_locally
    body = openai_server.requests[0].body
    assert body["model"] == "gpt-4o-mini"
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hello there"},
    ]
    assert body["temperature"] == 0.2 and body["max_tokens"] == 50
    assert openai_server.requests[0].headers["authorization"] == "Bearer sk-test-SECRET"


async def test_a_plain_text_reply_has_its_own_cap(openai_server: ScriptedOpenAIServer) -> None:
    schema = JsonSchema(name="fact", shape={"type": "object", "properties": {"a": {"type": "string"}}})
    tool = ToolSpec(name="note", description="Note it.", parameters={"type": "object", "properties": {}})
    openai_server.script(*[Chat("ok")] * 4, Chat('{"a": "b"}'), Chat(None, tool_calls=(("note", {}),)))
    async with gateway(openai_server, max_tokens=900, max_text_tokens=300) as llm:
        await llm.complete(USER)
        [_ async for _ in llm.stream(USER)]
        await llm.complete(USER, max_tokens=40)  # a call's own cap wins
        [_ async for _ in llm.stream(USER, max_tokens=40)]
        await llm.complete(USER, json_schema=schema)
        await llm.complete(USER, tools=[tool])
    caps = [request.body.get("max_tokens") for request in openai_server.chat_requests()]
    assert caps == [300, 300, 40, 40, 900, 900]  # JSON and tool replies keep max_tokens


async def test_usage_counted_locally_when_server_sends_none(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(Chat("four words of reply", usage=None))
    async with gateway(openai_server) as llm:
        reply = await llm.complete(USER)
    assert reply.usage.counted_locally
    assert reply.usage.completion_tokens == llm.tokenizer.count("four words of reply")
    assert reply.usage.prompt_tokens == llm.tokenizer.count_messages(["Be brief.", "Hello there"])


async def test_usage_totals_equal_what_the_server_reported(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(Chat("a", usage=(10, 1)), Chat("b", usage=(20, 2)), Chat("c d", usage=(30, 3)))
    openai_server.script(Embeddings(((0.1, 0.2),), prompt_tokens=4))
    async with gateway(openai_server, embedding_model="text-embedding-3-small") as llm:
        for _ in range(2):
            await llm.complete(USER)
        async for _event in llm.stream(USER):
            pass
        await llm.embed(["x"])
    totals = llm.usage.totals()
    assert (totals.calls, totals.prompt_tokens, totals.completion_tokens) == (4, 64, 6)
    assert [r.kind for r in llm.usage.records] == ["chat", "chat", "stream", "embed"]
    assert llm.usage.by_model()["gpt-4o-mini"].calls == 3
    assert all(r.latency_s > 0 for r in llm.usage.records)


async def test_500_storm_retries_then_llm_error_with_cause(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(Fault(500), Fault(502), Fault(503))
    async with gateway(openai_server, max_retries=2) as llm:
        with pytest.raises(LLMError, match="HTTP 503") as caught:
            await llm.complete(USER)
    assert isinstance(caught.value.__cause__, openai.InternalServerError)
    assert len(openai_server.requests) == 3


async def test_429_retry_after_is_honoured(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(Fault(429, {"Retry-After": "1"}), Chat("done"))
    async with gateway(openai_server) as llm:
        reply = await llm.complete(USER)
    assert reply.content == "done"
    first, second = openai_server.requests
    assert second.at - first.at >= 0.95


@pytest.mark.serial
async def test_a_hung_endpoint_ends_at_the_timeout_retries_included(
    openai_server: ScriptedOpenAIServer,
) -> None:
    openai_server.script(Slow(1.5, Chat("late")))
    async with gateway(openai_server, timeout=0.3, max_retries=3) as llm:
        started = time.perf_counter()
        with pytest.raises(LLMTimeoutError, match=r"no reply within 0.3 s \(llm.timeout\)"):
            await llm.complete(USER)
    assert time.perf_counter() - started < 1.0  # not 4 attempts of 0.3 s
    assert len(openai_server.requests) == 1
    assert llm.usage.totals().calls == 0


@pytest.mark.serial
async def test_a_stream_without_a_first_token_ends_at_its_deadline(
    openai_server: ScriptedOpenAIServer,
) -> None:
    openai_server.script(Slow(2.0, Chat("late")))
    async with gateway(openai_server, first_token_timeout=0.3, max_retries=3) as llm:
        started = time.perf_counter()
        with pytest.raises(LLMTimeoutError, match=r"no first token within 0.3 s \(llm.first_token_timeout\)"):
            _ = [event async for event in llm.stream(USER)]
    assert time.perf_counter() - started < 1.0
    assert len(openai_server.requests) == 1


@pytest.mark.serial
async def test_a_stream_that_stalls_between_chunks_ends_at_its_deadline(
    openai_server: ScriptedOpenAIServer,
) -> None:
    openai_server.script(Chat("one two three", chunk_delay=1.0))
    got: list[str] = []
    async with gateway(openai_server, chunk_timeout=0.3, first_token_timeout=5) as llm:
        started = time.perf_counter()

        async def read() -> None:
            async for event in llm.stream(USER):
                if isinstance(event, TextDelta):
                    got.append(event.text)

        with pytest.raises(LLMTimeoutError, match=r"the reply stalled within 0.3 s \(llm.chunk_timeout\)"):
            await read()
    assert time.perf_counter() - started < 1.2
    assert got == ["one "]  # what came before the stall was passed on; nothing after it


@pytest.mark.serial
async def test_a_slow_but_steady_stream_is_not_cut(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(Chat("a b c d e f", chunk_delay=0.1))
    async with gateway(openai_server, chunk_timeout=0.3, first_token_timeout=0.3) as llm:
        pieces = [e async for e in llm.stream(USER)]  # 0.6 s in all: longer than each deadline
    assert isinstance(pieces[-1], Completion) and pieces[-1].content == "a b c d e f"


async def test_malformed_json_is_an_error(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(Malformed())
    async with gateway(openai_server, max_retries=0) as llm:
        with pytest.raises(LLMError, match=r"malformed reply .*not JSON: '\{\"id\": \"x\""):
            await llm.complete(USER)  # says what came back


@pytest.mark.parametrize("content", ["", "   \n", None])
async def test_empty_reply_is_an_error_not_an_empty_string(
    openai_server: ScriptedOpenAIServer, content: str | None
) -> None:
    openai_server.script(Chat(content))
    async with gateway(openai_server) as llm:
        with pytest.raises(LLMError, match="empty reply"):
            await llm.complete(USER)


SHAPE = JsonSchema(
    name="verdict",
    shape={
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"],
        "additionalProperties": False,
    },
)


async def test_json_replies_use_structured_output(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(Chat('{"ok": true}'), Chat("plain"))
    async with gateway(openai_server) as llm:
        await llm.complete(USER, json_schema=SHAPE)
        await llm.complete(USER)
    first, second = (r.body for r in openai_server.chat_requests())
    assert first["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "verdict", "schema": SHAPE.shape, "strict": True},
    }
    assert "response_format" not in second


async def test_an_endpoint_without_structured_output_is_asked_one_step_lower_and_remembered(
    openai_server: ScriptedOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    openai_server.script(
        Fault(400, message="response_format json_schema is not supported"),
        Fault(422, message="unknown field response_format"),
        Chat('{"facts": ["a"]}'),
        Chat('{"facts": ["b"]}'),
    )
    async with gateway(openai_server) as llm:
        with caplog.at_level(logging.WARNING, logger="brain.llm"):
            first = await llm.complete(USER, json_schema=SHAPE)
        second = await llm.complete(USER, json_schema=SHAPE)
    assert (first.content, second.content) == ('{"facts": ["a"]}', '{"facts": ["b"]}')
    formats = [r.body.get("response_format") for r in openai_server.chat_requests()]
    assert formats == [
        SHAPE.to_openai("json_schema"),
        {"type": "json_object"},
        None,
        None,  # the endpoint's answer is remembered: no refused request per call
    ]
    assert "refused response_format json_schema (HTTP 400)" in caplog.text
    assert len(llm.usage.records) == 2  # refused requests are not calls


async def test_a_bad_request_without_json_is_an_error_at_once(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(Fault(400, message="context length exceeded"))
    async with gateway(openai_server) as llm:
        with pytest.raises(LLMError, match="HTTP 400"):
            await llm.complete(USER)
    assert len(openai_server.chat_requests()) == 1


async def test_a_bad_request_that_is_not_about_json_still_fails_after_the_last_step(
    openai_server: ScriptedOpenAIServer,
) -> None:
    openai_server.script(*[Fault(400, message="context length exceeded")] * 3)
    async with gateway(openai_server, structured_output="json_object") as llm:
        with pytest.raises(LLMError, match="context length exceeded"):
            await llm.complete(USER, json_schema=SHAPE)
    assert [r.body.get("response_format") for r in openai_server.chat_requests()] == [
        {"type": "json_object"},
        None,
    ]
    assert openai_server.take_unused() == 1


async def test_structured_output_off_sends_no_response_format(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(Chat('{"facts": []}'))
    async with gateway(openai_server, structured_output="off") as llm:
        await llm.complete(USER, json_schema=SHAPE)
    assert "response_format" not in openai_server.chat_requests()[0].body


@pytest.mark.parametrize("delay", [0.2, 0.0])
async def test_streaming_assembles_chunks_and_usage(
    openai_server: ScriptedOpenAIServer, delay: float
) -> None:
    chunks = ("The", " qu", "ick brown", " fox")
    openai_server.script(Chat("The quick brown fox", chunks=chunks, usage=(9, 4), chunk_delay=delay))
    deltas: list[str] = []
    final: list[Completion] = []
    async with gateway(openai_server) as llm:
        async for event in llm.stream(USER):
            if isinstance(event, TextDelta):
                deltas.append(event.text)
            else:
                final.append(event)
    if delay:  # chunks that come apart go on apart
        assert deltas == list(chunks)
    else:  # those that come together go on together: in whole chunks, never cut
        assert "".join(deltas) == "The quick brown fox" and len(deltas) <= len(chunks)
        ends = {len("".join(chunks[: i + 1])) for i in range(len(chunks))}
        assert {len("".join(deltas[: i + 1])) for i in range(len(deltas))} <= ends
    assert len(final) == 1 and final[0].content == "The quick brown fox"
    assert (final[0].usage.prompt_tokens, final[0].usage.completion_tokens) == (9, 4)
    assert openai_server.requests[0].body["stream_options"] == {"include_usage": True}


async def test_streaming_without_usage_counts_locally(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(Chat("one two", usage=None))
    async with gateway(openai_server, stream_usage=False) as llm:
        events = [e async for e in llm.stream(USER)]
    final = events[-1]
    assert isinstance(final, Completion) and final.usage.counted_locally
    assert "stream_options" not in openai_server.requests[0].body


async def test_empty_stream_is_an_error(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(Chat(""))
    async with gateway(openai_server) as llm:
        with pytest.raises(LLMError, match="empty reply"):
            async for _ in llm.stream(USER):
                pass


TOOL = ToolSpec(
    name="get_weather",
    description="Weather for a city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


async def test_tool_calls_plain_and_streamed(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(
        Chat(None, tool_calls=(("get_weather", {"city": "Oslo"}),), finish_reason="tool_calls"),
        Chat(None, tool_calls=(("get_weather", {"city": "Bergen"}),), finish_reason="tool_calls"),
    )
    async with gateway(openai_server) as llm:
        plain = await llm.complete(USER, tools=[TOOL])
        streamed = [e async for e in llm.stream(USER, tools=[TOOL])][-1]
    assert isinstance(streamed, Completion)
    assert plain.tool_calls[0].name == "get_weather" and plain.tool_calls[0].arguments == '{"city": "Oslo"}'
    assert streamed.tool_calls[0].arguments == '{"city": "Bergen"}' and streamed.tool_calls[0].id == "call_0"
    assert openai_server.requests[0].body["tools"][0]["function"]["name"] == "get_weather"
    follow_up = [*USER, plain.as_message(), ChatMessage(role="tool", tool_call_id="call_0", content="sunny")]
    assert follow_up[-2].to_openai()["tool_calls"][0]["function"]["arguments"] == '{"city": "Oslo"}'


async def test_a_required_tool_call_is_asked_for(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(Chat(None, tool_calls=(("get_weather", {"city": "Oslo"}),)))
    async with gateway(openai_server) as llm:
        await llm.complete(USER, tools=[TOOL], tool_choice="required")
    assert openai_server.requests[0].body["tool_choice"] == "required"


async def test_tools_written_as_json_for_an_endpoint_without_tool_calls(
    openai_server: ScriptedOpenAIServer,
) -> None:
    call = '{"name": "get_weather", "arguments": {"city": "Oslo"}}'
    openai_server.script(
        Chat(call), Chat(call, chunks=tuple(call[i : i + 4] for i in range(0, len(call), 4)))
    )
    async with gateway(openai_server, tool_calls="json") as llm:
        plain = await llm.complete(USER, tools=[TOOL], tool_choice="required")
        events = [e async for e in llm.stream([*USER, plain.as_message()], tools=[TOOL])]
    assert plain.content is None and plain.tool_calls[0].name == "get_weather"
    assert plain.tool_calls[0].arguments == '{"city": "Oslo"}'
    streamed = events[-1]
    assert isinstance(streamed, Completion) and streamed.tool_calls == plain.tool_calls
    assert not any(isinstance(e, TextDelta) for e in events)
    assert "".join(e.arguments for e in events if isinstance(e, ToolCallDelta)) == '{"city": "Oslo"}'
    first, second = (r.body for r in openai_server.requests)
    assert "tools" not in first and "tool_choice" not in first
    options = first["response_format"]["json_schema"]["schema"]["anyOf"]
    assert [o["properties"]["name"]["const"] for o in options] == ["get_weather"]  # required: no plain answer
    assert "get_weather(city)" in first["messages"][0]["content"]
    assert second["messages"][-1] == {"role": "assistant", "content": call}
    assert len(second["response_format"]["json_schema"]["schema"]["anyOf"]) == 2  # auto: or a plain answer


async def test_json_replies_are_bounded_when_the_settings_say_so(openai_server: ScriptedOpenAIServer) -> None:
    schema = JsonSchema(name="x", shape={"type": "object", "properties": {"a": {"type": "string"}}})
    openai_server.script(Chat('{"a": "b"}'), Chat('{"name": "get_weather", "arguments": {"city": "Oslo"}}'))
    async with gateway(openai_server, json_max_chars=50, json_max_items=4, tool_calls="json") as llm:
        await llm.complete(USER, json_schema=schema)
        await llm.complete(USER, tools=[TOOL], tool_choice="required")
    first, second = (r.body["response_format"]["json_schema"]["schema"] for r in openai_server.requests)
    assert first["properties"]["a"] == {"type": "string", "maxLength": 50}
    assert second["anyOf"][0]["properties"]["arguments"]["properties"]["city"]["maxLength"] == 50


async def test_after_calls_written_as_json_a_plain_answer_is_json_too(
    openai_server: ScriptedOpenAIServer,
) -> None:
    call = Completion(
        content=None,
        tool_calls=(ToolCall(id="c1", name="get_weather", arguments='{"city": "Oslo"}'),),
        model="m",
        usage=Usage(prompt_tokens=1, completion_tokens=1),
    )
    history = [*USER, call.as_message(), ChatMessage(role="tool", tool_call_id="c1", content="sunny")]
    openai_server.script(Chat('{"content": "It is sunny in Oslo."}'), Chat("plain"))
    async with gateway(openai_server, tool_calls="json") as llm:
        answer = await llm.complete(history)
        assert (await llm.complete(USER)).content == "plain"  # no calls anywhere: a plain request
    assert answer.content == "It is sunny in Oslo." and not answer.tool_calls
    first, second = (r.body for r in openai_server.requests)
    assert [o["required"] for o in first["response_format"]["json_schema"]["schema"]["anyOf"]] == [
        ["content"]
    ]
    assert [m["role"] for m in first["messages"]] == ["system", "user", "assistant", "user"]
    assert "response_format" not in second


async def test_a_json_tool_reply_cut_by_the_token_limit_keeps_what_was_written(
    openai_server: ScriptedOpenAIServer,
) -> None:
    openai_server.script(
        Chat('{"name": "get_weather", "arguments": {"city": "Os', finish_reason="length"),
        Chat('{"name": "get_weather", "arguments": {"city": "Os'),  # not cut: a broken reply
    )
    async with gateway(openai_server, tool_calls="json") as llm:
        cut = await llm.complete(USER, tools=[TOOL])
        with pytest.raises(LLMError, match="malformed reply"):
            await llm.complete(USER, tools=[TOOL])
    assert cut.tool_calls[0].arguments == '{"city": "Os"}' and cut.finish_reason == "length"


async def test_embeddings(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(Embeddings(((1.0, 0.0), (0.0, 1.0))), Embeddings(((1.0,),)))
    async with gateway(openai_server, embedding_model="emb") as llm:
        assert await llm.embed(["a", "b"]) == [[1.0, 0.0], [0.0, 1.0]]
        with pytest.raises(LLMError, match="1 vectors for 2 texts"):
            await llm.embed(["a", "b"])
    body = openai_server.requests[0].body
    assert (body["model"], body["input"]) == ("emb", ["a", "b"])


def vectors_for(body: dict[str, Any]) -> Embeddings:
    return Embeddings(tuple((float(i), 1.0) for i, _ in enumerate(body["input"])))


async def test_embeddings_are_requested_within_the_endpoints_limits(
    openai_server: ScriptedOpenAIServer,
) -> None:
    openai_server.script(*[Dynamic(vectors_for)] * 6)
    long = "word " * 700  # ~700 tokens: two of them do not fit in 1,000
    texts = ["a", "b", "c", "d", "e", "f", "g", long, long, "h"]
    async with gateway(
        openai_server, embedding_model="emb", embedding_batch_size=3, embedding_batch_tokens=1_000
    ) as llm:
        vectors = await llm.embed(texts)
    sent = [r.body["input"] for r in openai_server.requests]
    assert sent == [["a", "b", "c"], ["d", "e", "f"], ["g", long], [long, "h"]]
    assert len(vectors) == len(texts) and vectors[3] == [0.0, 1.0]  # in order, per request
    assert [r.kind for r in llm.usage.records] == ["embed"] * 4
    assert openai_server.take_unused() == 2


async def test_embed_without_model_is_a_clear_error(openai_server: ScriptedOpenAIServer) -> None:
    async with gateway(openai_server) as llm:
        with pytest.raises(LLMError, match="embedding_model"):
            await llm.embed(["a"])


async def test_connection_refused_is_llm_error() -> None:
    settings = LLMSettings(base_url="http://127.0.0.1:9/v1", max_retries=1, timeout=2)
    async with OpenAILLM.from_settings(settings) as llm:
        with pytest.raises(LLMError, match="cannot reach") as caught:
            await llm.complete(USER)
    assert isinstance(caught.value.__cause__, openai.APIConnectionError)


async def test_injected_client_is_not_closed_by_the_gateway(openai_server: ScriptedOpenAIServer) -> None:
    client = openai.AsyncOpenAI(api_key="k", base_url=openai_server.url)
    async with OpenAILLM(client, LLMSettings(base_url=openai_server.url)):
        pass
    assert not client.is_closed()
    await client.close()
    owned = gateway(openai_server, embedding_model="e")
    assert owned._client is None  # built when a call first needs the SDK (a chat never does)
    openai_server.script(Embeddings(((0.5, 0.5),)))
    await owned.embed(["x"])
    built = owned._client
    assert built is not None and not built.is_closed()
    await owned.aclose()
    assert built.is_closed()


async def test_api_key_never_logged(
    openai_server: ScriptedOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    openai_server.script(Fault(500), Chat("ok"))
    with caplog.at_level(logging.DEBUG):
        async with gateway(openai_server) as llm:
            await llm.complete(USER)
            assert "sk-test-SECRET" not in repr(llm._settings)
    assert "sk-test-SECRET" not in caplog.text
    assert caplog.records  # DEBUG logging really was on


@pytest.mark.parametrize(
    "data",
    [
        [],
        {"choices": []},
        {"choices": [{"message": "hi"}]},
        {"choices": [{"message": {"content": 5}}]},
        {"choices": [{"message": {"tool_calls": [{"function": None}]}}]},
        {"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": "many"}},
    ],
)
def test_malformed_completions_are_named(data: object) -> None:
    from brain.llm.wire import MalformedReply, parse_completion

    with pytest.raises(MalformedReply):
        parse_completion(data)


def test_chunks_assemble_tool_calls_and_text() -> None:
    from brain.llm.wire import ChunkReader

    reader = ChunkReader()
    chunks = [
        {"choices": [{"delta": {"role": "assistant"}}]},
        {"choices": [{"delta": {"content": "你好"}}]},
        {"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "f"}}]}}]},
        {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": '{"a"'}}]}}]},
        {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": ": 1}"}}]}}]},
        {"choices": [{"delta": {}, "finish_reason": "tool_calls"}]},
        {"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 3}},
    ]
    events = [e for c in chunks for e in reader.feed(c)]
    assert len(events) == 4 and reader.content == "你好" and reader.finish_reason == "tool_calls"
    assert [(c.id, c.name, c.arguments) for c in reader.tool_calls] == [("c1", "f", '{"a": 1}')]
    assert reader.usage is not None and reader.usage.prompt_tokens == 7


async def test_rerank_through_the_endpoints_rerank_route(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(Ranked((0.1, 0.9, 0.5)), Ranked((0.3, 0.2, 0.7), total_tokens=None))
    async with gateway(openai_server, rerank_model="rr") as llm:
        assert await llm.rerank("where is Bea", ["a", "b", "c"]) == [0.1, 0.9, 0.5]  # by index, not order
        await llm.rerank("where is Bea", ["a", "b", "c"])
        assert await llm.rerank("nothing to rank", []) == []  # no request
    request = openai_server.requests[0]
    assert request.path == "/v1/rerank"
    assert request.body == {"model": "rr", "query": "where is Bea", "documents": ["a", "b", "c"], "top_n": 3}
    assert request.headers["authorization"] == "Bearer sk-test-SECRET"
    records = llm.usage.records
    assert [(r.kind, r.model) for r in records] == [("rerank", "rr")] * 2
    assert (records[0].usage.prompt_tokens, records[0].usage.counted_locally) == (12, False)
    assert records[1].usage.counted_locally and records[1].usage.prompt_tokens > 0


@pytest.mark.parametrize(
    "reply",
    [
        Payload({"data": []}),
        Payload({"results": [{"index": 0, "relevance_score": 0.5}]}),  # one of two documents
        Payload({"results": [{"index": 0, "relevance_score": 1}, {"index": 0, "relevance_score": 2}]}),
        Payload({"results": [{"index": 0, "relevance_score": "high"}, {"index": 1, "relevance_score": 2}]}),
        Payload({"results": [{"index": 5, "relevance_score": 1}, {"index": 1, "relevance_score": 2}]}),
        Malformed(),
        Fault(404, message="no such route"),
    ],
)
async def test_a_bad_rerank_reply_is_an_llm_error(openai_server: ScriptedOpenAIServer, reply: Any) -> None:
    openai_server.script(reply)
    async with gateway(openai_server, rerank_model="rr", max_retries=0) as llm:
        with pytest.raises(LLMError, match="rr") as caught:
            await llm.rerank("q", ["a", "b"])
    assert "SECRET" not in str(caught.value) and caught.value.__cause__ is not None


async def test_rerank_through_an_embeddings_endpoint(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(Embeddings(((1.0, 0.0), (0.0, 2.0), (3.0, 0.0), (1.0, 1.0))))
    async with gateway(openai_server, rerank_model="big-emb", rerank_via="embeddings") as llm:
        scores = await llm.rerank("q", ["a", "b", "c"])
    assert scores[0] == 0.0 and scores[1] == 1.0 and abs(scores[2] - 0.5**0.5) < 1e-9
    body = openai_server.requests[0].body
    assert (openai_server.requests[0].path, body["model"], body["input"]) == (
        "/v1/embeddings",
        "big-emb",
        ["q", "a", "b", "c"],
    )


async def test_rerank_without_model_is_a_clear_error(openai_server: ScriptedOpenAIServer) -> None:
    async with gateway(openai_server) as llm:
        with pytest.raises(LLMError, match="rerank_model"):
            await llm.rerank("q", ["a"])


@pytest.mark.parametrize(
    ("url", "plain"),
    [
        ("http://127.0.0.1:8080/v1", True),
        ("http://localhost:11434/v1", True),
        ("http://[::1]:8080/v1", True),
        ("https://127.0.0.1:8443/v1", False),
        ("http://10.0.0.2/v1", False),
        ("https://api.openai.com/v1", False),
        (None, False),
    ],
)
def test_only_plain_http_on_this_machine_skips_loading_certificate_authorities(
    url: str | None, plain: bool
) -> None:
    assert _plain_local(LLMSettings(base_url=url)) is plain
