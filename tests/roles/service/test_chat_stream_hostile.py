"""The lean `POST /v1/chat` (`roles.http.chat_stream`) probed by a hostile client over a real socket: every
answer is the FastAPI route's (the same app without the lean route, on the same Redis), and a refused
request is neither charged nor stored."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

import pytest

from brain.llm.openai_client import OpenAILLM
from brain.llm.scripted import ScriptedLLM
from tests.roles.service.conftest import settings_for
from tests.support.lean_pair import (
    Pair,
    both,
    connect,
    exchange,
    parsed,
    request,
    serve_pair,
    state,
)
from tests.support.openai_server import Chat, ScriptedOpenAIServer


@pytest.fixture
def llm() -> ScriptedLLM:
    return ScriptedLLM()


@pytest.fixture
async def pair(
    redis_server_url: str, llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Pair]:
    async with serve_pair(redis_server_url, llm, monkeypatch, rate_limit=100) as served:
        yield served
    llm.assert_consumed()


_JSON = [("Content-Type", "application/json")]
_REFUSED = {
    "array": ([], _JSON),
    "scalar": ("1", _JSON),
    "string": ('"hello"', _JSON),
    "null": ("null", _JSON),
    "unknown field": ({"chat_id": "c1", "text": "hi", "user": "mallory"}, _JSON),
    "empty text": ({"chat_id": "c1", "text": ""}, _JSON),
    "invalid utf-8": (b'{"chat_id": "c1", "text": "\xff\xfe"}', _JSON),
    "bad json": (b'{"chat_id": "c1", "text": ', _JSON),
    "deep json": ("[" * 2_000 + "]" * 2_000, _JSON),
    "empty body": (b"", _JSON),
    "slash in chat_id": ({"chat_id": "../../x/y", "text": "hi"}, _JSON),
    "control in chat_id": ({"chat_id": "a\u0000b", "text": "hi"}, _JSON),
    "long chat_id": ({"chat_id": "c" * 257, "text": "hi"}, _JSON),
    "control in message_id": ({"chat_id": "c1", "text": "hi", "message_id": "m\n1"}, _JSON),
    "stream as text": ({"chat_id": "c1", "text": "hi", "stream": "always"}, _JSON),
    "bad oversize": ({"chat_id": "c1", "text": "hi", "oversize": "drop"}, _JSON),
    "text/plain": ({"chat_id": "c1", "text": "hi"}, [("Content-Type", "text/plain")]),
    "form": ("chat_id=c1&text=hi", [("Content-Type", "application/x-www-form-urlencoded")]),
    "plain then json": (
        {"chat_id": "c1", "text": "hi"},
        [("Content-Type", "text/plain"), ("Content-Type", "application/json")],
    ),
    "no content type": ({"chat_id": "c1", "text": "hi"}, []),  # FastAPI 0.165 reads no JSON then
    "json without its slash": ({"chat_id": "c1", "text": "hi"}, [("Content-Type", "applicationjson")]),
}


@pytest.mark.parametrize("case", list(_REFUSED))
async def test_a_refused_body_is_answered_as_the_fastapi_route_and_costs_nothing(
    pair: Pair, case: str
) -> None:
    body, headers = _REFUSED[case]
    before = await state(pair.redis)
    lean, plain = await both(pair, lambda secret: request(body, secret, headers))
    assert lean == plain
    assert lean.status in (400, 422) and pair.served == []
    assert b"Traceback" not in lean.body and b"mallory" not in lean.body  # never the input echoed
    assert await state(pair.redis) == before  # no turn, no chat


def _chat(text: str = "Hi, I am Ann", **more: Any) -> dict[str, Any]:
    return {"chat_id": "c1", "text": text, **more}


async def _turns(url: str, secret: str, chat_id: str = "c1") -> list[str]:
    raw = request(b"", secret, [], method="GET", target=f"/v1/chats/{quote(chat_id, safe='')}")
    answer = parsed(await exchange(url, raw))
    assert answer.status == 200, answer
    return [turn["content"] for turn in answer.json()["turns"]]


_SERVED = {
    "json": [("Content-Type", "application/json")],
    "charset": [("Content-Type", "application/json; charset=utf-8")],
    "casing": [("content-TYPE", "APPLICATION/Json;Charset=UTF-8")],
    "json then plain": [("Content-Type", "application/json"), ("Content-Type", "text/plain")],
    "chunked": [("Content-Type", "application/json"), ("Transfer-Encoding", "chunked")],
    "expect 100": [("Content-Type", "application/json"), ("Expect", "100-continue")],
}


def _chunked(body: bytes) -> bytes:
    return (
        b"".join(b"%x\r\n%s\r\n" % (len(body[i : i + 7]), body[i : i + 7]) for i in range(0, len(body), 7))
        + b"0\r\n\r\n"
    )


@pytest.mark.parametrize("case", list(_SERVED))
async def test_a_streamed_chat_the_lean_route_serves_is_the_fastapi_routes(
    pair: Pair, llm: ScriptedLLM, case: str
) -> None:
    headers = _SERVED[case]
    body = json.dumps(_chat()).encode()
    if case == "chunked":
        body = _chunked(body)
    llm.add("Hello Ann.", "Hello Ann.")
    lean, plain = await both(pair, lambda secret: request(body, secret, headers))
    assert lean == plain and pair.served == [1]
    assert lean.status == 200 and lean.body.endswith(
        b'event: done\ndata: {"chat_id": "c1", "text": "Hello Ann."}\n\n'
    )


_FALLEN_BACK = {  # what the lean route hands to the FastAPI route, which streams it all the same
    "space before the parameter": (_chat(), [("Content-Type", "application/json ; charset=utf-8")]),
    "vendor json": (_chat(), [("Content-Type", "application/vnd.brain+json")]),
    "archive when over": (_chat(oversize="archive"), _JSON),
}


@pytest.mark.parametrize("case", list(_FALLEN_BACK))
async def test_what_the_lean_route_hands_on_streams_as_before(
    pair: Pair, llm: ScriptedLLM, case: str
) -> None:
    body, headers = _FALLEN_BACK[case]
    llm.add("Hello Ann.", "Hello Ann.")
    lean, plain = await both(pair, lambda secret: request(body, secret, headers))
    assert lean == plain and pair.served == []
    assert lean.status == 200 and lean.body.endswith(b'"text": "Hello Ann."}\n\n')


async def test_an_oversize_message_to_archive_is_archived_not_streamed(
    redis_server_url: str, llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    text = " ".join(f"w{i}" for i in range(500))  # past a 512-token window, within the body limit
    async with serve_pair(redis_server_url, llm, monkeypatch, model={"context_window": 512}) as pair:
        lean, plain = await both(pair, lambda secret: request(_chat(text, oversize="archive"), secret))
        refused, refused_too = await both(pair, lambda secret: request(_chat(text), secret))
    assert lean == plain and pair.served == []
    assert lean.status == 202 and lean.json()["passages"] >= 1, lean
    assert refused == refused_too and refused.status == 413, refused
    assert b"w17" not in refused.body  # never the input echoed


@pytest.mark.parametrize(
    "text", ["\ud800", "a\udfffb", "\ud83e\udde0 ok"], ids=["lone high", "lone low", "escaped pair"]
)
async def test_surrogates_in_the_json_are_answered_as_the_fastapi_route(
    pair: Pair, llm: ScriptedLLM, text: str
) -> None:
    body = json.dumps(_chat(text)).encode()  # ensure_ascii: the JSON holds \\ud800, valid ASCII
    assert b"\\u" in body
    if text == "\ud83e\udde0 ok":
        llm.add("Nice.", "Nice.")
    before = await state(pair.redis)
    lean, plain = await both(pair, lambda secret: request(body, secret))
    assert lean == plain
    assert b"Traceback" not in lean.body
    if text == "\ud83e\udde0 ok":
        assert lean.status == 200 and pair.served == [1]
    else:
        assert lean.status == 422 and pair.served == []
        assert lean.json()["detail"][0]["loc"] == ["body", "text"]
        assert lean.json()["detail"][0]["type"] == "string_unicode"
        assert await state(pair.redis) == before


_FRAMING = {
    "declared over the limit": b"Content-Type: application/json\r\nContent-Length: 5000\r\n\r\n",
    "chunked past the limit": b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    + b"".join(b"3e8\r\n" + b" " * 1000 + b"\r\n" for _ in range(5))
    + b"0\r\n\r\n",
    "two lengths": b"Content-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 40\r\n\r\n{}",
    "length and chunked": b"Content-Type: application/json\r\nContent-Length: 40\r\n"
    b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
    "negative length": b"Content-Type: application/json\r\nContent-Length: -1\r\n\r\n",
}


@pytest.mark.parametrize("case", list(_FRAMING))
async def test_a_body_over_the_limit_or_badly_framed_is_refused_as_before_and_costs_nothing(
    pair: Pair, case: str
) -> None:
    before = await state(pair.redis)

    def raw(secret: str) -> bytes:
        head = f"POST /v1/chat HTTP/1.1\r\nHost: brain\r\nConnection: close\r\nAuthorization: Bearer {secret}"
        return head.encode() + b"\r\n" + _FRAMING[case]

    lean, plain = await both(pair, raw)
    assert lean == plain and pair.served == []
    expected = 413 if "limit" in case else 400
    assert lean.status == expected, lean
    if expected == 413:
        assert lean.json() == {"detail": "the request body is over serve.max_body_bytes = 4,096 bytes"}
    assert await state(pair.redis) == before


_QUERIES = ["user=bob", "%75ser=bob", "agent_id", "x=1&tenant=", "user_id=a&user_id=b", "q=%ff%fe&agent=x"]


@pytest.mark.parametrize("query", _QUERIES)
async def test_a_query_naming_a_tenant_is_refused_and_costs_nothing(pair: Pair, query: str) -> None:
    before = await state(pair.redis)
    lean, plain = await both(pair, lambda secret: request(_chat(), secret, target=f"/v1/chat?{query}"))
    assert lean == plain and pair.served == []
    assert lean.status == 400 and "the tenant comes from the API key alone" in lean.json()["detail"]
    assert await state(pair.redis) == before


@pytest.mark.parametrize("method", ["GET", "HEAD", "OPTIONS", "PUT", "DELETE"])
async def test_other_methods_on_the_chat_are_the_fastapi_routes_405(pair: Pair, method: str) -> None:
    lean, plain = await both(pair, lambda secret: request(_chat(), secret, method=method))
    assert lean == plain and pair.served == []
    assert lean.status == 405 and ("allow", "POST") in lean.headers


async def test_a_trailing_slash_is_redirected_as_before(pair: Pair) -> None:
    lean, plain = await both(pair, lambda secret: request(_chat(), secret, target="/v1/chat/"))
    assert lean == plain and pair.served == []
    assert lean.status == 307, lean


@pytest.mark.parametrize(
    ("target", "status"),
    [("/v1/chat", 200), ("/brain/v1/chat", 404), ("/v1/chatx", 404), ("/brainx/v1/chat", 404)],
)
async def test_behind_a_proxy_prefix_the_lean_route_answers_as_the_fastapi_one(
    redis_server_url: str, llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch, target: str, status: int
) -> None:
    if status == 200:
        llm.add("Hello Ann.", "Hello Ann.")
    async with serve_pair(redis_server_url, llm, monkeypatch, root_path="/brain") as pair:
        lean, plain = await both(pair, lambda secret: request(_chat(), secret, target=target))
    assert lean == plain and lean.status == status
    assert pair.served == ([1] if status == 200 else [])
    llm.assert_consumed()


@pytest.mark.serial
@pytest.mark.parametrize("sent", [0, 20], ids=["no body", "part of it"])
async def test_a_body_sent_too_slowly_is_answered_408_and_costs_nothing(
    redis_server_url: str, llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch, sent: int
) -> None:
    body = json.dumps(_chat()).encode()
    async with serve_pair(redis_server_url, llm, monkeypatch, rate_limit=100, body_timeout=0.5) as pair:
        before = await state(pair.redis)
        answers = []
        for url, user in ((pair.lean, "ann"), (pair.plain, "bob")):
            secret = await pair.key(user)
            reader, writer = await connect(url)
            writer.write(request(body, secret)[: -len(body) + sent])  # the headers, then (part of) a body
            started = time.perf_counter()
            answers.append(await asyncio.wait_for(reader.read(), 5))
            assert 0.4 < time.perf_counter() - started < 2.5
            writer.close()
            assert await pair.charged(secret) == 0
        assert (
            answers[0]
            == answers[1]
            == b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
        )
        await asyncio.sleep(1.2)  # past the linger: the request's task sees the client gone
        assert await state(pair.redis) == before and pair.served == []
        llm.add("Hello Ann.")
        assert parsed(await exchange(pair.lean, request(body, secret))).status == 200
        assert await _turns(pair.lean, secret) == ["Hi, I am Ann", "Hello Ann."]


async def test_a_client_leaving_mid_body_costs_nothing_and_the_chat_stays_usable(
    pair: Pair, llm: ScriptedLLM, caplog: pytest.LogCaptureFixture
) -> None:
    body = json.dumps(_chat()).encode()
    for url, user in ((pair.lean, "ann"), (pair.plain, "bob")):
        secret = await pair.key(user)
        _, writer = await connect(url)
        writer.write(request(body, secret)[:-10])
        await writer.drain()
        await asyncio.sleep(0.1)
        writer.close()
        await asyncio.sleep(0.2)
        assert await pair.charged(secret) == 0
        unknown = parsed(await exchange(url, request(b"", secret, [], method="GET", target="/v1/chats/c1")))
        assert unknown.status == 404  # no chat was made
        llm.add("Hello.")
        assert parsed(await exchange(url, request(body, secret))).status == 200
        assert await _turns(url, secret) == ["Hi, I am Ann", "Hello."]
    assert pair.served == [1]  # the second lean request; the first one never reached the route's work
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")], caplog.records


@contextlib.asynccontextmanager
async def _slow_pair(
    model: ScriptedOpenAIServer, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Pair]:
    """A pair answering with a loopback model (whose chunks may come slowly) through the real client."""
    llm = {"base_url": model.url, "api_key": "sk-test", "max_retries": 0}
    async with (
        OpenAILLM.from_settings(settings_for(llm).llm) as client,
        serve_pair(redis_url, client, monkeypatch, model=llm, rate_limit=100) as pair,
    ):
        yield pair


async def _first_delta(url: str, raw: bytes) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, bytes]:
    """Connect, send `raw`, read until the first `delta` event is whole."""
    reader, writer = await connect(url)
    writer.write(raw)
    await writer.drain()
    head = await asyncio.wait_for(reader.readuntil(b"event: delta\ndata: "), 5)
    return reader, writer, head + await asyncio.wait_for(reader.readuntil(b"\n\n"), 5)


async def test_a_client_leaving_mid_stream_stores_no_half_turn_and_the_chat_stays_usable(
    openai_server: ScriptedOpenAIServer, redis_server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with _slow_pair(openai_server, redis_server_url, monkeypatch) as pair:
        kept: dict[str, list[list[str]]] = {}
        for url, user in ((pair.lean, "ann"), (pair.plain, "bob")):
            secret = await pair.key(user)
            openai_server.script(Chat("one two three four five six", chunk_delay=0.25), Chat("Hello again."))
            _, writer, head = await _first_delta(url, request(_chat(), secret))
            assert head.startswith(b"HTTP/1.1 200 OK\r\n") and b'{"text": "one "}' in head
            writer.close()  # gone, mid-answer
            await asyncio.sleep(1.8)  # longer than the rest of the answer would take
            after_leaving = await _turns(url, secret)
            answer = parsed(await exchange(url, request(_chat("Still there?"), secret)))
            assert answer.status == 200 and answer.body.endswith(b'"text": "Hello again."}\n\n')
            kept[user] = [after_leaving, await _turns(url, secret)]
            assert await pair.charged(secret) == 4  # two turns, two reads of the chat
        assert pair.served == [1, 1]
    assert kept["ann"] == kept["bob"]
    assert kept["ann"][0] == []  # nothing of the half answer
    assert kept["ann"][1][-2:] == ["Still there?", "Hello again."]
    assert "one two three four five six" not in kept["ann"][1]


async def test_a_key_revoked_mid_stream_ends_its_stream_whole_and_refuses_the_next(
    openai_server: ScriptedOpenAIServer, redis_server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with _slow_pair(openai_server, redis_server_url, monkeypatch) as pair:
        answers = []
        for url, user in ((pair.lean, "ann"), (pair.plain, "bob")):
            secret = await pair.key(user)
            openai_server.script(Chat("one two three", chunk_delay=0.2))
            reader, writer, head = await _first_delta(url, request(_chat(), secret))
            await pair.keys.revoke(pair.ids[secret])  # checked when a request starts, not mid-answer
            rest = await asyncio.wait_for(reader.read(), 5)
            writer.close()
            answers.append(parsed(head + rest))
            refused = parsed(await exchange(url, request(_chat("Again"), secret)))
            assert (refused.status, refused.json()) == (401, {"detail": "unknown or revoked API key"})
            assert ("www-authenticate", "Bearer") in refused.headers
        assert pair.served == [1]
    assert answers[0] == answers[1] and answers[0].status == 200
    assert answers[0].body.endswith(b'event: done\ndata: {"chat_id": "c1", "text": "one two three"}\n\n')


async def test_two_streams_of_one_chat_at_once_both_answer_and_store_whole_turns(
    openai_server: ScriptedOpenAIServer, redis_server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with _slow_pair(openai_server, redis_server_url, monkeypatch) as pair:
        stored = {}
        for url, user in ((pair.lean, "ann"), (pair.plain, "bob")):
            secret = await pair.key(user)
            openai_server.script(
                Chat("first answer", chunk_delay=0.2), Chat("second answer", chunk_delay=0.2)
            )
            first, second = await asyncio.gather(
                exchange(url, request(_chat("Question one"), secret)),
                exchange(url, request(_chat("Question two"), secret)),
            )
            answers = sorted(parsed(a).body.rsplit(b"event: done\n", 1)[-1] for a in (first, second))
            assert [parsed(a).status for a in (first, second)] == [200, 200]
            assert answers == [
                b'data: {"chat_id": "c1", "text": "first answer"}\n\n',
                b'data: {"chat_id": "c1", "text": "second answer"}\n\n',
            ]
            stored[user] = await _turns(url, secret)
        assert pair.served == [1, 1]
    for turns in stored.values():  # one turn after the other, never interleaved
        assert len(turns) == 4
        asked = sorted(zip(turns[::2], turns[1::2], strict=True))
        assert asked in (
            [("Question one", "first answer"), ("Question two", "second answer")],
            [("Question one", "second answer"), ("Question two", "first answer")],
        )


async def test_a_reply_that_does_not_stream_is_the_fastapi_routes(pair: Pair, llm: ScriptedLLM) -> None:
    llm.add("Hello Ann.", "Hello Ann.")
    lean, plain = await both(pair, lambda secret: request(_chat(stream=False), secret))
    assert lean == plain and pair.served == []
    assert (lean.status, lean.json()) == (200, {"chat_id": "c1", "text": "Hello Ann."})


@pytest.mark.parametrize(
    "authorization",
    ["Basic abc", "Bearer", "Bearer    ", "bearer bk_nope", "Bearer bk_\xff\xfe", "Bearer bk_" + "0" * 5000],
)
async def test_odd_credentials_are_refused_as_before_and_cost_nothing(pair: Pair, authorization: str) -> None:
    before = await state(pair.redis)
    lean, plain = await both(
        pair, lambda _: request(_chat(), None, [*_JSON, ("Authorization", authorization)])
    )
    assert lean == plain and pair.served == []
    assert lean.status == 401 and ("www-authenticate", "Bearer") in lean.headers
    assert await state(pair.redis) == before


async def test_requests_kept_alive_on_one_connection_are_each_served(pair: Pair, llm: ScriptedLLM) -> None:
    secret = await pair.key("ann")
    body = json.dumps(_chat()).encode()
    first = request(body, secret).replace(b"Connection: close\r\n", b"")
    llm.add("One.", "Two.")
    raw = await exchange(pair.lean, first + request(body, secret))  # pipelined: sent at once
    answers = raw.split(b"HTTP/1.1 ")[1:]
    assert [parsed(b"HTTP/1.1 " + a).status for a in answers] == [200, 200]
    assert [parsed(b"HTTP/1.1 " + a).body.rsplit(b"event: done\n", 1)[1] for a in answers] == [
        b'data: {"chat_id": "c1", "text": "One."}\n\n',
        b'data: {"chat_id": "c1", "text": "Two."}\n\n',
    ]
    assert pair.served == [1, 1]
    assert await _turns(pair.lean, secret) == ["Hi, I am Ann", "One.", "Hi, I am Ann", "Two."]


async def test_a_huge_text_is_refused_before_anything_is_stored(
    redis_server_url: str, llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "word " * 600_000  # 3 MB: within serve.max_body_bytes, past memory.max_message_bytes
    async with serve_pair(
        redis_server_url,
        llm,
        monkeypatch,
        model={"context_window": 512},
        max_body_bytes=4_194_304,
        rate_limit=100,
    ) as pair:
        before = await state(pair.redis)
        lean, plain = await both(pair, lambda secret: request(_chat(text), secret))
        assert await state(pair.redis) == before
    assert lean == plain and pair.served == []  # refused by the turn, before a first byte
    assert (lean.status, lean.json()) == (
        400,
        {"detail": "the message is 3,000,000 bytes; the limit is memory.max_message_bytes = 1,048,576 bytes"},
    )
