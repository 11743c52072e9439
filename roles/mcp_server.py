"""The MCP server: memory tools for editors and desktop assistants (the official `mcp` SDK).

Over stdio (`brain mcp`) the scope is the server's configuration (`serve.mcp_user`, `serve.mcp_agent`);
over streamable HTTP (`/mcp` of `brain serve`) it is the API key's. No tool takes a user or an agent: a
tool's arguments cannot reach another tenant. Every tool goes through `MemoryService`, so what a scope
reaches inside its user (an agent: its own chats, the shared facts and its own) is `roles.access`'s rule.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from brain import __version__
from brain.errors import BrainError
from roles.access import ID_PATTERN
from roles.failures import answer
from roles.mcp_strict import StrictServer
from roles.memory_files import Command, MemoryFiles, perform
from roles.memory_paths import MAX_PATH_CHARS
from roles.service import MemoryService, NewMessage, Scope, as_of_time
from roles.service_memory import MAX_PASSAGE_BYTES, MAX_QUERY_BYTES, MAX_TAGS, TAG_PATTERN

Tags = Annotated[list[Annotated[str, Field(pattern=TAG_PATTERN)]], Field(max_length=MAX_TAGS)]
Id = Annotated[str, Field(pattern=ID_PATTERN)]
Date = Annotated[str, Field(min_length=4, max_length=40, description="an ISO date or time, e.g. 2026-05-01")]
Text = Annotated[str, Field(max_length=MAX_PASSAGE_BYTES)]
Path = Annotated[str, Field(min_length=1, max_length=MAX_PATH_CHARS, description="a path under /memories")]

__all__ = ["build_mcp"]

_INSTRUCTIONS = (
    "Long-term memory of the user. search_memories before answering questions about the user; "
    "add_memory when they tell you something worth keeping (facts are extracted in the background); "
    "delete_memory retires a memory that is wrong (it stays in its history). Archival memory keeps "
    "passages word for word: archival_insert, archival_search, archival_list, archival_delete. Core "
    "memory blocks (persona, human): core_memory_view, core_memory_edit. The memory tool (view, create, "
    "str_replace, insert, delete, rename) shows them as a /memories tree: /memories/blocks/<label> are the "
    "core blocks, other paths are text files kept in archival memory."
)


def _dump(value: Any) -> Any:
    if isinstance(value, list):
        return [_dump(v) for v in value]
    return value.model_dump(mode="json") if hasattr(value, "model_dump") else value


def build_mcp(service: MemoryService, scope: Callable[[], Scope], *, default_chat: str = "mcp") -> MCPServer:
    """The MCP server over `service`; `scope()` names the caller's tenant for each call. A tool called with
    an argument it does not take is refused."""
    server = StrictServer("brain-assistant", instructions=_INSTRUCTIONS, version=__version__)

    async def run(call: Any) -> Any:
        try:
            await service.present(scope())  # every tool: the tenant's memory is in Redis from here on
            return _dump(await call)
        except BrainError as exc:  # what a 4xx would say; a 5xx's reason and request id (details: logs)
            raise ToolError(answer(exc)[1]["detail"]) from exc

    @server.tool()
    async def add_memory(
        text: Annotated[str | None, Field(min_length=1)] = None,
        messages: Annotated[list[NewMessage] | None, Field(min_length=1, max_length=100)] = None,
        chat_id: Id = "memories",
        infer: bool = True,
    ) -> dict[str, Any]:
        """Remember text, or a conversation (messages with role user|assistant and content). With infer
        (the default) facts are extracted in the background; infer=false keeps the text as one memory."""
        result: dict[str, Any] = await run(
            service.add(scope(), text=text, messages=messages or (), chat_id=chat_id, infer=infer)
        )
        return result

    @server.tool()
    async def search_memories(
        query: Annotated[str, Field(min_length=1, max_length=MAX_QUERY_BYTES)],
        limit: Annotated[int, Field(ge=1, le=100)] = 10,
        as_of: Date | None = None,
        category: Annotated[str | None, Field(min_length=1, max_length=64)] = None,
    ) -> list[dict[str, Any]]:
        """Memories matching the query (words and meaning), best first; as_of (an ISO date) gives what
        was true then."""
        when = as_of_time(as_of) if as_of else None
        found: list[dict[str, Any]] = await run(
            service.search(scope(), query, limit=limit, as_of=when, category=category)
        )
        return found

    @server.tool()
    async def list_memories(as_of: Date | None = None, include_retired: bool = False) -> list[dict[str, Any]]:
        """Every current memory, oldest first (or those true as_of a date, or retired ones too)."""
        when = as_of_time(as_of) if as_of else None
        found: list[dict[str, Any]] = await run(
            service.list_memories(scope(), as_of=when, include_retired=include_retired)
        )
        return found

    @server.tool()
    async def memory_history(memory_id: Id) -> list[dict[str, Any]]:
        """How one memory came and changed: its audit events, oldest first."""
        events: list[dict[str, Any]] = await run(service.history(scope(), memory_id))
        return events

    @server.tool()
    async def delete_memory(
        memory_id: Id, reason: Annotated[str, Field(max_length=1_000)] = ""
    ) -> dict[str, Any]:
        """Retire a memory that is wrong or no longer true (kept in its history)."""
        fact: dict[str, Any] = await run(service.delete(scope(), memory_id, reason))
        return fact

    @server.tool()
    async def converse(
        text: Annotated[str, Field(min_length=1)],
        chat_id: Id | None = None,
        oversize: Literal["refuse", "archive"] = "refuse",
        message_id: Id | None = None,
    ) -> str:
        """Say something to the assistant that owns this memory; its answer. A text too long for the model
        is refused, or with `oversize="archive"` stored in archival memory instead (nothing answered).
        `message_id`: an idempotency key; a call retried with it gives the stored answer again."""
        chat = default_chat if chat_id is None else chat_id

        async def answer() -> str:
            if oversize == "archive" and not await service.fits(text):
                stored = await service.archive(scope(), chat, text)
                return (
                    f"stored in archival memory as {stored.passages} passages ({stored.source}), not answered"
                )
            return "".join([p async for p in service.converse(scope(), chat, text, message_id)])

        reply: str = await run(answer())
        return reply

    archival = service.tiered_memory

    @server.tool()
    async def archival_insert(
        text: Annotated[str, Field(min_length=1, max_length=MAX_PASSAGE_BYTES)], tags: Tags | None = None
    ) -> dict[str, Any]:
        """Keep a passage word for word in archival memory (an agent's key: its agent's own); the passage
        stored, with its id."""
        stored: dict[str, Any] = await run(archival.archival_insert(scope(), text, tags or ()))
        return stored

    @server.tool()
    async def archival_search(
        query: Annotated[str, Field(min_length=1, max_length=MAX_QUERY_BYTES)],
        limit: Annotated[int, Field(ge=1, le=50)] = 10,
        tags: Tags | None = None,
    ) -> list[dict[str, Any]]:
        """Archival passages matching the query (words and meaning), best first; tags narrow it (any)."""
        found: list[dict[str, Any]] = await run(
            archival.archival_search(scope(), query, limit=limit, tags=tags or ())
        )
        return found

    @server.tool()
    async def archival_list(
        limit: Annotated[int, Field(ge=1, le=100)] = 100,
        offset: Annotated[int, Field(ge=0, le=10_000)] = 0,
        tags: Tags | None = None,
    ) -> list[dict[str, Any]]:
        """Archival passages, newest first: limit of them after the first offset."""
        found: list[dict[str, Any]] = await run(
            archival.archival_list(scope(), limit=limit, offset=offset, tags=tags or ())
        )
        return found

    @server.tool()
    async def core_memory_view() -> list[dict[str, Any]]:
        """Every core memory block this key sees (persona, human, ...): its own copy, else the default."""
        blocks: list[dict[str, Any]] = await run(archival.core_blocks(scope()))
        return blocks

    @server.tool()
    async def core_memory_edit(
        label: Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")],
        value: Annotated[str, Field(max_length=MAX_PASSAGE_BYTES)],
    ) -> dict[str, Any]:
        """Set this key's own copy of a core memory block (the default is never changed); the block."""
        block: dict[str, Any] = await run(archival.edit_core_block(scope(), label, value))
        return block

    @server.tool()
    async def archival_delete(passage_id: Id) -> dict[str, Any]:
        """Delete an archival passage for good (an agent's key: only one it stored); the passage deleted."""
        deleted: dict[str, Any] = await run(archival.archival_delete(scope(), passage_id))
        return deleted

    files = MemoryFiles(archival)

    @server.tool()
    async def memory(
        command: Command,
        path: Path | None = None,
        view_range: Annotated[list[int] | None, Field(min_length=2, max_length=2)] = None,
        file_text: Text | None = None,
        old_str: Annotated[str | None, Field(min_length=1, max_length=MAX_PASSAGE_BYTES)] = None,
        new_str: Text | None = None,
        insert_line: Annotated[int | None, Field(ge=0, le=100_000)] = None,
        insert_text: Text | None = None,
        old_path: Path | None = None,
        new_path: Path | None = None,
    ) -> str:
        """Memory as a /memories tree of text files. /memories/blocks/<label> are the core memory blocks
        (view; str_replace and insert edit them within their limits); any other path is a text file (at most
        8,000 bytes) kept in archival memory. Commands: view (path; view_range [first, last] for a file),
        create (path, file_text), str_replace (path, old_str once in it, new_str), insert (path,
        insert_line: after that line, 0 for the top; insert_text), delete (path: a file or a directory),
        rename (old_path, new_path)."""
        arguments = {
            "path": path,
            "view_range": view_range,
            "file_text": file_text,
            "old_str": old_str,
            "new_str": new_str,
            "insert_line": insert_line,
            "insert_text": insert_text,
            "old_path": old_path,
            "new_path": new_path,
        }
        text: str = await run(perform(files, scope(), command, arguments))
        return text

    server.seal()
    return server
