"""The MCP server: memory tools for editors and desktop assistants (the official `mcp` SDK).

Over stdio (`brain mcp`) the scope is the server's configuration (`serve.mcp_user`, `serve.mcp_agent`);
over streamable HTTP (`/mcp` of `brain serve`) it is the API key's. No tool takes a user or an agent: a
tool's arguments cannot reach another tenant. Every tool goes through `MemoryService`, so what a scope
reaches inside its user (an agent: its own chats, the shared facts and its own) is `roles.access`'s rule.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field, ValidationError

from brain import __version__
from brain.errors import BrainError
from roles.failures import answer, invalid_fields
from roles.service import MemoryService, NewMessage, Scope, as_of_time
from roles.service_memory import MAX_PASSAGE_BYTES, MAX_QUERY_BYTES, MAX_TAGS, TAG_PATTERN

Tags = Annotated[list[Annotated[str, Field(pattern=TAG_PATTERN)]], Field(max_length=MAX_TAGS)]

__all__ = ["build_mcp"]

_INSTRUCTIONS = (
    "Long-term memory of the user. search_memories before answering questions about the user; "
    "add_memory when they tell you something worth keeping (facts are extracted in the background); "
    "delete_memory retires a memory that is wrong (it stays in its history). Archival memory keeps "
    "passages word for word: archival_insert, archival_search, archival_list, archival_delete. Core "
    "memory blocks (persona, human): core_memory_view, core_memory_edit."
)


def _dump(value: Any) -> Any:
    if isinstance(value, list):
        return [_dump(v) for v in value]
    return value.model_dump(mode="json") if hasattr(value, "model_dump") else value


class _StrictServer(MCPServer):
    """An MCP server whose tools refuse arguments they do not take (the SDK drops them silently, so a
    misspelt `limt` would quietly do something else than asked)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.takes: dict[str, frozenset[str]] = {}

    def takes_from(self, *tools: Callable[..., Any]) -> None:
        """Record the arguments each of `tools` takes (by its signature)."""
        for tool in tools:
            self.takes[tool.__name__] = frozenset(inspect.signature(tool).parameters)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        unknown = sorted(set(arguments) - self.takes.get(name, frozenset(arguments)))
        if unknown:
            listed = ", ".join(sorted(self.takes[name])) or "none"
            raise ToolError(f"{name} takes no argument {', '.join(map(repr, unknown))} (it takes: {listed})")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            # the SDK's text quotes the arguments it refused; say what is wrong where, as a 422 does
            wrong = "; ".join(
                f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in invalid_fields(exc.__cause__.errors())
            )
            raise ToolError(f"{name}: invalid arguments: {wrong}") from None


def build_mcp(service: MemoryService, scope: Callable[[], Scope], *, default_chat: str = "mcp") -> MCPServer:
    """The MCP server over `service`; `scope()` names the caller's tenant for each call. A tool called with
    an argument it does not take is refused."""
    server = _StrictServer("brain-assistant", instructions=_INSTRUCTIONS, version=__version__)

    async def run(call: Any) -> Any:
        try:
            await service.present(scope())  # every tool: the tenant's memory is in Redis from here on
            return _dump(await call)
        except BrainError as exc:  # what a 4xx would say; a 5xx's reason and request id (details: logs)
            raise ToolError(answer(exc)[1]["detail"]) from exc

    @server.tool()
    async def add_memory(
        text: str | None = None,
        messages: list[NewMessage] | None = None,
        chat_id: str = "memories",
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
        query: str, limit: int = 10, as_of: str | None = None, category: str | None = None
    ) -> list[dict[str, Any]]:
        """Memories matching the query (words and meaning), best first; as_of (an ISO date) gives what
        was true then."""
        when = as_of_time(as_of) if as_of else None
        found: list[dict[str, Any]] = await run(
            service.search(scope(), query, limit=max(1, min(limit, 100)), as_of=when, category=category)
        )
        return found

    @server.tool()
    async def list_memories(as_of: str | None = None, include_retired: bool = False) -> list[dict[str, Any]]:
        """Every current memory, oldest first (or those true as_of a date, or retired ones too)."""
        when = as_of_time(as_of) if as_of else None
        found: list[dict[str, Any]] = await run(
            service.list_memories(scope(), as_of=when, include_retired=include_retired)
        )
        return found

    @server.tool()
    async def memory_history(memory_id: str) -> list[dict[str, Any]]:
        """How one memory came and changed: its audit events, oldest first."""
        events: list[dict[str, Any]] = await run(service.history(scope(), memory_id))
        return events

    @server.tool()
    async def delete_memory(memory_id: str, reason: str = "") -> dict[str, Any]:
        """Retire a memory that is wrong or no longer true (kept in its history)."""
        fact: dict[str, Any] = await run(service.delete(scope(), memory_id, reason))
        return fact

    @server.tool()
    async def converse(
        text: str,
        chat_id: str | None = None,
        oversize: Literal["refuse", "archive"] = "refuse",
        message_id: str | None = None,
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
    async def archival_delete(passage_id: str) -> dict[str, Any]:
        """Delete an archival passage for good (an agent's key: only one it stored); the passage deleted."""
        deleted: dict[str, Any] = await run(archival.archival_delete(scope(), passage_id))
        return deleted

    server.takes_from(
        add_memory,
        search_memories,
        list_memories,
        memory_history,
        delete_memory,
        converse,
        archival_insert,
        archival_search,
        archival_list,
        archival_delete,
        core_memory_view,
        core_memory_edit,
    )
    return server
