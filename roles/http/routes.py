"""The `/v1` routes. Each takes its tenant from the API key (`Tenant`), never from the request; what the
key reaches inside its user is `roles.access`'s rule, which every `MemoryService` method asks."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request, Response
from fastapi.responses import StreamingResponse

from brain.errors import InputError
from brain.memory.core import Block
from brain.memory.erasure import ErasureReport
from brain.memory.transfer import ConversationExport
from brain.wire import (
    MAX_QUERY_BYTES,
    MAX_TAGS,
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
    Me,
    Passage,
    PassageRequest,
    UsageReport,
)
from brain.wire.requests import Tag
from roles.http.chat_stream import turn_events
from roles.http.guard import authenticate
from roles.service import MemoryService, Scope, as_of_time

__all__ = ["router"]


async def _tenant(request: Request) -> Scope:
    scope, _ = await authenticate(
        request.app.state.keys,
        request.app.state.serve,
        request.headers.get("authorization"),
        request.query_params,
        request.client.host if request.client is not None else "",
    )
    await _served(request).present(scope)  # every route: the tenant's memory is in Redis from here on
    return scope


def _served(request: Request) -> MemoryService:
    service: MemoryService = request.app.state.service
    return service


async def _service(request: Request) -> MemoryService:
    # async: FastAPI runs a plain `def` dependency in a worker thread, a thread hop on every request
    return _served(request)


Tenant = Annotated[Scope, Depends(_tenant)]
Service = Annotated[MemoryService, Depends(_service)]
AsOf = Annotated[str | None, Query(description="ISO date or time: what was true then")]

router = APIRouter(prefix="/v1")


Tags = Annotated[list[Tag] | None, Query(max_length=MAX_TAGS, description="passages with any of these tags")]


def _when(as_of: str | None) -> float | None:
    return as_of_time(as_of) if as_of else None


@router.get("/me", tags=["keys"])
async def me(scope: Tenant) -> Me:
    """Whose memory this key reaches."""
    return Me(user=scope.user, agent=scope.agent)


@router.post("/chat", tags=["chat"], response_model=None)
async def chat(
    body: ChatRequest, scope: Tenant, service: Service, response: Response
) -> StreamingResponse | ChatReply | Archived:
    """One turn. With `stream` (the default) the answer comes as server-sent events: `delta` events
    (`{"text": ...}`), then `done` (the whole answer), or `error` if the model fails mid-answer. A failure
    before the first piece is an HTTP error; the question then stays pending, as in every failed turn.
    A message too long for the model is refused (413) before anything is stored or sent; with
    `oversize: "archive"` it is stored in the user's archival memory instead (202, nothing answered)."""
    if body.oversize == "archive" and not await service.fits(body.text):
        response.status_code = 202
        return await service.archive(scope, body.chat_id, body.text)
    if not body.stream:
        pieces = service.converse(scope, body.chat_id, body.text, body.message_id)
        return ChatReply(chat_id=body.chat_id, text="".join([p async for p in pieces]))
    events = await turn_events(service, scope, body)
    return StreamingResponse(events, media_type="text/event-stream", headers={"Cache-Control": "no-store"})


@router.post("/memories", tags=["memories"], status_code=202)
async def add_memory(body: AddRequest, scope: Tenant, service: Service, response: Response) -> AddResultView:
    """Add text or a conversation; facts are extracted in the background (202). With `infer: false` the
    text is stored as one memory at once (201)."""
    result = await service.add(
        scope, text=body.text, messages=body.messages or (), chat_id=body.chat_id, infer=body.infer
    )
    if result.fact is not None:
        response.status_code = 201
    return AddResultView.model_validate(result.model_dump())


@router.get("/memories", tags=["memories"])
async def list_memories(
    scope: Tenant, service: Service, as_of: AsOf = None, include_retired: bool = False
) -> list[FactView]:
    """Current memories, oldest first; or those true `as_of`; or every one with `include_retired`."""
    facts = await service.list_memories(scope, as_of=_when(as_of), include_retired=include_retired)
    return [FactView.of(f) for f in facts]


@router.get("/memories/search", tags=["memories"])
async def search_memories(
    scope: Tenant,
    service: Service,
    q: Annotated[str, Query(min_length=1, max_length=4_000)],
    limit: Annotated[int, Query(ge=1, le=100)] = 10,
    as_of: AsOf = None,
    category: str | None = None,
) -> list[FactView]:
    """Hybrid search (words and, with embeddings, meaning), best first."""
    facts = await service.search(scope, q, limit=limit, as_of=_when(as_of), category=category)
    return [FactView.of(f) for f in facts]


@router.get("/memories/{memory_id}", tags=["memories"])
async def get_memory(memory_id: str, scope: Tenant, service: Service) -> FactView:
    return FactView.of(await service.get(scope, memory_id))


@router.get("/memories/{memory_id}/history", tags=["memories"])
async def memory_history(memory_id: str, scope: Tenant, service: Service) -> list[AuditEventView]:
    """How one memory came and changed, oldest first."""
    return [AuditEventView.of(e) for e in await service.history(scope, memory_id)]


@router.delete("/memories/{memory_id}", tags=["memories"])
async def delete_memory(memory_id: str, scope: Tenant, service: Service, reason: str = "") -> FactView:
    """Retire a memory (it stays in history and in "as of" answers)."""
    return FactView.of(await service.delete(scope, memory_id, reason))


@router.get("/history", tags=["history"])
async def history(scope: Tenant, service: Service) -> list[AuditEventView]:
    """Every change to facts and graph relations, oldest first."""
    return [AuditEventView.of(e) for e in await service.history(scope)]


@router.post("/history/{event_id}/rollback", tags=["history"])
async def rollback(event_id: str, scope: Tenant, service: Service) -> AuditEventView:
    """Undo one change (itself audited); the event undone."""
    return AuditEventView.of(await service.rollback(scope, event_id))


@router.get("/chats", tags=["chats"])
async def chats(scope: Tenant, service: Service) -> list[ChatInfo]:
    return await service.chats(scope)


@router.get("/chats/{chat_id}", tags=["chats"])
async def chat_view(
    chat_id: str, scope: Tenant, service: Service, last: Annotated[int, Query(ge=1, le=1_000)] = 100
) -> ChatView:
    """Title, summary and the newest turns of a chat."""
    return await service.chat(scope, chat_id, last=last)


@router.get("/chats/{chat_id}/export", tags=["chats"])
async def export_chat(chat_id: str, scope: Tenant, service: Service) -> ConversationExport:
    """Every turn of the chat as a versioned export."""
    return await service.export_chat(scope, chat_id)


@router.put("/chats/{chat_id}", tags=["chats"], status_code=201)
async def import_chat(chat_id: str, body: ConversationExport, scope: Tenant, service: Service) -> ChatInfo:
    """Load an export into this (empty) chat of the key's scope, whoever it was exported from."""
    return await service.import_chat(scope, chat_id, body)


@router.delete("/chats/{chat_id}", tags=["chats"])
async def erase_chat(chat_id: str, scope: Tenant, service: Service) -> ErasureReport:
    """Erase a chat in every tier."""
    return await service.erase_chat(scope, chat_id)


@router.delete("/memory", tags=["erasure"])
async def erase_user(scope: Tenant, service: Service, confirm: bool = False) -> ErasureReport:
    """Erase everything the key reaches (`?confirm=true`): a user-wide key's whole user (its API keys
    too), an agent key's chats and facts of its agent (the user's shared facts and keys stay)."""
    if not confirm:
        raise InputError("erasing all memory needs ?confirm=true")
    return await service.erase(scope)


@router.get("/core-blocks", tags=["memory"])
async def core_blocks(scope: Tenant, service: Service) -> list[Block]:
    """Every core block the key reaches, the persona included: its own copy of each, else the default."""
    return await service.tiered_memory.core_blocks(scope)


@router.put("/core-blocks/{label}", tags=["memory"])
async def edit_core_block(
    label: Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{1,64}$")],
    body: BlockEdit,
    scope: Tenant,
    service: Service,
) -> Block:
    """Set the key's own copy of a block (made from the default on its first edit): a user-wide key's is
    the one its chats' model sees, an agent key's its agent's alone; no key changes a default."""
    return await service.tiered_memory.edit_core_block(scope, label, body.value)


@router.post("/archival", tags=["archival"], status_code=201)
async def archival_insert(body: PassageRequest, scope: Tenant, service: Service) -> Passage:
    """Store a passage in the user's archival memory (an agent key's: its agent's own)."""
    return await service.tiered_memory.archival_insert(scope, body.text, body.tags)


@router.get("/archival", tags=["archival"])
async def archival_list(
    scope: Tenant,
    service: Service,
    limit: Annotated[int, Query(ge=1, le=100)] = 100,
    offset: Annotated[int, Query(ge=0, le=10_000)] = 0,
    tag: Tags = None,
) -> list[Passage]:
    """The passages the key sees, newest first."""
    return await service.tiered_memory.archival_list(scope, limit=limit, offset=offset, tags=tag or ())


@router.get("/archival/search", tags=["archival"])
async def archival_search(
    scope: Tenant,
    service: Service,
    q: Annotated[str, Query(min_length=1, max_length=MAX_QUERY_BYTES)],
    limit: Annotated[int, Query(ge=1, le=50)] = 10,
    tag: Tags = None,
) -> list[Passage]:
    """Passages the key sees matching `q` (words, and meaning with embeddings), best first."""
    return await service.tiered_memory.archival_search(scope, q, limit=limit, tags=tag or ())


@router.delete("/archival/{passage_id}", tags=["archival"])
async def archival_delete(passage_id: str, scope: Tenant, service: Service) -> Passage:
    """Delete a passage for good (an agent key: only one it stored); the passage deleted."""
    return await service.tiered_memory.archival_delete(scope, passage_id)


@router.get("/usage", tags=["memory"])
async def usage(scope: Tenant, service: Service) -> UsageReport:
    """LLM calls and tokens spent in the key's chats, per chat and model, and in all."""
    return await service.usage(scope)


@router.get("/graph", tags=["memory"])
async def graph(scope: Tenant, service: Service, as_of: AsOf = None) -> GraphView:
    """Entities and relations (with their validity, as UTC days); retired relations included."""
    return GraphView.model_validate(await service.graph(scope, as_of=_when(as_of)))


@router.get("/dead-letters", tags=["memory"])
async def dead_letters(
    scope: Tenant, service: Service, limit: Annotated[int, Query(ge=1, le=1_000)] = 100
) -> list[DeadLetterView]:
    """The key's chats whose new turns wait outside the fact queue (dead letters: the model answered
    their extraction unusably `memory.facts.max_attempts` times), oldest first, with what it answered;
    an operator queues them again with `brain worker retry`."""
    return await service.dead_letters(scope, limit)
