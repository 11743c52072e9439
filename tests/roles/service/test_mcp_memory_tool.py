"""The `memory` MCP tool (Anthropic's memory tool shape over `/memories`), driven by the official SDK's client
over `/mcp` of the served app: core blocks under /memories/blocks, files in archival memory, per key."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from roles.memory_files import MAX_FILES
from tests.roles.service.conftest import Served

# The SDK's HTTP client leaves a pooled socket behind when its session ends (see test_mcp.py).
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


@pytest.fixture(autouse=True)
def _collect_sockets() -> Iterator[None]:
    yield
    gc.collect()


def _client(served: Served, secret: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {secret}"}, timeout=30)
    return Client(streamable_http_client(f"{served.url}/mcp", http_client=http))


async def _ok(client: Client, **arguments: Any) -> str:
    result = await client.call_tool("memory", arguments)
    assert not result.is_error, result.content
    text: str = result.content[0].text
    return text


async def _refused(client: Client, **arguments: Any) -> str:
    result = await client.call_tool("memory", arguments)
    assert result.is_error, result.content
    text: str = result.content[0].text
    return text


async def test_files_are_created_viewed_edited_renamed_and_deleted(served: Served) -> None:
    async with _client(served, await served.key("ann")) as ann:
        assert await _ok(
            ann,
            command="create",
            path="/memories/旅行/passport.md",
            file_text="Passport: blue drawer\nVisa: none",
        ) == ("created /memories/旅行/passport.md")
        shown = await _ok(ann, command="view", path="/memories/旅行/passport.md")
        assert shown.splitlines() == [
            "/memories/旅行/passport.md, with line numbers:",
            "     1\tPassport: blue drawer",
            "     2\tVisa: none",
        ]
        await _ok(
            ann, command="str_replace", path="/memories/旅行/passport.md", old_str="blue", new_str="red"
        )
        await _ok(
            ann, command="insert", path="/memories/旅行/passport.md", insert_line=0, insert_text="# Travel"
        )
        assert await _ok(ann, command="view", path="/memories/旅行/passport.md", view_range=[1, 2]) == (
            "/memories/旅行/passport.md, with line numbers:\n     1\t# Travel\n     2\tPassport: red drawer"
        )
        await _ok(ann, command="create", path="/memories/旅行/hotels.md", file_text="")
        listing = await _ok(ann, command="view", path="/memories")
        assert "0 of 2000 characters\t/memories/blocks/human" in listing.splitlines()
        assert (
            "40 bytes\t/memories/旅行/passport.md" in listing
            and "0 bytes\t/memories/旅行/hotels.md" in listing
        )
        # the file is an archival passage: archival search finds it
        found = await ann.call_tool("archival_search", {"query": "passport drawer"})
        assert "red drawer" in found.content[0].text
        assert await _ok(ann, command="rename", old_path="/memories/旅行", new_path="/memories/trips") == (
            "renamed /memories/旅行 to /memories/trips"
        )
        moved = await _ok(ann, command="view", path="/memories/trips")
        assert moved.splitlines()[1:] == [
            "0 bytes\t/memories/trips/hotels.md",
            "40 bytes\t/memories/trips/passport.md",
        ]
        assert "does not exist" in await _refused(ann, command="view", path="/memories/旅行/passport.md")
        await _ok(ann, command="delete", path="/memories/trips/hotels.md")
        await _ok(ann, command="delete", path="/memories/trips")
        assert "does not exist" in await _refused(ann, command="view", path="/memories/trips")
        listed = await ann.call_tool("archival_list", {})
        assert listed.structured_content == {"result": []}


async def test_blocks_are_edited_within_their_rules_and_limits(served: Served) -> None:
    async with _client(served, await served.key("ann")) as ann:
        listing = await _ok(ann, command="view", path="/memories/blocks")
        labels = [line.split("\t")[1] for line in listing.splitlines()[1:]]
        assert "/memories/blocks/human" in labels and "/memories/blocks/persona" in labels
        await _ok(
            ann, command="insert", path="/memories/blocks/human", insert_line=0, insert_text="Name: Ann"
        )
        await _ok(
            ann, command="insert", path="/memories/blocks/human", insert_line=1, insert_text="City: Lisbon"
        )
        await _ok(
            ann, command="str_replace", path="/memories/blocks/human", old_str="Lisbon", new_str="Porto"
        )
        assert await _ok(ann, command="view", path="/memories/blocks/human") == (
            "/memories/blocks/human, with line numbers:\n     1\tName: Ann\n     2\tCity: Porto"
        )
        blocks = (await ann.call_tool("core_memory_view", {})).structured_content
        assert blocks is not None
        human = next(b for b in blocks["result"] if b["label"] == "human")
        assert human["value"] == "Name: Ann\nCity: Porto"
        too_long = await _refused(
            ann,
            command="insert",
            path="/memories/blocks/human",
            insert_line=2,
            insert_text="x" * (human["limit"]),
        )
        assert "limit" in too_long or "holds" in too_long
        twice = await _refused(
            ann, command="str_replace", path="/memories/blocks/human", old_str=": ", new_str="="
        )
        assert "occurs 2 times (lines 1, 2)" in twice
        assert "cannot be deleted" in await _refused(ann, command="delete", path="/memories/blocks/human")
        assert "not a file path" in await _refused(
            ann, command="create", path="/memories/blocks/human", file_text="x"
        )
        assert "does not exist" in await _refused(ann, command="view", path="/memories/blocks/nosuch")
        assert "renamed" in await _refused(
            ann, command="rename", old_path="/memories/blocks/human", new_path="/memories/h"
        )
        unchanged = await _ok(ann, command="view", path="/memories/blocks/human")
        assert unchanged.endswith("     2\tCity: Porto")
    async with _client(served, await served.key("bob")) as bob:  # another user's block is untouched
        assert await _ok(bob, command="view", path="/memories/blocks/human") == (
            "/memories/blocks/human, with line numbers:\n"
        )


async def test_each_key_reaches_only_its_own_files(served: Served) -> None:
    async with _client(served, await served.key("ann")) as ann:
        await _ok(ann, command="create", path="/memories/secret.md", file_text="Ann's secret")
    async with _client(served, await served.key("ann", agent="coder")) as coder:
        assert "does not exist" in await _refused(coder, command="view", path="/memories/secret.md")
        await _ok(coder, command="create", path="/memories/secret.md", file_text="the coder's own")
        assert (await _ok(coder, command="view", path="/memories/secret.md")).endswith("the coder's own")
    async with _client(served, await served.key("bob")) as bob:
        assert "does not exist" in await _refused(bob, command="view", path="/memories/secret.md")
        assert "does not exist" in await _refused(bob, command="delete", path="/memories/secret.md")
        assert (await _ok(bob, command="view", path="/memories")).count("/memories/secret.md") == 0
    async with _client(served, await served.key("ann")) as ann:
        assert (await _ok(ann, command="view", path="/memories/secret.md")).endswith("Ann's secret")


async def test_bad_calls_are_tool_errors_saying_what_to_fix(served: Served) -> None:
    async with _client(served, await served.key("ann")) as ann:
        tool = next(t for t in (await ann.list_tools()).tools if t.name == "memory")
        schema = tool.input_schema
        assert schema["additionalProperties"] is False and schema["required"] == ["command"]
        assert schema["properties"]["command"]["enum"] == [
            "view",
            "create",
            "str_replace",
            "insert",
            "delete",
            "rename",
        ]
        escape = await _refused(ann, command="view", path="/memories/../../etc/passwd")
        assert "'..'" in escape and "passwd" not in escape
        assert "bidirectional" in await _refused(
            ann, command="create", path="/memories/a\u202e.md", file_text="x"
        )
        assert "under it" in await _refused(ann, command="view", path="/etc")
        assert "needs path, file_text; missing: file_text" in await _refused(
            ann, command="create", path="/memories/a"
        )
        assert "not: file_text" in await _refused(ann, command="view", path="/memories", file_text="x")
        assert "command" in await _refused(ann, command="format", path="/memories")
        assert "'paht'" in await _refused(ann, command="view", paht="/memories")
        assert "insert_line" in await _refused(
            ann, command="insert", path="/memories/a", insert_line=-1, insert_text="x"
        )
        await _ok(ann, command="create", path="/memories/a.md", file_text="one")
        assert "exists already" in await _refused(
            ann, command="create", path="/memories/a.md", file_text="two"
        )
        assert "lies under a file" in await _refused(
            ann, command="create", path="/memories/a.md/b", file_text="x"
        )
        assert "8,000 bytes" in await _refused(
            ann, command="str_replace", path="/memories/a.md", old_str="one", new_str="é" * 4_001
        )
        assert "must not be old_path" in await _refused(
            ann, command="rename", old_path="/memories/a.md", new_path="/memories/a.md/b"
        )
    assert MAX_FILES == 1_000
