"""A reply that is not a chat completion says what came back (cut short), never "empty reply"; a model that
answered nothing is still an "empty reply", and a `MalformedReplyError` (it answered, unusably)."""

from __future__ import annotations

import pytest

from brain import ChatMessage, LLMError, OpenAILLM
from brain.errors import MalformedReplyError
from brain.llm.wire import ChunkReader, MalformedReply, parse_completion
from tests.brain.llm.test_openai_client import USER, gateway
from tests.support.openai_server import Chat, Payload, ScriptedOpenAIServer


def test_a_body_that_is_not_a_completion_is_shown_cut_short() -> None:
    page = "<html><head><title>502 Bad Gateway</title></head><body>" + "x" * 500 + "</body></html>"
    with pytest.raises(MalformedReply) as caught:
        parse_completion(page)
    assert str(caught.value) == f"the reply is not an object; got {page[:120]!r}…"
    with pytest.raises(MalformedReply, match=r"""^no choices; got '\{"error": "over capacity \ufffd"\}'$"""):
        parse_completion({"error": "over capacity \ud800"})  # a lone surrogate never reaches the message


def test_a_chunk_that_is_not_a_chunk_is_shown() -> None:
    with pytest.raises(MalformedReply, match=r"^a stream chunk is not an object; got 'event: ping'$"):
        ChunkReader().feed("event: ping")


async def test_a_completion_of_another_shape_says_what_came_back(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(Payload({"object": "list", "data": [], "note": "wrong API"}))
    async with gateway(openai_server, max_retries=0) as llm:
        with pytest.raises(LLMError) as caught:
            await llm.complete(USER)
    message = str(caught.value)
    assert "no choices; got " in message and '"note": "wrong API"' in message
    assert "empty reply" not in message


async def test_a_stream_of_something_else_is_not_an_empty_reply(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(Payload({"error": "this endpoint does not stream"}))
    async with gateway(openai_server, max_retries=0) as llm:
        with pytest.raises(LLMError, match="not a chat completion") as caught:
            async for _ in llm.stream([ChatMessage(role="user", content="hi")]):
                pass
    assert not isinstance(caught.value, MalformedReplyError)  # the endpoint's fault: retried, not counted
    assert "empty reply" not in str(caught.value)


@pytest.mark.parametrize("stream", [False, True])
async def test_a_model_that_answers_nothing_is_an_empty_reply(
    openai_server: ScriptedOpenAIServer, stream: bool
) -> None:
    openai_server.script(Chat("  \n"))

    async def ask(llm: OpenAILLM) -> None:
        if not stream:
            await llm.complete(USER)
        async for _ in llm.stream(USER):
            pass

    async with gateway(openai_server) as llm:
        with pytest.raises(MalformedReplyError, match=r"empty reply \(finish_reason=stop"):
            await ask(llm)
