"""`ChatHTTP`: the SDK's chat request over `LeanHTTP`. Its behaviour through `OpenAILLM` (retries, deadlines,
errors, usage) is `test_openai_client.py`'s, run against the loopback server; here, what is its own."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import urllib.parse

import openai
import pytest

from brain.llm.chat_http import ChatHTTP
from brain.llm.endpoint import create_openai_client
from brain.llm.events import StreamEvents
from brain.llm.openai_client import OpenAILLM
from brain.llm.protocol import ChatMessage, TextDelta
from brain.settings import LLMSettings
from tests.support.openai_server import Chat, Embeddings, Fault, Malformed, Payload, ScriptedOpenAIServer


async def _events(*lines: str) -> list[object]:
    events = StreamEvents()
    return [event for line in lines for event in events.line(line)]


async def test_events_are_read_as_the_sdk_reads_them() -> None:
    assert await _events(
        ": a comment",
        'data: {"a":',
        "data: 1}",
        "",
        "",
        "event: chunk",
        'data: {"b": 2}',
        "",
        "data: [DONE]",
        "",
        'data: {"after": "done"}',
        "",
    ) == [{"a": 1}, {"b": 2}]
    assert await _events('data: {"cut": true}') == []  # an event is dispatched by its blank line only


async def test_an_error_inside_a_stream_is_the_sdks_api_error() -> None:
    with pytest.raises(openai.APIError, match="overloaded") as caught:
        await _events('data: {"a": 1}', "", 'data: {"error": {"message": "overloaded", "code": 1}}', "")
    assert caught.value.body == {"message": "overloaded", "code": 1}
    with pytest.raises(openai.APIError, match="An error occurred during streaming"):
        await _events('data: {"error": "x"}', "")
    with pytest.raises(json.JSONDecodeError):
        await _events("data: not json", "")


async def test_the_request_carries_the_endpoints_authorization_and_our_agent(
    openai_server: ScriptedOpenAIServer,
) -> None:
    settings = LLMSettings(base_url=openai_server.url, api_key="sk-test-1", model="m", max_retries=0)
    openai_server.script(Chat(content="hi"))
    async with OpenAILLM.from_settings(settings) as llm:
        assert llm._chat is not None  # the lean path is the one taken
        await llm.complete([ChatMessage(role="user", content="hello")])
    (request,) = openai_server.chat_requests()
    headers = {k.lower(): v for k, v in request.headers.items()}
    assert headers["authorization"] == "Bearer sk-test-1"
    assert headers["user-agent"] == "brain-assistant"
    assert headers["content-type"] == "application/json"
    assert headers["accept"] == "application/json"


@pytest.mark.parametrize(
    ("base_url", "key", "environment"),
    [
        ("http://127.0.0.1:8000/v1", "sk-1", {}),
        ("http://127.0.0.1:8000/v1/", None, {}),  # no key: the SDK is given "not-needed"
        (None, "sk-2", {}),  # OpenAI's own endpoint
        (None, "sk-3", {"OPENAI_BASE_URL": "http://127.0.0.1:9000/v2"}),  # read by the SDK where none is set
        ("https://llm.example/v1", "sk-4", {"OPENAI_ORG_ID": "org-1", "OPENAI_PROJECT_ID": "proj-1"}),
        ("https://llm.example/v1", "sk-5", {"OPENAI_ORG_ID": "", "OPENAI_PROJECT_ID": "proj-2"}),
    ],
)
def test_made_from_settings_it_sends_what_the_sdks_client_would(
    monkeypatch: pytest.MonkeyPatch, base_url: str | None, key: str | None, environment: dict[str, str]
) -> None:
    for name in ("OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    settings = LLMSettings(base_url=base_url, api_key=key, model="m", max_retries=2, timeout=7.0)
    lean = ChatHTTP.for_settings(settings)
    client = create_openai_client(settings)
    sdk = ChatHTTP.for_client(client)
    assert lean is not None and sdk is not None
    assert lean.url == sdk.url
    assert (lean._retries, lean._seconds) == (sdk._retries, sdk._seconds) == (2, 7.0)
    said = {k.lower(): v for k, v in sdk._headers.items()}
    ours = {k.lower(): v for k, v in lean._headers.items()}
    assert ours.pop("user-agent") == "brain-assistant"
    # what the endpoint reads: everything the SDK sends but its own identification
    assert ours == {k: v for k, v in said.items() if k != "user-agent" and not k.startswith("x-stainless")}


async def test_the_model_list_is_none_without_a_json_answer(openai_server: ScriptedOpenAIServer) -> None:
    """Asked once at start, never an error: a status, a body that is not JSON, no server at all."""
    openai_server.script(Fault(404, message="no such route"), Malformed())
    settings = LLMSettings(base_url=openai_server.url, api_key="sk", model="m", max_retries=3)
    chat = ChatHTTP.for_settings(settings)
    assert chat is not None
    assert await chat.models() is None and await chat.models() is None
    assert [(r.method, r.path) for r in openai_server.requests] == [("GET", "/v1/models")] * 2  # no retries
    dead = ChatHTTP.for_settings(LLMSettings(base_url="http://127.0.0.1:9/v1", api_key="sk"))
    assert dead is not None and await dead.models() is None


def test_azure_international_and_proxied_endpoints_are_left_to_the_sdk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    azure = LLMSettings(api_type="azure", base_url="https://x.openai.azure.com", api_version="2024-06-01")
    assert ChatHTTP.for_settings(azure) is None
    assert ChatHTTP.for_settings(LLMSettings(base_url="http://模型.example/v1", api_key="sk")) is None  # IDNA
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    assert ChatHTTP.for_settings(LLMSettings(base_url="https://llm.example/v1", api_key="sk")) is None


_PREAMBLE = """
import asyncio, sys
from brain.errors import LLMError
from brain.llm.openai_client import OpenAILLM
from brain.llm.protocol import ChatMessage
from brain.settings import LLMSettings
"""


def _printed(program: str) -> list[str]:
    """The lines `program` prints, run after `_PREAMBLE` in a fresh interpreter (no SDK imported)."""
    done = subprocess.run(
        [sys.executable, "-c", _PREAMBLE + program], capture_output=True, text=True, timeout=60, check=True
    )
    return done.stdout.splitlines()


def test_a_chat_imports_no_sdk_until_an_error_is_made(openai_server: ScriptedOpenAIServer) -> None:
    """Importing `openai` is a third of `brain chat`'s start: a chat over `ChatHTTP` (streamed or not)
    and the model list asked at start never do; the SDK's errors it raises import it, and are then the
    `LLMError`s they always were."""
    listed = {"object": "list", "data": [{"id": "m", "max_model_len": 16_384}]}
    openai_server.script(
        Payload(listed), Chat(content="one"), Chat(content="two three"), Fault(status=400, message="bad")
    )
    program = f"""
async def main():
    settings = LLMSettings(base_url={openai_server.url!r}, api_key="sk", model="m", max_retries=0)
    ask = [ChatMessage(role="user", content="hi")]
    async with OpenAILLM.from_settings(settings) as llm:
        print(await llm.listed_context_window(), "openai" in sys.modules)
        print((await llm.complete(ask)).content, "openai" in sys.modules)
        print(sorted({{type(e).__name__ async for e in llm.stream(ask)}}), "openai" in sys.modules)
        try:
            await llm.complete(ask)
        except LLMError as exc:
            print(type(exc).__name__, str(exc), "openai" in sys.modules)

asyncio.run(main())
"""
    assert _printed(program) == [
        "16384 False",
        "one False",
        "['Completion', 'TextDelta'] False",
        "LLMError m: HTTP 400 from the LLM endpoint: Error code: 400 - bad True",
    ]


def test_an_endpoint_out_of_reach_imports_the_sdk_for_its_error() -> None:
    """The first error of a process may be no answer at all: a stream that cannot connect, then a
    request that cannot, are the `LLMError`s they always were, the SDK imported for the first."""
    program = """
async def main():
    settings = LLMSettings(base_url="http://127.0.0.1:9/v1", api_key="sk", model="m", max_retries=0)
    ask = [ChatMessage(role="user", content="hi")]
    async with OpenAILLM.from_settings(settings) as llm:
        for call in (lambda: llm.stream(ask).__anext__(), lambda: llm.complete(ask)):
            before = "openai" in sys.modules
            try:
                await call()
            except LLMError as exc:
                print(before, type(exc).__name__, str(exc).split(":")[1].strip())

asyncio.run(main())
"""
    assert _printed(program) == [
        "False LLMError cannot reach the LLM endpoint (retries spent)",
        "True LLMError cannot reach the LLM endpoint (retries spent)",
    ]


async def test_the_body_is_the_json_of_the_request_a_lone_surrogate_escaped(
    openai_server: ScriptedOpenAIServer,
) -> None:
    settings = LLMSettings(base_url=openai_server.url, api_key="sk", model="m", max_retries=0)
    openai_server.script(Chat(content="a"), Chat(content="b"))
    async with OpenAILLM.from_settings(settings) as llm:
        await llm.complete([ChatMessage(role="user", content='行李 \u00e9 \\ "q"')])
        await llm.complete([ChatMessage(role="user", content="x\ud800y")])  # not UTF-8: sent escaped
    plain, hostile = openai_server.chat_requests()
    assert plain.body["messages"] == [{"role": "user", "content": '行李 \u00e9 \\ "q"'}]
    assert hostile.body["messages"] == [{"role": "user", "content": "x\ud800y"}]


async def test_an_injected_client_is_used_for_chat_too(openai_server: ScriptedOpenAIServer) -> None:
    client = openai.AsyncOpenAI(base_url=openai_server.url, api_key="sk")
    async with OpenAILLM(client, LLMSettings(base_url=openai_server.url)) as llm:
        assert llm._chat is None
    await client.close()


class _Proxy:
    """A forward HTTP proxy on loopback: each request (absolute-form, as a client sends it to a proxy) is
    sent on to its server over a new connection, and the whole answer sent back, the connection closed
    after it; the request lines are kept. Every host it is asked for is this machine (so a test endpoint can
    have a name that is not a loopback one, which no proxy is used for)."""

    def __init__(self) -> None:
        self.lines: list[bytes] = []

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            line, *fields = head.split(b"\r\n")[:-2]
            self.lines.append(line)
            method, target, version = line.split(b" ")
            url = urllib.parse.urlsplit(target.decode())
            length = sum(int(f.split(b":")[1]) for f in fields if f.lower().startswith(b"content-length:"))
            body = await reader.readexactly(length)
            kept = [f for f in fields if not f.lower().startswith((b"connection:", b"proxy-connection:"))]
            upstream_reader, upstream = await asyncio.open_connection("127.0.0.1", url.port)
            path = (url.path + (f"?{url.query}" if url.query else "")).encode()
            upstream.write(b"\r\n".join([b" ".join([method, path, version]), *kept, b"Connection: close"]))
            upstream.write(b"\r\n\r\n" + body)
            answer = await upstream_reader.read()  # to the end: the proxy answers once per connection
            upstream.close()
            top, _, rest = answer.partition(b"\r\n\r\n")
            lines = [f for f in top.split(b"\r\n") if not f.lower().startswith(b"connection:")]
            writer.write(b"\r\n".join([*lines, b"Connection: close"]) + b"\r\n\r\n" + rest)
            await writer.drain()
        finally:
            writer.close()


async def test_through_a_proxy_the_sdk_sends_the_chat(
    openai_server: ScriptedOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    proxy = _Proxy()
    server = await asyncio.start_server(proxy.serve, "127.0.0.1", 0)
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}")
    for name in ("NO_PROXY", "no_proxy", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    named = openai_server.url.replace("127.0.0.1", "endpoint.invalid")  # resolved by the proxy only
    settings = LLMSettings(base_url=named, api_key="sk", model="m", max_retries=0)
    openai_server.script(Chat(content="through the proxy"), Chat(content="streamed through it"))
    try:
        async with OpenAILLM.from_settings(settings) as llm:
            assert llm._chat is None  # the lean transport does not tunnel: the SDK's client does
            answer = await llm.complete([ChatMessage(role="user", content="hello")])
            streamed = [
                event.text
                async for event in llm.stream([ChatMessage(role="user", content="again")])
                if isinstance(event, TextDelta)
            ]
    finally:
        server.close()
        await server.wait_closed()
    assert answer.content == "through the proxy" and "".join(streamed) == "streamed through it"
    assert proxy.lines == [f"POST {named}/chat/completions HTTP/1.1".encode()] * 2
    assert len(openai_server.chat_requests()) == 2
    monkeypatch.setenv("NO_PROXY", "endpoint.invalid")  # the endpoint is left out of the proxy: the lean path
    assert ChatHTTP.for_client(openai.AsyncOpenAI(base_url=named, api_key="sk")) is not None


async def test_plain_http_on_this_machine_is_never_proxied(
    openai_server: ScriptedOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a proxy for the network (here a closed port) cannot reach this machine's loopback: the embedded
    # model, or Ollama, must be reached directly, by chat completions and by the SDK's other calls alike
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    for name in ("NO_PROXY", "no_proxy", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    settings = LLMSettings(
        base_url=openai_server.url, api_key="sk", model="m", max_retries=0, embedding_model="e"
    )
    openai_server.script(Chat(content="direct"), Embeddings(((0.5, 0.5),)))
    async with OpenAILLM.from_settings(settings) as llm:
        assert llm._chat is not None
        assert (await llm.complete([ChatMessage(role="user", content="hi")])).content == "direct"
        assert await llm.embed(["hi"]) == [[0.5, 0.5]]


class _KeepAlive:
    """A minimal HTTP/1.1 endpoint that answers every request with one streamed completion and counts the
    connections it was asked on."""

    def __init__(self) -> None:
        self.connections = 0
        self.requests = 0

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                )
                await reader.readexactly(length)
                self.requests += 1
                chunk = {"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}
                body = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                    + f"content-length: {len(body)}\r\n\r\n".encode()
                    + body
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


async def test_streams_read_to_the_end_reuse_their_connection() -> None:
    endpoint = _KeepAlive()
    server = await asyncio.start_server(endpoint.serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    chat = ChatHTTP.for_client(openai.AsyncOpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="sk"))
    assert chat is not None
    try:
        for _ in range(5):
            (chunk,) = [c async for batch in chat.stream({"model": "m", "stream": True}) for c in batch]
            assert chunk["choices"]
        assert (endpoint.requests, endpoint.connections) == (5, 1)
    finally:
        await chat.aclose()
        server.close()
        await server.wait_closed()


@pytest.mark.parametrize("status", [400, 401, 404, 409, 422, 429, 500, 503])
async def test_an_error_status_is_the_same_exception_the_sdk_raises(
    openai_server: ScriptedOpenAIServer, status: int
) -> None:
    client = openai.AsyncOpenAI(base_url=openai_server.url, api_key="sk", max_retries=0)
    openai_server.script(Fault(status, message="said why"), Fault(status, message="said why"))
    chat = ChatHTTP.for_client(client)
    assert chat is not None
    try:
        with pytest.raises(openai.APIStatusError) as ours:
            await chat.complete({"model": "m", "messages": []})
        with pytest.raises(openai.APIStatusError) as sdks:
            await client.post("/chat/completions", body={"model": "m", "messages": []}, cast_to=object)
    finally:
        await chat.aclose()
        await client.close()
    assert type(ours.value) is type(sdks.value)
    assert (ours.value.message, ours.value.body, ours.value.status_code) == (
        sdks.value.message,
        sdks.value.body,
        sdks.value.status_code,
    )
    assert "said why" in ours.value.message
