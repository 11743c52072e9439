"""The in-process ScriptedLLM: as strict as the scripted server."""

from __future__ import annotations

import pytest

from brain import ChatMessage, Completion, LLMError, TextDelta
from brain.llm.protocol import LLM
from brain.testing import ScriptedCall, ScriptedLLM, ScriptExhausted, tool_calls

MSGS = [ChatMessage(role="user", content="hello world")]


async def test_replies_in_order_and_records_calls() -> None:
    llm = ScriptedLLM(["one", "two"])
    assert isinstance(llm, LLM)
    assert (await llm.complete(MSGS)).content == "one"
    assert (await llm.complete(MSGS, max_tokens=5)).content == "two"
    assert [c.kind for c in llm.calls] == ["chat", "chat"]
    assert llm.calls[1].max_tokens == 5
    assert llm.calls[0].prompt_tokens == 3 + 2 + 3
    assert llm.usage.totals().calls == 2
    llm.assert_consumed()


async def test_running_out_fails_loudly() -> None:
    llm = ScriptedLLM(["only"])
    await llm.complete(MSGS)
    with pytest.raises(ScriptExhausted, match="call #2"):
        await llm.complete(MSGS)


def test_unconsumed_replies_fail() -> None:
    with pytest.raises(AssertionError, match="1 scripted replies were never asked for"):
        ScriptedLLM(["left"]).assert_consumed()


async def test_exceptions_functions_and_empty_replies() -> None:
    def obey(call: ScriptedCall) -> str:
        return f"{len(call.messages)} messages"

    llm = ScriptedLLM([LLMError("boom"), obey, "  "])
    with pytest.raises(LLMError, match="boom"):
        await llm.complete(MSGS)
    assert (await llm.complete(MSGS)).content == "1 messages"
    with pytest.raises(LLMError, match="empty reply"):
        await llm.complete(MSGS)


async def test_stream_and_tool_calls() -> None:
    llm = ScriptedLLM(["streamed reply text", tool_calls(("f", {"x": 1}))])
    events = [e async for e in llm.stream(MSGS)]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "streamed reply text"
    assert isinstance(events[-1], Completion)
    reply = await llm.complete(MSGS)
    assert reply.tool_calls[0].name == "f" and reply.tool_calls[0].arguments == '{"x": 1}'


async def test_embeddings_from_script_or_function() -> None:
    assert await ScriptedLLM([[[1.0], [2.0]]]).embed(["a", "b"]) == [[1.0], [2.0]]
    llm = ScriptedLLM(embedder=lambda t: [float(len(t))])
    assert await llm.embed(["abc"]) == [[3.0]]
    assert llm.calls[0].texts == ("abc",)


async def test_rerank_from_script_or_function() -> None:
    llm = ScriptedLLM([[0.5, 0.25]])
    assert await llm.rerank("q", ["a", "b"]) == [0.5, 0.25]
    with pytest.raises(ScriptExhausted):
        await llm.rerank("q", ["a"])
    assert [(c.kind, c.query, c.texts) for c in llm.calls] == [
        ("rerank", "q", ("a", "b")),
        ("rerank", "q", ("a",)),
    ]
    wrong = ScriptedLLM([[0.5]])
    with pytest.raises(TypeError, match="one score per document"):
        await wrong.rerank("q", ["a", "b"])
    by_length = ScriptedLLM(reranker=lambda q, d: float(len(d)))
    assert await by_length.rerank("q", ["abc", "a"]) == [3.0, 1.0]
    assert [r.kind for r in by_length.usage.records] == ["rerank"]
