"""Every route of the HTTP API as a builder of its `Call` (`brain.client.call`), named as the clients'
methods are: `AsyncBrainClient` and `BrainClient` send what these build. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from brain.backends.redis.stats import StorageReport
from brain.client.call import Call, Moment, call, json_body, route
from brain.memory.erasure import ErasureReport
from brain.memory.transfer import ConversationExport
from brain.storage.blocks import Block
from brain.wire import (
    AddRequest,
    AddResultView,
    Archived,
    AuditEventView,
    BlockEdit,
    ChatInfo,
    ChatReply,
    ChatRequest,
    ChatView,
    DeadLetterView,
    FactView,
    GraphView,
    Health,
    Me,
    NewMessage,
    Passage,
    PassageRequest,
    Readiness,
    UsageReport,
)

__all__ = [
    "add_memory",
    "archival_delete",
    "archival_insert",
    "archival_list",
    "archival_search",
    "chat",
    "chats",
    "core_blocks",
    "dead_letters",
    "delete_memory",
    "edit_core_block",
    "erase_chat",
    "erase_memory",
    "export_chat",
    "get_chat",
    "graph",
    "health",
    "history",
    "import_chat",
    "me",
    "memories",
    "memory",
    "memory_history",
    "ready",
    "rollback",
    "search",
    "stats",
    "usage",
]


# ---------------------------------------------------------------- health


@route("GET", "/healthz")
def health() -> Call[Health]:
    return call("health", Health)


@route("GET", "/readyz")
def ready() -> Call[Readiness]:
    return call("ready", Readiness, also_ok=(503,))


@route("GET", "/v1/me")
def me() -> Call[Me]:
    return call("me", Me)


# ---------------------------------------------------------------- chat


@route("POST", "/v1/chat")
def chat(
    text: str,
    *,
    chat_id: str = "default",
    message_id: str | None = None,
    oversize: Literal["refuse", "archive"] = "refuse",
    stream: bool = False,
) -> Call[ChatReply | Archived]:
    fields = {"text": text, "chat_id": chat_id, "stream": stream, "oversize": oversize}
    body = json_body(ChatRequest, **fields, **({"message_id": message_id} if message_id else {}))
    return call("chat", ChatReply | Archived, body=body, stream=stream)


# ---------------------------------------------------------------- memories (facts)


@route("POST", "/v1/memories")
def add_memory(
    text: str | None = None,
    *,
    messages: Sequence[NewMessage | dict[str, Any]] | None = None,
    chat_id: str = "memories",
    infer: bool = True,
) -> Call[AddResultView]:
    fields: dict[str, Any] = {"chat_id": chat_id, "infer": infer}
    if text is not None:
        fields["text"] = text
    if messages is not None:
        fields["messages"] = list(messages)
    return call("add_memory", AddResultView, body=json_body(AddRequest, **fields))


@route("GET", "/v1/memories")
def memories(*, as_of: Moment | None = None, include_retired: bool = False) -> Call[list[FactView]]:
    return call("memories", list[FactView], params={"as_of": as_of, "include_retired": include_retired})


@route("GET", "/v1/memories/search")
def search(
    q: str, *, limit: int = 10, as_of: Moment | None = None, category: str | None = None
) -> Call[list[FactView]]:
    params = {"q": q, "limit": limit, "as_of": as_of, "category": category}
    return call("search", list[FactView], params=params)


@route("GET", "/v1/memories/{memory_id}")
def memory(memory_id: str) -> Call[FactView]:
    return call("memory", FactView, memory_id)


@route("GET", "/v1/memories/{memory_id}/history")
def memory_history(memory_id: str) -> Call[list[AuditEventView]]:
    return call("memory_history", list[AuditEventView], memory_id)


@route("DELETE", "/v1/memories/{memory_id}")
def delete_memory(memory_id: str, *, reason: str = "") -> Call[FactView]:
    return call("delete_memory", FactView, memory_id, params={"reason": reason or None})


@route("GET", "/v1/history")
def history() -> Call[list[AuditEventView]]:
    return call("history", list[AuditEventView])


@route("POST", "/v1/history/{event_id}/rollback")
def rollback(event_id: str) -> Call[AuditEventView]:
    return call("rollback", AuditEventView, event_id)


# ---------------------------------------------------------------- chats


@route("GET", "/v1/chats")
def chats() -> Call[list[ChatInfo]]:
    return call("chats", list[ChatInfo])


@route("GET", "/v1/chats/{chat_id}")
def get_chat(chat_id: str, *, last: int = 100) -> Call[ChatView]:
    return call("get_chat", ChatView, chat_id, params={"last": last})


@route("GET", "/v1/chats/{chat_id}/export")
def export_chat(chat_id: str) -> Call[ConversationExport]:
    return call("export_chat", ConversationExport, chat_id)


@route("PUT", "/v1/chats/{chat_id}")
def import_chat(chat_id: str, export: ConversationExport) -> Call[ChatInfo]:
    return call("import_chat", ChatInfo, chat_id, body=export.model_dump(mode="json"))


@route("DELETE", "/v1/chats/{chat_id}")
def erase_chat(chat_id: str) -> Call[ErasureReport]:
    return call("erase_chat", ErasureReport, chat_id)


@route("DELETE", "/v1/memory")
def erase_memory(*, confirm: bool) -> Call[ErasureReport]:
    return call("erase_memory", ErasureReport, params={"confirm": confirm})


# ---------------------------------------------------------------- core and archival memory


@route("GET", "/v1/core-blocks")
def core_blocks() -> Call[list[Block]]:
    return call("core_blocks", list[Block])


@route("PUT", "/v1/core-blocks/{label}")
def edit_core_block(label: str, value: str) -> Call[Block]:
    return call("edit_core_block", Block, label, body=json_body(BlockEdit, value=value))


@route("POST", "/v1/archival")
def archival_insert(text: str, *, tags: Sequence[str] = ()) -> Call[Passage]:
    return call("archival_insert", Passage, body=json_body(PassageRequest, text=text, tags=list(tags)))


@route("GET", "/v1/archival")
def archival_list(*, limit: int = 100, offset: int = 0, tags: Sequence[str] = ()) -> Call[list[Passage]]:
    return call("archival_list", list[Passage], params={"limit": limit, "offset": offset, "tag": list(tags)})


@route("GET", "/v1/archival/search")
def archival_search(q: str, *, limit: int = 10, tags: Sequence[str] = ()) -> Call[list[Passage]]:
    return call("archival_search", list[Passage], params={"q": q, "limit": limit, "tag": list(tags)})


@route("DELETE", "/v1/archival/{passage_id}")
def archival_delete(passage_id: str) -> Call[Passage]:
    return call("archival_delete", Passage, passage_id)


# ---------------------------------------------------------------- what memory holds and costs


@route("GET", "/v1/usage")
def usage() -> Call[UsageReport]:
    return call("usage", UsageReport)


@route("GET", "/v1/graph")
def graph(*, as_of: Moment | None = None) -> Call[GraphView]:
    return call("graph", GraphView, params={"as_of": as_of})


@route("GET", "/v1/dead-letters")
def dead_letters(*, limit: int = 100) -> Call[list[DeadLetterView]]:
    return call("dead_letters", list[DeadLetterView], params={"limit": limit})


@route("GET", "/v1/stats")
def stats() -> Call[StorageReport]:
    return call("stats", StorageReport)
