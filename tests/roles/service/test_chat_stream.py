"""The lean `POST /v1/chat` (`roles.http.chat_stream`): the FastAPI route's bytes and headers, its refusals,
a cold user brought back by the turn itself, a client leaving mid-stream."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest
from starlette.responses import StreamingResponse

from brain.backends.redis import RedisBackend
from brain.keys import archived_key
from brain.llm.scripted import ScriptedLLM
from brain.settings import Settings
from roles.http import chat_stream
from roles.http.chat_stream import HEADERS, _stream, delta_frame, sse
from tests.roles.service.conftest import Served, served_with

_ODD = ["", "plain", 'quote " and \\ backslash', "line\nbreak\ttab\x00\x1f", "中文 🧠 é", "\u2028\u2029"]


def test_delta_frames_are_the_generic_encoders():
    for text in _ODD:
        assert delta_frame(text) == sse("delta", {"text": text})
        assert sse("delta", {"text": text}).decode().startswith("event: delta\ndata: {")
    assert sse("delta", {"text": 'a"b'}) == b'event: delta\ndata: {"text": "a\\"b"}\n\n'


async def test_the_headers_are_streaming_responses():
    async def nothing() -> AsyncGenerator[bytes, None]:
        yield b""

    generic = StreamingResponse(
        nothing(), media_type="text/event-stream", headers={"Cache-Control": "no-store"}
    )
    assert generic.raw_headers == HEADERS


async def _raw(
    served: Served, secret: str, content_type: str, body: dict[str, Any]
) -> tuple[int, Any, bytes]:
    async with served.client(secret) as http:
        headers = {"Content-Type": content_type}
        async with http.stream("POST", "/v1/chat", content=json.dumps(body), headers=headers) as response:
            raw = await response.aread()
    kept = {k: v for k, v in response.headers.items() if k != "date"}
    return response.status_code, kept, raw


async def test_a_streamed_chat_is_byte_for_byte_the_fastapi_routes(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    lean_streams: list[object] = []

    async def counted(*args: Any) -> None:
        lean_streams.append(args)
        await _stream(*args)

    monkeypatch.setattr(chat_stream, "_stream", counted)
    secret = await served.key("ann")
    served.llm.add("Hello Ann, nice to meet you.")
    served.llm.add("Hello Ann, nice to meet you.")
    body = {"chat_id": "c1", "text": "Hi, I am Ann"}
    lean = await _raw(served, secret, "application/json", body)
    assert len(lean_streams) == 1
    routed = await _raw(served, secret, "application/vnd.brain+json", body)  # JSON to FastAPI, not lean
    assert len(lean_streams) == 1
    assert lean == routed
    status, headers, raw = lean
    assert status == 200 and headers["content-type"] == "text/event-stream; charset=utf-8"
    assert headers["cache-control"] == "no-store" and headers["transfer-encoding"] == "chunked"
    assert raw.endswith(b'event: done\ndata: {"chat_id": "c1", "text": "Hello Ann, nice to meet you."}\n\n')
    assert raw.count(b"event: delta\n") >= 1
    async with served.client(secret) as http:
        turns = (await http.get("/v1/chats/c1")).json()["turns"]
    assert [t["content"] for t in turns] == ["Hi, I am Ann", "Hello Ann, nice to meet you."] * 2


@pytest.mark.serve(rate_limit=2, auth_failure_limit=2)
async def test_refusals_of_a_streamed_chat_are_the_guards(served: Served) -> None:
    body = {"chat_id": "c1", "text": "Hi"}
    async with served.client() as anonymous:
        missing = await anonymous.post("/v1/chat", json=body)
        unknown = await anonymous.post("/v1/chat", json=body, headers={"Authorization": "Bearer bk_nope"})
        blocked = await anonymous.post("/v1/chat", json=body, headers={"Authorization": "Bearer bk_nope"})
    assert (missing.status_code, missing.headers["www-authenticate"]) == (401, "Bearer")
    assert missing.json() == {"detail": "an API key is needed: Authorization: Bearer <key>"}
    assert (unknown.status_code, unknown.json()) == (401, {"detail": "unknown or revoked API key"})
    assert blocked.status_code == 429 and int(blocked.headers["retry-after"]) >= 1
    secret = await served.key("ann")
    served.llm.add("One.")
    served.llm.add("Two.")
    async with served.client(secret) as http:
        named = await http.post("/v1/chat", json=body, params={"user": "bob"})
        answers = [await http.post("/v1/chat", json=body) for _ in range(3)]
        invalid = await http.post("/v1/chat", json={"chat_id": "c1", "text": ""})
    assert named.status_code == 400 and "tenant comes from the API key" in named.json()["detail"]
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert answers[0].text.endswith('"text": "One."}\n\n') and answers[1].text.endswith('"text": "Two."}\n\n')
    assert answers[2].json()["detail"] == "rate limit: 2 requests per 60 s per key"
    assert int(answers[2].headers["retry-after"]) >= 1
    assert invalid.status_code == 429  # counted before its body is checked, as the FastAPI route does


async def test_a_cold_user_is_brought_back_by_the_streamed_turn(
    redis_server_url: str, tmp_path: Path
) -> None:
    settings = Settings.model_validate(
        {
            "redis": {"key_prefix": "svc"},
            "memory": {"facts": {"in_process_worker": False}, "archive_dir": str(tmp_path)},
            "serve": {"rate_limit": 0, "auth_failure_limit": 0},
        }
    )
    llm = ScriptedLLM()
    async with served_with(llm, settings, redis_server_url) as served:
        secret = await served.key("ann")
        llm.add("Hello Ann.")
        llm.add("You are Ann.")
        async with served.client(secret) as http:
            await http.post("/v1/chat", json={"chat_id": "c1", "text": "Hi, I am Ann", "stream": False})
            backend = RedisBackend.for_settings(served.redis, settings)
            assert backend.archive is not None and (await backend.archive.archive("ann")).archived
            assert await served.redis.exists(archived_key("svc", "ann"))
            streamed = await http.post("/v1/chat", json={"chat_id": "c1", "text": "Who am I?"})
        assert streamed.status_code == 200 and streamed.text.endswith('"text": "You are Ann."}\n\n')
        assert "Hi, I am Ann" in llm.calls[1].prompt_text  # the archived turn was back for the answer
        assert not await served.redis.exists(archived_key("svc", "ann"))
    llm.assert_consumed()


def _stream_parts() -> tuple[list[dict[str, Any]], list[str], AsyncGenerator[bytes, None]]:
    sent: list[dict[str, Any]] = []
    events: list[str] = []

    async def frames() -> AsyncGenerator[bytes, None]:
        try:
            yield b"one"
            await asyncio.sleep(3600)  # the model, slow
            yield b"never"
        except asyncio.CancelledError:
            events.append("cancelled")
            raise
        finally:
            events.append("closed")

    return sent, events, frames()


async def test_a_client_leaving_mid_stream_cancels_the_turn() -> None:
    sent, events, frames = _stream_parts()
    left = asyncio.Event()

    async def receive() -> dict[str, Any]:
        await left.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    task = asyncio.create_task(_stream(frames, receive, send))
    await asyncio.sleep(0.05)
    left.set()
    await asyncio.wait_for(task, 5)  # ends normally: the client is gone, nothing to answer
    assert events == ["cancelled", "closed"]
    assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"]
    assert sent[1]["body"] == b"one" and sent[1]["more_body"] is True


async def test_a_stream_stopped_by_the_server_still_raises() -> None:
    sent, events, frames = _stream_parts()

    async def receive() -> dict[str, Any]:
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    task = asyncio.create_task(_stream(frames, receive, send))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert events == ["cancelled", "closed"] and len(sent) == 2


async def test_a_whole_stream_ends_its_response_and_stops_listening() -> None:
    sent: list[dict[str, Any]] = []
    listened = asyncio.Event()

    async def frames() -> AsyncGenerator[bytes, None]:
        yield b"a"
        yield b"b"

    async def receive() -> dict[str, Any]:
        listened.set()
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)
        await asyncio.sleep(0)

    await _stream(frames(), receive, send)
    assert listened.is_set()
    assert [(m["type"], m.get("body"), m.get("more_body")) for m in sent] == [
        ("http.response.start", None, None),
        ("http.response.body", b"a", True),
        ("http.response.body", b"b", True),
        ("http.response.body", b"", False),
    ]
    assert sent[0]["status"] == 200 and sent[0]["headers"] == HEADERS


@pytest.mark.parametrize("last", [sse("done", {"chat_id": "c", "text": "ab"}), sse("error", {"detail": "x"})])
async def test_the_last_event_goes_out_with_the_end_of_the_body(last: bytes) -> None:
    sent: list[dict[str, Any]] = []

    async def frames() -> AsyncGenerator[bytes, None]:
        yield delta_frame("a")
        yield last

    async def receive() -> dict[str, Any]:
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await _stream(frames(), receive, send)
    assert [(m.get("body"), m.get("more_body")) for m in sent[1:]] == [
        (delta_frame("a"), True),
        (last, False),  # one write: the event and the chunked body's end
    ]
