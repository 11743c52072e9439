"""Archival memory through the MCP tools (the official SDK's client over `/mcp` of the served app): the
same scope rules as over HTTP (`test_core_and_archival.py`), strict arguments, no input echoed."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.roles.service.conftest import Served

# The SDK's HTTP client leaves a pooled socket behind when its session ends (see test_mcp.py).
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")

ARCHIVAL = {"archival_insert", "archival_search", "archival_list", "archival_delete"}
EN = "Ann keeps her passport in the blue drawer"
ZH = "安把护照放在蓝色抽屉里"


@pytest.fixture(autouse=True)
def _collect_sockets() -> Iterator[None]:
    yield
    gc.collect()


def _data(result: Any) -> Any:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        content = result.structured_content
        return content.get("result", content) if set(content) == {"result"} else content
    return json.loads(result.content[0].text)


def _client(served: Served, secret: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {secret}"}, timeout=30)
    return Client(streamable_http_client(f"{served.url}/mcp", http_client=http))


async def test_archival_tools_insert_search_list_delete_per_user(served: Served) -> None:
    async with _client(served, await served.key("ann")) as ann:
        tools = {t.name: t for t in (await ann.list_tools()).tools}
        assert set(tools) >= ARCHIVAL
        for name in ARCHIVAL:
            assert not set(tools[name].input_schema.get("properties", {})) & {"user", "user_id", "agent"}
        en = _data(await ann.call_tool("archival_insert", {"text": EN, "tags": ["travel"]}))
        zh = _data(await ann.call_tool("archival_insert", {"text": ZH}))
        assert en["tags"] == ["travel"] and en["agent"] is None
        found = _data(await ann.call_tool("archival_search", {"query": "where is the passport"}))
        assert [p["text"] for p in found] == [EN]
        found = _data(await ann.call_tool("archival_search", {"query": "护照", "limit": 3}))
        assert [p["text"] for p in found] == [ZH]
        listed = _data(await ann.call_tool("archival_list", {}))
        assert [p["id"] for p in listed] == [zh["id"], en["id"]]
        assert _data(await ann.call_tool("archival_delete", {"passage_id": zh["id"]}))["text"] == ZH
        assert [p["text"] for p in _data(await ann.call_tool("archival_list", {"tags": ["travel"]}))] == [EN]
    async with _client(served, await served.key("bob")) as bob:
        assert _data(await bob.call_tool("archival_list", {})) == []
        assert _data(await bob.call_tool("archival_search", {"query": "passport 护照"})) == []
        foreign = await bob.call_tool("archival_delete", {"passage_id": en["id"]})
        assert foreign.is_error and "no archival passage" in foreign.content[0].text
    async with _client(served, await served.key("ann")) as ann:
        assert [p["text"] for p in _data(await ann.call_tool("archival_list", {}))] == [EN]


async def test_an_agent_key_sees_the_shared_passages_and_its_own(served: Served) -> None:
    async with _client(served, await served.key("ann")) as owner:
        shared = _data(await owner.call_tool("archival_insert", {"text": "shared recipe for plum cake"}))
    async with _client(served, await served.key("ann", "coder")) as coder:
        theirs = _data(await coder.call_tool("archival_insert", {"text": "coder recipe for plum jam"}))
        assert theirs["agent"] == "coder"
    async with _client(served, await served.key("ann", "writer")) as writer:
        mine = _data(await writer.call_tool("archival_insert", {"text": "writer recipe for plum pie"}))
        found = _data(await writer.call_tool("archival_search", {"query": "plum recipe"}))
        assert sorted(p["id"] for p in found) == sorted([shared["id"], mine["id"]])
        assert {p["id"] for p in _data(await writer.call_tool("archival_list", {}))} == {
            shared["id"],
            mine["id"],
        }
        hidden = await writer.call_tool("archival_delete", {"passage_id": theirs["id"]})
        assert hidden.is_error and "no archival passage" in hidden.content[0].text
        kept = await writer.call_tool("archival_delete", {"passage_id": shared["id"]})
        assert kept.is_error and "shared" in kept.content[0].text
        assert (
            _data(await writer.call_tool("archival_delete", {"passage_id": mine["id"]}))["id"] == mine["id"]
        )
    async with _client(served, await served.key("ann")) as owner:
        assert {p["id"] for p in _data(await owner.call_tool("archival_list", {}))} == {
            shared["id"],
            theirs["id"],
        }


async def test_archival_tools_refuse_bad_arguments_without_echoing_them(served: Served) -> None:
    async with _client(served, await served.key("ann")) as ann:
        refused = [
            await ann.call_tool("archival_insert", {"text": "x", "user_id": "bob"}),
            await ann.call_tool("archival_search", {"query": "plum", "limt": 3}),
            await ann.call_tool("archival_insert", {"text": "ZQMARK " * 2_000}),
            await ann.call_tool("archival_insert", {"text": "x", "tags": ["ZQMARK:x"]}),
            await ann.call_tool("archival_list", {"limit": 0}),
            await ann.call_tool("archival_search", {"query": "the of and"}),
            await ann.call_tool("archival_delete", {"passage_id": " ZQMARK"}),
        ]
        assert all(r.is_error for r in refused)
        texts = [r.content[0].text for r in refused]
        assert "'user_id'" in texts[0] and "'limt'" in texts[1]
        assert not any("ZQMARK" in t for t in texts) and "the of" not in texts[5]
        assert _data(await ann.call_tool("archival_list", {})) == []
