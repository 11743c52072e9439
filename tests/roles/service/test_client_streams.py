"""The clients' streamed chat and their other transports: the blocking `BrainClient` over a real socket
(from a thread), a model failing mid-answer, a stream left early, and the async client on the app
in-process (httpx2's ASGI transport)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import httpx2
import pytest
from pydantic import SecretStr

from brain.backends.redis import RedisBackend
from brain.backends.redis.client import TranslatingRedis
from brain.client import ApiNotFoundError, ApiStreamError, AsyncBrainClient, BrainClient, ChatEvent
from brain.llm.openai_client import OpenAILLM
from brain.llm.scripted import ScriptedLLM
from brain.runtime import local_runtime
from brain.wire import Archived, ChatReply
from roles.http import create_app
from tests.roles.service.conftest import Served, served_with, settings_for
from tests.support.openai_server import Chat, ScriptedOpenAIServer
from tests.support.serving import assistant_of


def _blocking_session(url: str, key: str) -> tuple[list[ChatEvent], ChatReply | Archived, list[str], int]:
    with BrainClient(url, SecretStr(key)) as brain:
        assert brain.health().status == "ok"
        events = list(brain.chat_stream("Hi, I am Ann", chat_id="c1"))
        reply = brain.chat("Tell me about Lisbon.", chat_id="c2")
        brain.add_memory("Ann lives in Lisbon", infer=False)
        texts = [f.text for f in brain.memories()]
        with pytest.raises(ApiNotFoundError) as missing:
            brain.memory("no-such-fact")
    return events, reply, texts, missing.value.status


async def test_the_blocking_client_streams_and_answers_over_a_real_socket(served: Served) -> None:
    served.llm.add("Hello Ann, nice to meet you.")
    served.llm.add("Still here.")
    key = await served.key("ann")
    events, reply, texts, status = await asyncio.to_thread(_blocking_session, served.url, key)
    assert [e.kind for e in events][-1] == "done" and {e.kind for e in events[:-1]} == {"delta"}
    assert "".join(e.text for e in events[:-1]) == events[-1].text == "Hello Ann, nice to meet you."
    assert len(events) > 2  # pieces, as they came
    assert reply == ChatReply(chat_id="c2", text="Still here.")
    assert texts == ["Ann lives in Lisbon"] and status == 404


@contextlib.asynccontextmanager
async def _served_by(model: ScriptedOpenAIServer, redis_url: str, **llm: float) -> AsyncIterator[Served]:
    settings = settings_for({"base_url": model.url, "api_key": "sk-test", "max_retries": 3, **llm})
    async with (
        OpenAILLM.from_settings(settings.llm) as client,
        served_with(client, settings, redis_url) as served,
    ):
        yield served


async def _collect(stream: AsyncIterator[ChatEvent], into: list[ChatEvent]) -> None:
    async for event in stream:
        into.append(event)


async def test_a_model_failing_mid_answer_raises_after_the_pieces_it_gave(
    openai_server: ScriptedOpenAIServer, redis_server_url: str
) -> None:
    openai_server.script(Chat("Hello there Ann", chunk_delay=2.0))
    async with (
        _served_by(openai_server, redis_server_url, chunk_timeout=0.5) as served,
        AsyncBrainClient(served.url, await served.key("ann")) as ann,
    ):
        pieces: list[ChatEvent] = []
        with pytest.raises(ApiStreamError) as raised:
            await _collect(ann.chat_stream("Hi", chat_id="c1"), pieces)
        assert [e.kind for e in pieces] == ["delta"]
        assert "did not answer in time" in str(raised.value) and raised.value.request_id
        assert (await ann.get_chat("c1")).chat.turns == 0  # the half answer was not stored


async def test_a_stream_left_early_closes_and_the_client_goes_on(served: Served) -> None:
    served.llm.add("One two three four five six seven eight nine ten.")
    async with AsyncBrainClient(served.url, await served.key("ann")) as ann:
        async with contextlib.aclosing(ann.chat_stream("Count", chat_id="c1")) as stream:
            async for event in stream:
                assert event.kind == "delta"
                break
        assert (await ann.me()).user == "ann"


async def test_the_async_client_drives_the_app_in_process(redis_server_url: str) -> None:
    settings = settings_for()
    redis = TranslatingRedis.from_url(redis_server_url)
    await redis.flushdb()
    llm = ScriptedLLM(["Hello from inside."])
    runtime = local_runtime(llm, settings=settings, backend=RedisBackend.for_settings(redis, settings))
    app = create_app(settings, assistant_of(runtime))
    async with app.router.lifespan_context(app):
        _, secret = await app.state.keys.create("ann")
        transport = httpx2.ASGITransport(app=app)
        async with AsyncBrainClient("http://brain.test", secret, transport=transport) as ann:
            assert (await ann.me()).user == "ann"
            assert await ann.chat("Hi", chat_id="c1") == ChatReply(chat_id="c1", text="Hello from inside.")
            assert [t.content for t in (await ann.get_chat("c1")).turns] == ["Hi", "Hello from inside."]
    await redis.aclose()
    llm.assert_consumed()
