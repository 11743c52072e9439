"""The MCP server, driven by the official SDK's client: over stdio (`brain mcp`, a real process) and over
streamable HTTP (`/mcp` of the served app, scoped by API key)."""

from __future__ import annotations

import gc
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import LATEST_PROTOCOL_VERSION
from mcp_types.version import LATEST_HANDSHAKE_VERSION

from tests.roles.service.conftest import Served
from tests.support.openai_server import Chat, ScriptedOpenAIServer

BRAIN = str(Path(sys.executable).parent / "brain")

# The SDK's streamable HTTP client leaves one pooled socket to the server unclosed when its session ends
# (its task group is cancelled mid-request): collected after each of these tests, its warning ignored.
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


@pytest.fixture(autouse=True)
def _collect_sockets() -> Iterator[None]:
    yield
    gc.collect()


TOOLS = {
    "add_memory",
    "search_memories",
    "list_memories",
    "memory_history",
    "delete_memory",
    "converse",
    "archival_insert",
    "archival_search",
    "archival_list",
    "archival_delete",
    "core_memory_view",
    "core_memory_edit",
    "memory",
}


def data(result: Any) -> Any:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        content = result.structured_content
        return content.get("result", content) if set(content) == {"result"} else content
    return json.loads(result.content[0].text)


def http_client(served: Served, secret: str | None) -> Client:
    headers = {"Authorization": f"Bearer {secret}"} if secret else {}
    transport = streamable_http_client(
        f"{served.url}/mcp", http_client=httpx2.AsyncClient(headers=headers, timeout=30)
    )
    return Client(transport)


async def test_tools_never_take_a_tenant(served: Served) -> None:
    async with http_client(served, await served.key("ann")) as client:
        tools = (await client.list_tools()).tools
    assert {t.name for t in tools} == TOOLS
    for tool in tools:
        names = set(tool.input_schema.get("properties", {}))
        assert not names & {"user", "user_id", "agent", "agent_id"}, tool.name


async def test_over_http_each_key_reaches_its_own_memory(served: Served) -> None:
    async with http_client(served, await served.key("ann")) as ann:
        added = data(await ann.call_tool("add_memory", {"text": "Ann lives in Lisbon", "infer": False}))
        memory_id = added["fact"]["id"]
        found = data(await ann.call_tool("search_memories", {"query": "where does Ann live"}))
        assert [f["text"] for f in found] == ["Ann lives in Lisbon"]
    async with http_client(served, await served.key("bob")) as bob:
        assert data(await bob.call_tool("list_memories", {})) == []
        assert data(await bob.call_tool("search_memories", {"query": "Lisbon"})) == []
        foreign = await bob.call_tool("delete_memory", {"memory_id": memory_id})
        assert foreign.is_error and "no memory" in foreign.content[0].text
    async with http_client(served, await served.key("ann")) as ann:
        assert len(data(await ann.call_tool("list_memories", {}))) == 1


async def test_over_http_a_request_without_a_valid_key_is_refused(served: Served) -> None:
    async with httpx2.AsyncClient(timeout=10) as http:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        response = await http.post(f"{served.url}/mcp", json=body, headers={"Accept": "application/json"})
        assert response.status_code == 401
        wrong = await http.post(
            f"{served.url}/mcp", json=body, headers={"Authorization": "Bearer bk_0123456789abcdef_nope"}
        )
        assert wrong.status_code == 401


@pytest.fixture
def stdio_server(redis_server_url: str, openai_server: ScriptedOpenAIServer) -> StdioServerParameters:
    env = {
        **os.environ,
        "OPENAI_BASE_URL": openai_server.url,
        "OPENAI_API_KEY": "sk-test",
        "BRAIN_REDIS_URL": redis_server_url,
    }
    settings = ["--set", "redis.key_prefix=mcpstdio", "--set", "memory.facts.in_process_worker=false"]
    return StdioServerParameters(command=BRAIN, args=["mcp", "--user", "ann", *settings], env=env)


async def test_over_stdio_every_tool_works_for_the_configured_user(
    stdio_server: StdioServerParameters, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.script(Chat("You live in Porto now."))
    async with Client(stdio_server) as client:
        assert client.protocol_version == LATEST_PROTOCOL_VERSION
        assert {t.name for t in (await client.list_tools()).tools} == TOOLS
        first = data(await client.call_tool("add_memory", {"text": "我住在里斯本", "infer": False}))["fact"]
        second = data(await client.call_tool("add_memory", {"text": "I live in Porto now", "infer": False}))[
            "fact"
        ]
        retired = data(await client.call_tool("delete_memory", {"memory_id": first["id"], "reason": "moved"}))
        assert retired["expired_at"] is not None
        assert [f["text"] for f in data(await client.call_tool("list_memories", {}))] == [
            "I live in Porto now"
        ]
        everything = data(await client.call_tool("list_memories", {"include_retired": True}))
        assert len(everything) == 2
        found = data(await client.call_tool("search_memories", {"query": "里斯本", "as_of": "2000-01-01"}))
        assert found == []
        history = data(await client.call_tool("memory_history", {"memory_id": first["id"]}))
        assert [e["event"] for e in history] == ["ADD", "DELETE"] and history[1]["actor"] == "mcp"
        queued = data(
            await client.call_tool(
                "add_memory",
                {"messages": [{"role": "user", "content": "I adopted a dog"}], "chat_id": "notes"},
            )
        )
        assert queued == {"chat_id": "notes", "turns": 1, "queued": True, "fact": None}
        answer = data(await client.call_tool("converse", {"text": "Where do I live?"}))
        assert answer == "You live in Porto now."
        assert second["text"] in json.dumps(openai_server.chat_requests()[0].body)
        bad = await client.call_tool("search_memories", {"query": "the"})
        assert bad.is_error and "nothing to search for" in bad.content[0].text


async def test_over_stdio_an_older_client_is_served_with_the_handshake(
    stdio_server: StdioServerParameters,
) -> None:
    async with Client(stdio_server, mode="legacy") as client:
        assert client.protocol_version == LATEST_HANDSHAKE_VERSION
        created = await client.call_tool(
            "memory", {"command": "create", "path": "/memories/notes.md", "file_text": "tea, no sugar"}
        )
        viewed = await client.call_tool("memory", {"command": "view", "path": "/memories/notes.md"})
        escaped = await client.call_tool("memory", {"command": "view", "path": "/memories/../x"})
    assert not created.is_error
    assert viewed.content[0].text == "/memories/notes.md, with line numbers:\n     1\ttea, no sugar"
    assert escaped.is_error and "'..'" in escaped.content[0].text


async def test_every_tool_schema_is_closed_and_bounded(served: Served) -> None:
    async with http_client(served, await served.key("ann")) as ann:
        tools = {t.name: t.input_schema for t in (await ann.list_tools()).tools}
        assert all(schema["additionalProperties"] is False for schema in tools.values())
        assert tools["search_memories"]["required"] == ["query"]
        limit = tools["search_memories"]["properties"]["limit"]
        assert (limit["type"], limit["minimum"], limit["maximum"]) == ("integer", 1, 100)
        assert tools["archival_delete"]["properties"]["passage_id"]["pattern"]
        over = await ann.call_tool("search_memories", {"query": "Lisbon", "limit": 101})
        slash = await ann.call_tool("memory_history", {"memory_id": "a/b"})
    assert over.is_error and "limit: Input should be less than or equal to 100" in over.content[0].text
    assert slash.is_error and "memory_id" in slash.content[0].text


async def test_a_tool_refuses_arguments_it_does_not_take(served: Served) -> None:
    async with http_client(served, await served.key("ann")) as ann:
        misspelt = await ann.call_tool("search_memories", {"query": "Lisbon", "limt": 3})
        assert (
            misspelt.is_error and "'limt'" in misspelt.content[0].text and "limit" in misspelt.content[0].text
        )
        tenant = await ann.call_tool("list_memories", {"user_id": "bob"})
        assert tenant.is_error and "'user_id'" in tenant.content[0].text
        assert data(await ann.call_tool("search_memories", {"query": "Lisbon", "limit": 3})) == []


async def test_converse_refuses_a_text_too_long_for_the_model_or_archives_it_when_asked(
    served: Served,
) -> None:
    text = "记住这个 zqarchmark. " * 30_000  # past the model's 128k window
    async with http_client(served, await served.key("ann")) as ann:
        refused = await ann.call_tool("converse", {"text": text})
        archived = await ann.call_tool("converse", {"text": text, "oversize": "archive"})
    assert refused.is_error and "context window of 128000" in refused.content[0].text
    assert "zqarchmark" not in refused.content[0].text
    assert not archived.is_error and "stored in archival memory as" in archived.content[0].text
    assert served.llm.calls == []


async def test_a_failing_model_is_a_tool_error_with_a_reason_and_a_request_id_not_its_details(
    served: Served,
) -> None:
    from brain.errors import LLMTimeoutError

    served.llm.add(LLMTimeoutError("gpt-x: no first token within 30 s at http://10.0.0.7:8000"))
    async with http_client(served, await served.key("ann")) as ann:
        failed = await ann.call_tool("converse", {"text": "Hello?"})
    text = failed.content[0].text
    assert failed.is_error and "did not answer in time (request " in text
    assert "10.0.0.7" not in text


async def test_a_wrongly_typed_argument_is_named_and_never_echoed(served: Served) -> None:
    async with http_client(served, await served.key("ann")) as ann:
        wrong = await ann.call_tool("search_memories", {"query": "Lisbon", "limit": "zq4321"})
        empty = await ann.call_tool("converse", {"text": "hi", "chat_id": ""})
    assert wrong.is_error and "limit" in wrong.content[0].text and "4321" not in wrong.content[0].text
    assert empty.is_error and "chat_id: String should match pattern" in empty.content[0].text
    assert served.llm.calls == []


async def test_converse_retried_with_its_message_id_answers_once(served: Served) -> None:
    served.llm.add("Hello Ann.")
    async with http_client(served, await served.key("ann")) as ann:
        first = await ann.call_tool("converse", {"text": "Hi", "message_id": "m-1"})
        again = await ann.call_tool("converse", {"text": "Hi", "message_id": "m-1"})
    assert first.content[0].text == again.content[0].text == "Hello Ann."
    assert len(served.llm.calls) == 1
