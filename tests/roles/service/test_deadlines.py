"""Deadlines of the served app: clients that dribble bytes are dropped, a hung model ends the request."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx2
import pytest
import redis.asyncio as aioredis

from brain.backends.redis import RedisBackend
from brain.backends.redis.client import TranslatingRedis
from brain.llm.openai_client import OpenAILLM
from brain.runtime import local_runtime
from brain.settings import Settings
from roles.http import create_app
from tests.roles.service.conftest import Served, served_with, settings_for
from tests.support.openai_server import Chat, ScriptedOpenAIServer, Slow
from tests.support.servers import RedisServerProcess
from tests.support.serving import assistant_of, serving


async def _connect(url: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    return await asyncio.open_connection(parts.hostname, parts.port)


async def _dribble(writer: asyncio.StreamWriter, data: bytes, every: float) -> None:
    for i in range(len(data)):
        writer.write(data[i : i + 1])
        await writer.drain()
        await asyncio.sleep(every)


async def _answer(reader: asyncio.StreamReader) -> bytes:
    return await asyncio.wait_for(reader.read(4096), 5)


@pytest.mark.serial
@pytest.mark.serve(header_timeout=0.5, body_timeout=0.5)
async def test_a_client_dribbling_headers_is_answered_408_and_dropped_while_others_are_served(
    served: Served,
) -> None:
    reader, writer = await _connect(served.url)
    silent_reader, silent = await _connect(served.url)  # connects and sends nothing
    started = time.perf_counter()
    dribbling = asyncio.create_task(_dribble(writer, b"GET /healthz HTTP/1.1\r\nHost: x\r\n" * 20, 0.05))
    async with served.client() as http:
        for _ in range(5):  # others are served meanwhile, at once
            assert (await http.get("/healthz")).status_code == 200
    assert (await _answer(reader)).startswith(b"HTTP/1.1 408 ")
    assert await _answer(reader) == b""  # closed
    assert await _answer(silent_reader) != b"" and await _answer(silent_reader) == b""
    assert 0.4 < time.perf_counter() - started < 2.0
    dribbling.cancel()
    with contextlib.suppress(asyncio.CancelledError, ConnectionError):
        await dribbling
    writer.close()
    silent.close()


@pytest.mark.serial
@pytest.mark.serve(header_timeout=2, body_timeout=0.5)
async def test_a_client_dribbling_a_body_is_dropped_at_the_body_deadline(served: Served) -> None:
    reader, writer = await _connect(served.url)
    writer.write(b"POST /v1/memories HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n")
    writer.write(b"Content-Length: 200\r\n\r\n")
    started = time.perf_counter()
    dribbling = asyncio.create_task(_dribble(writer, b"{" * 200, 0.05))
    assert (await _answer(reader)).startswith(b"HTTP/1.1 408 ")
    assert 0.4 < time.perf_counter() - started < 1.5  # the body deadline, not the header one
    dribbling.cancel()
    with contextlib.suppress(asyncio.CancelledError, ConnectionError):
        await dribbling
    writer.close()


@pytest.mark.serial
@pytest.mark.serve(header_timeout=0.6, body_timeout=0.6)
async def test_the_deadlines_run_per_request_on_a_kept_alive_connection(served: Served) -> None:
    reader, writer = await _connect(served.url)
    for _ in range(3):  # 3 requests of 0.4 s each: together past the deadline, each within it
        await _dribble(writer, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 0.4 / 36)
        answer = await asyncio.wait_for(reader.readuntil(b"}"), 5)
        assert answer.startswith(b"HTTP/1.1 200 ") and b'"status":"ok"' in answer
        await asyncio.sleep(0.3)
    writer.close()


@contextlib.asynccontextmanager
async def _served_by(model: ScriptedOpenAIServer, redis_url: str, **llm: float) -> AsyncIterator[Served]:
    """The app over real Redis and the real client path to a loopback model with these deadlines."""
    settings = settings_for({"base_url": model.url, "api_key": "sk-test", "max_retries": 3, **llm})
    async with (
        OpenAILLM.from_settings(settings.llm) as client,
        served_with(client, settings, redis_url) as served,
    ):
        yield served


@pytest.mark.serial
@pytest.mark.parametrize("stream", [False, True])
async def test_a_hung_model_ends_the_request_with_504_and_the_question_stays_pending(
    openai_server: ScriptedOpenAIServer, redis_server_url: str, stream: bool
) -> None:
    openai_server.script(Slow(3.0, Chat("too late")))
    async with (
        _served_by(openai_server, redis_server_url, first_token_timeout=0.5) as served,
        served.client(await served.key("ann")) as http,
    ):
        started = time.perf_counter()
        response = await http.post("/v1/chat", json={"chat_id": "c1", "text": "Hello?", "stream": stream})
        took = time.perf_counter() - started
        chat = (await http.get("/v1/chats/c1")).json()
    assert response.status_code == 504 and "did not answer in time" in response.json()["detail"]
    assert took < 2.0  # the deadline, not the model's 3 s nor four attempts
    assert len(openai_server.requests) == 1  # a deadline is not retried
    assert chat["chat"]["turns"] == 0 and chat["turns"] == []  # nothing half-written


@pytest.mark.serial
async def test_a_model_stalling_mid_answer_ends_the_stream_with_an_error_event(
    openai_server: ScriptedOpenAIServer, redis_server_url: str
) -> None:
    openai_server.script(Chat("Hello there Ann", chunk_delay=2.0))
    async with (
        _served_by(openai_server, redis_server_url, chunk_timeout=0.5) as served,
        served.client(await served.key("ann")) as http,
    ):
        started = time.perf_counter()
        async with http.stream("POST", "/v1/chat", json={"chat_id": "c1", "text": "Hi"}) as response:
            raw = (await response.aread()).decode()
        took = time.perf_counter() - started
        chat = (await http.get("/v1/chats/c1")).json()
    events = [block.split("\n") for block in raw.strip().split("\n\n")]
    kinds = [lines[0].removeprefix("event: ") for lines in events]
    assert kinds == ["delta", "error"]
    assert "did not answer in time" in json.loads(events[-1][1].removeprefix("data: "))["detail"]
    assert took < 1.5
    assert chat["chat"]["turns"] == 0  # the half answer was not stored


async def test_readyz_says_not_ready_while_redis_is_down_and_recovers_when_it_returns(tmp_path: Path) -> None:
    from brain.llm.scripted import ScriptedLLM

    server = RedisServerProcess(tmp_path / "redis", appendonly=False)
    server.start()
    settings = Settings.model_validate(
        {
            "redis": {"url": server.url, "socket_timeout": 1, "connect_timeout": 1, "retries": 1},
            "memory": {"facts": {"in_process_worker": False}},
        }
    )
    client: aioredis.Redis = TranslatingRedis.from_url(server.url, socket_timeout=1, socket_connect_timeout=1)
    runtime = local_runtime(
        ScriptedLLM(), settings=settings, backend=RedisBackend.for_settings(client, settings)
    )
    try:
        async with (
            serving(create_app(settings, assistant_of(runtime)), settings.serve) as url,
            httpx2.AsyncClient(base_url=url, timeout=10) as http,
        ):
            assert (await http.get("/readyz")).json() == {"status": "ready"}
            server.kill()
            down = await http.get("/readyz")
            key = await http.get("/v1/me", headers={"Authorization": "Bearer bk_nothing"})
            server.start()
            for _ in range(100):  # a new connection is made as soon as it answers again
                ready = await http.get("/readyz")
                if ready.status_code == 200:
                    break
                await asyncio.sleep(0.1)
    finally:
        server.stop()
        await client.aclose()
    assert down.status_code == 503 and down.json()["status"] == "unavailable"
    assert str(server.port) not in down.text and "127.0.0.1" not in down.text
    assert key.status_code == 503 and str(server.port) not in key.text and "Traceback" not in key.text
    assert ready.json() == {"status": "ready"}
