"""MCP's protocol over HTTP: the newest revision the SDK speaks, older clients still served, and stateless
serving: two servers on one Redis, each request of one client landing on either (no sticky sessions)."""

from __future__ import annotations

import contextlib
import gc
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import LATEST_PROTOCOL_VERSION
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION, OLDEST_SUPPORTED_VERSION

from brain.backends.redis import RedisBackend
from brain.backends.redis.api_keys import RedisApiKeyStore
from brain.backends.redis.client import TranslatingRedis
from brain.llm.scripted import ScriptedLLM
from brain.runtime import local_runtime
from roles.http import create_app
from tests.roles.service.conftest import settings_for
from tests.support.serving import assistant_of, serving

# The SDK's HTTP client leaves a pooled socket behind when its session ends (see test_mcp.py).
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


@pytest.fixture(autouse=True)
def _collect_sockets() -> Iterator[None]:
    yield
    gc.collect()


class Alternating(httpx2.AsyncBaseTransport):
    """A round-robin load balancer: sends each tool call to the next of `ports` in turn, and each other
    request too (in a turn of their own); logs where each went: (port, method, tool name)."""

    def __init__(self, ports: list[int]) -> None:
        self.ports, self.sent, self.log = ports, {True: 0, False: 0}, list[tuple[int, str, str | None]]()
        self.inner = httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content) if request.content else {}
        method = body.get("method", request.method)
        turn = method == "tools/call"
        port = self.ports[self.sent[turn] % len(self.ports)]
        self.sent[turn] += 1
        self.log.append((port, method, body.get("params", {}).get("name")))
        request.url = request.url.copy_with(port=port)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


@contextlib.asynccontextmanager
async def two_servers(redis_url: str) -> AsyncIterator[tuple[list[str], str]]:
    """Two served apps (each its own runtime, as two `brain serve` processes) on one Redis; their URLs and
    an API key of user ann."""
    settings = settings_for()
    client = TranslatingRedis.from_url(redis_url)
    await client.flushdb()
    secret = (await RedisApiKeyStore(client, prefix="svc").create("ann"))[1]
    apps = [
        create_app(settings, assistant_of(local_runtime(ScriptedLLM(), settings=settings, backend=backend)))
        for backend in (RedisBackend.for_settings(client, settings) for _ in range(2))
    ]
    async with serving(apps[0], settings.serve) as first, serving(apps[1], settings.serve) as second:
        yield [first, second], secret
    await client.aclose()


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_client_whose_requests_land_on_either_server_is_served(
    redis_server_url: str, mode: str
) -> None:
    async with two_servers(redis_server_url) as (urls, secret):
        balancer = Alternating([_port(u) for u in urls])
        http = httpx2.AsyncClient(
            transport=balancer, headers={"Authorization": f"Bearer {secret}"}, timeout=30
        )
        async with Client(streamable_http_client(f"{urls[0]}/mcp", http_client=http), mode=mode) as client:
            expected = LATEST_PROTOCOL_VERSION if mode == "auto" else LATEST_HANDSHAKE_VERSION
            assert client.protocol_version == expected
            added = await client.call_tool("add_memory", {"text": "Ann lives in Lisbon", "infer": False})
            found = await client.call_tool("search_memories", {"query": "where does Ann live"})
            created = await client.call_tool(
                "memory", {"command": "create", "path": "/memories/home.md", "file_text": "Lisbon"}
            )
            viewed = await client.call_tool("memory", {"command": "view", "path": "/memories/home.md"})
        assert not added.is_error and not created.is_error
        assert not found.is_error and "Ann lives in Lisbon" in found.content[0].text
        assert not viewed.is_error and viewed.content[0].text.endswith("     1\tLisbon")
        a, b = (_port(u) for u in urls)
        calls = [(port, name) for port, method, name in balancer.log if method == "tools/call"]
        # each write landed on one server, the read of it on the other
        assert calls == [(a, "add_memory"), (b, "search_memories"), (a, "memory"), (b, "memory")]
        if mode == "legacy":  # the handshake happened on one server only, and no session was handed out
            assert [(p, m) for p, m, _ in balancer.log[:2]] == [
                (a, "initialize"),
                (b, "notifications/initialized"),
            ]


async def _post(
    http: httpx2.AsyncClient, url: str, body: dict[str, Any], version: str | None
) -> httpx2.Response:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if version is not None:
        headers["MCP-Protocol-Version"] = version
    return await http.post(f"{url}/mcp", json=body, headers=headers)


@pytest.mark.parametrize(
    ("offered", "answered"),
    [
        (OLDEST_SUPPORTED_VERSION, OLDEST_SUPPORTED_VERSION),
        ("2025-03-26", "2025-03-26"),
        (LATEST_HANDSHAKE_VERSION, LATEST_HANDSHAKE_VERSION),
        ("2023-01-01", LATEST_HANDSHAKE_VERSION),  # unknown: the server counter-offers its own
    ],
)
async def test_an_older_client_initializes_on_one_server_and_calls_the_other(
    redis_server_url: str, offered: str, answered: str
) -> None:
    assert OLDEST_SUPPORTED_VERSION == "2024-11-05" and answered in HANDSHAKE_PROTOCOL_VERSIONS
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": offered,
            "capabilities": {},
            "clientInfo": {"name": "old-client", "version": "0.1"},
        },
    }
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "memory", "arguments": {"command": "view", "path": "/memories/blocks"}},
    }
    async with two_servers(redis_server_url) as (urls, secret), httpx2.AsyncClient(timeout=30) as http:
        http.headers["Authorization"] = f"Bearer {secret}"
        opened = await _post(http, urls[0], initialize, None)
        assert opened.status_code == 200, opened.text
        assert "mcp-session-id" not in opened.headers  # stateless: nothing to stick to
        assert opened.json()["result"]["protocolVersion"] == answered
        assert opened.json()["result"]["serverInfo"]["name"] == "brain-assistant"
        called = await _post(http, urls[1], call, answered)
    assert called.status_code == 200, called.text
    result = called.json()["result"]
    assert not result["isError"] and "/memories/blocks/human" in result["content"][0]["text"]
