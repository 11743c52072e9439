"""A prompt longer than the model's context window: recognized by code or by words, never retried, never
mistaken for a refused response_format, the window the endpoint names kept with the error."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import openai
import pytest

from brain import ChatMessage, JsonSchema, LLMError, LLMSettings, OpenAILLM
from brain.errors import ContextOverflowError
from brain.llm.endpoint import as_llm_error
from brain.llm.overflow import context_limit, is_context_overflow
from tests.support.openai_server import Chat, Fault, ScriptedOpenAIServer

OPENAI_WORDS = (
    "This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens. "
    "Please reduce the length of the messages."
)
PROMPT = [ChatMessage(role="user", content="Hello there")]


def gateway(server: ScriptedOpenAIServer, **overrides: object) -> OpenAILLM:
    settings = LLMSettings.model_validate(
        {"base_url": server.url, "api_key": "sk-test-SECRET", "timeout": 5, "max_retries": 2, **overrides}
    )
    return OpenAILLM.from_settings(settings)


async def test_a_streamed_answer_beyond_the_window_is_an_overflow_asked_once(
    openai_server: ScriptedOpenAIServer,
) -> None:
    openai_server.script(Fault(400, message=OPENAI_WORDS), Chat("Hi."))
    async with gateway(openai_server) as llm:
        with pytest.raises(ContextOverflowError, match="context window of 8192 tokens") as caught:
            [event async for event in llm.stream(PROMPT)]
        assert caught.value.limit == 8192 and "SECRET" not in str(caught.value)
        assert len(openai_server.chat_requests()) == 1  # a 400 is never retried
        assert [e async for e in llm.stream(PROMPT)][-1].content == "Hi."  # a shorter prompt goes on


OPENAI_BODY = {
    "error": {
        "message": OPENAI_WORDS,
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}


async def test_openais_overflow_code_ends_a_json_reply_at_once_without_a_weaker_format() -> None:
    """OpenAI's own error body, through the SDK's own error handling (a transport answering as OpenAI)."""
    sent: list[dict[str, Any]] = []

    def openai_refuses(request: httpx2.Request) -> httpx2.Response:
        sent.append(json.loads(request.content))
        return httpx2.Response(400, json=OPENAI_BODY)

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(openai_refuses))
    client = openai.AsyncOpenAI(api_key="sk-test", max_retries=2, http_client=http)
    schema = JsonSchema(name="facts", shape={"type": "object", "properties": {}})
    async with OpenAILLM(client, LLMSettings(api_key="sk-test"), owns_client=True) as llm:
        with pytest.raises(ContextOverflowError, match="context window of 8192 tokens") as caught:
            await llm.complete(PROMPT, json_schema=schema)
        assert caught.value.limit == 8192
        assert llm.capabilities.structured_output == "json_schema"  # nothing learnt from it
    assert len(sent) == 1 and sent[0]["response_format"]["type"] == "json_schema"


async def test_an_overflow_said_only_in_words_is_one_at_the_last_format(
    openai_server: ScriptedOpenAIServer,
) -> None:
    openai_server.script(*[Fault(400, message="prompt is too long: 210000 tokens > 200000 maximum")] * 2)
    schema = JsonSchema(name="facts", shape={"type": "object", "properties": {}})
    async with gateway(openai_server, structured_output="json_object") as llm:
        with pytest.raises(ContextOverflowError) as caught:
            await llm.complete(PROMPT, json_schema=schema)
    assert caught.value.limit == 200_000 and len(openai_server.chat_requests()) == 2


async def test_other_refusals_stay_plain_llm_errors(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(Fault(400, message="Invalid value for 'temperature'"))
    async with gateway(openai_server) as llm:
        with pytest.raises(LLMError) as caught:
            await llm.complete(PROMPT)
    assert not isinstance(caught.value, ContextOverflowError)


def _status_error(status: int, body: dict[str, Any]) -> openai.APIStatusError:
    request = httpx2.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    response = httpx2.Response(status, request=request, json={"error": body})
    kind = openai.BadRequestError if status == 400 else openai.APIStatusError
    return kind(f"Error code: {status} - {{'error': {body!r}}}", response=response, body=body)


def test_openais_error_code_is_an_overflow_and_keeps_its_window_through_redaction() -> None:
    body = {
        "message": "Your input exceeds the context window of this model. sk-KEY",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
    error = as_llm_error("gpt-4o", _status_error(400, body), ["sk-KEY"])
    assert isinstance(error, ContextOverflowError) and error.limit is None
    assert "sk-KEY" not in str(error)
    llama = {"code": 400, "message": "the request exceeds the available context size", "n_ctx": 4096}
    llama_error = as_llm_error("m", _status_error(400, {**llama, "type": "exceed_context_size_error"}), [])
    assert isinstance(llama_error, ContextOverflowError) and llama_error.limit == 4096


@pytest.mark.parametrize(
    ("status", "message", "limit"),
    [
        (400, OPENAI_WORDS, 8192),
        (400, "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens", 4096),
        (400, "Prompt contains 40000 tokens, too large for model with 32768 maximum context length", 32768),
        (
            400,
            "The input token count (2000000) exceeds the maximum number of tokens allowed (1048576)",
            1_048_576,
        ),
        (422, "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096", 4096),
        (400, "the request exceeds the available context size, try increasing it", None),
        (400, "input is too long for requested model", None),
        (413, "Request exceeds the model's context window", None),
    ],
)
def test_overflow_wordings_and_the_windows_they_name(status: int, message: str, limit: int | None) -> None:
    body = {"message": message, "type": "invalid_request_error"}
    assert is_context_overflow(status, body, f"Error code: {status} - {body}")
    assert context_limit(body, message) == limit


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (429, {"message": OPENAI_WORDS}),  # a rate limit is never an overflow
        (413, {"message": "Request too large for model on tokens per minute (TPM): Limit 6000"}),
        (400, {"message": "Invalid value for 'temperature'", "code": "invalid_value"}),
        (500, {"message": OPENAI_WORDS}),  # retried by the client as any 5xx
    ],
)
def test_what_is_not_an_overflow(status: int, body: dict[str, Any]) -> None:
    assert not is_context_overflow(status, body, str(body))
