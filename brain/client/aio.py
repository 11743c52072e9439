"""`AsyncBrainClient`: every route of `brain serve`'s HTTP API as an async method, typed with the models
the server answers with (`brain.wire`), over httpx2."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from types import TracebackType
from typing import Any, Literal, Self, TypeVar

import httpx2
from pydantic import SecretStr

from brain.backends.redis.stats import StorageReport
from brain.client import routes
from brain.client.answers import Bearer, answer, failed, unreachable
from brain.client.call import Call, Moment
from brain.client.errors import ApiConnectionError
from brain.client.events import ChatEvent, EventReader
from brain.memory.erasure import ErasureReport
from brain.memory.transfer import ConversationExport
from brain.storage.blocks import Block
from brain.wire import (
    AddResultView,
    Archived,
    AuditEventView,
    ChatInfo,
    ChatReply,
    ChatView,
    DeadLetterView,
    FactView,
    GraphView,
    Health,
    Me,
    NewMessage,
    Passage,
    Readiness,
    UsageReport,
)

__all__ = ["AsyncBrainClient"]

T = TypeVar("T")


class AsyncBrainClient:
    """A client of one server with one API key. It owns its connection pool: use it as an async context
    manager, or `aclose()` it. Refusals and failures raise `brain.client.errors.ApiError`s (per status);
    no answer at all raises `ApiConnectionError`. Safe to share among tasks (no per-call state here)."""

    def __init__(
        self,
        base_url: str,
        api_key: SecretStr | str | None = None,
        *,
        timeout: float = 60.0,
        headers: Mapping[str, str] | None = None,
        transport: httpx2.AsyncBaseTransport | None = None,
    ) -> None:
        key = SecretStr(api_key) if isinstance(api_key, str) else api_key
        self._http = httpx2.AsyncClient(
            base_url=base_url,
            auth=Bearer(key) if key is not None else None,
            timeout=timeout,
            headers=headers,
            transport=transport,
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connections (idempotent)."""
        await self._http.aclose()

    async def _send(self, call: Call[T]) -> T:
        try:
            response = await self._http.request(call.method, call.path, params=call.params, json=call.body)
        except httpx2.HTTPError as exc:
            raise unreachable(call, exc) from exc
        return answer(call, response)

    # ---------------------------------------------------------------- health and the key

    async def health(self) -> Health:
        """The process is up (no key needed)."""
        return await self._send(routes.health())

    async def ready(self) -> Readiness:
        """Whether the server can serve (its store answers): `status` "ready" or "unavailable"."""
        return await self._send(routes.ready())

    async def me(self) -> Me:
        """Whose memory the key reaches."""
        return await self._send(routes.me())

    # ---------------------------------------------------------------- chat

    async def chat(
        self,
        text: str,
        *,
        chat_id: str = "default",
        message_id: str | None = None,
        oversize: Literal["refuse", "archive"] = "refuse",
    ) -> ChatReply | Archived:
        """One turn, the whole answer at once. `message_id`: an idempotency key (a retry gets the stored
        answer). A message too long for the model: `ApiTooLargeError`, or with `oversize="archive"`
        stored in archival memory (`Archived`, nothing answered)."""
        return await self._send(
            routes.chat(text, chat_id=chat_id, message_id=message_id, oversize=oversize, stream=False)
        )

    async def chat_stream(
        self, text: str, *, chat_id: str = "default", message_id: str | None = None
    ) -> AsyncIterator[ChatEvent]:
        """One turn, streamed: `delta` events as the answer comes, then `done` (the whole answer).
        `ApiStreamError` when the model fails mid-answer, `ApiConnectionError` when the stream breaks
        before `done`. Leaving early: close the iterator (`contextlib.aclosing`)."""
        call = routes.chat(text, chat_id=chat_id, message_id=message_id, stream=True)
        done = False
        try:
            async with self._http.stream(call.method, call.path, json=call.body) as response:
                if response.status_code != 200:
                    await response.aread()
                    failed(response)
                reader = EventReader()
                async for line in response.aiter_lines():
                    if (event := reader.line(line)) is not None:
                        done = event.kind == "done"
                        yield event
                if (event := reader.end()) is not None:
                    done = event.kind == "done"
                    yield event
        except httpx2.HTTPError as exc:
            raise unreachable(call, exc) from exc
        if not done:
            raise ApiConnectionError(f"{call.method} {call.path}: the stream ended before its done event")

    # ---------------------------------------------------------------- memories (facts)

    async def add_memory(
        self,
        text: str | None = None,
        *,
        messages: Sequence[NewMessage | dict[str, Any]] | None = None,
        chat_id: str = "memories",
        infer: bool = True,
    ) -> AddResultView:
        """Add text or a conversation: facts are extracted in the background (`queued`); with
        `infer=False` the text is stored as one memory at once (`fact`)."""
        return await self._send(routes.add_memory(text, messages=messages, chat_id=chat_id, infer=infer))

    async def memories(self, *, as_of: Moment | None = None, include_retired: bool = False) -> list[FactView]:
        """Current memories, oldest first; or those true `as_of`; or every one with `include_retired`."""
        return await self._send(routes.memories(as_of=as_of, include_retired=include_retired))

    async def search(
        self, q: str, *, limit: int = 10, as_of: Moment | None = None, category: str | None = None
    ) -> list[FactView]:
        """Hybrid search (words and, with embeddings, meaning), best first."""
        return await self._send(routes.search(q, limit=limit, as_of=as_of, category=category))

    async def memory(self, memory_id: str) -> FactView:
        return await self._send(routes.memory(memory_id))

    async def memory_history(self, memory_id: str) -> list[AuditEventView]:
        """How one memory came and changed, oldest first."""
        return await self._send(routes.memory_history(memory_id))

    async def delete_memory(self, memory_id: str, *, reason: str = "") -> FactView:
        """Retire a memory (it stays in history and in "as of" answers); the retired fact."""
        return await self._send(routes.delete_memory(memory_id, reason=reason))

    async def history(self) -> list[AuditEventView]:
        """Every change to facts and graph relations, oldest first."""
        return await self._send(routes.history())

    async def rollback(self, event_id: str) -> AuditEventView:
        """Undo one change (itself audited); the event undone."""
        return await self._send(routes.rollback(event_id))

    # ---------------------------------------------------------------- chats

    async def chats(self) -> list[ChatInfo]:
        return await self._send(routes.chats())

    async def get_chat(self, chat_id: str, *, last: int = 100) -> ChatView:
        """Title, summary and the newest `last` turns of a chat."""
        return await self._send(routes.get_chat(chat_id, last=last))

    async def export_chat(self, chat_id: str) -> ConversationExport:
        return await self._send(routes.export_chat(chat_id))

    async def import_chat(self, chat_id: str, export: ConversationExport) -> ChatInfo:
        """Load an export into this (empty) chat of the key's scope."""
        return await self._send(routes.import_chat(chat_id, export))

    async def erase_chat(self, chat_id: str) -> ErasureReport:
        """Erase a chat in every tier."""
        return await self._send(routes.erase_chat(chat_id))

    async def erase_memory(self, *, confirm: bool) -> ErasureReport:
        """Erase everything the key reaches (only with `confirm=True`; a user-wide key: its keys too)."""
        return await self._send(routes.erase_memory(confirm=confirm))

    # ---------------------------------------------------------------- core and archival memory

    async def core_blocks(self) -> list[Block]:
        return await self._send(routes.core_blocks())

    async def edit_core_block(self, label: str, value: str) -> Block:
        """Set the key's own copy of a block (its whole new text)."""
        return await self._send(routes.edit_core_block(label, value))

    async def archival_insert(self, text: str, *, tags: Sequence[str] = ()) -> Passage:
        return await self._send(routes.archival_insert(text, tags=tags))

    async def archival_list(
        self, *, limit: int = 100, offset: int = 0, tags: Sequence[str] = ()
    ) -> list[Passage]:
        """The passages the key sees, newest first."""
        return await self._send(routes.archival_list(limit=limit, offset=offset, tags=tags))

    async def archival_search(self, q: str, *, limit: int = 10, tags: Sequence[str] = ()) -> list[Passage]:
        """Passages matching `q`, best first."""
        return await self._send(routes.archival_search(q, limit=limit, tags=tags))

    async def archival_delete(self, passage_id: str) -> Passage:
        return await self._send(routes.archival_delete(passage_id))

    # ---------------------------------------------------------------- what memory holds and costs

    async def usage(self) -> UsageReport:
        return await self._send(routes.usage())

    async def graph(self, *, as_of: Moment | None = None) -> GraphView:
        return await self._send(routes.graph(as_of=as_of))

    async def dead_letters(self, *, limit: int = 100) -> list[DeadLetterView]:
        return await self._send(routes.dead_letters(limit=limit))

    async def stats(self) -> StorageReport:
        """Keys and bytes of the user's memory (a user-wide key only: else `ApiAuthError`, 403)."""
        return await self._send(routes.stats())
