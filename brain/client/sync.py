"""`BrainClient`: every route of `brain serve`'s HTTP API as a blocking method (for scripts; in async code
use `AsyncBrainClient`), typed with the models
the server answers with (`brain.wire`), over httpx2."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
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

__all__ = ["BrainClient"]

T = TypeVar("T")


class BrainClient:
    """A client of one server with one API key. It owns its connection pool: use it as a context manager,
    or `close()` it. Refusals and failures raise `brain.client.errors.ApiError`s (per status);
    no answer at all raises `ApiConnectionError`. Safe to share among threads (no per-call state here)."""

    def __init__(
        self,
        base_url: str,
        api_key: SecretStr | str | None = None,
        *,
        timeout: float = 60.0,
        headers: Mapping[str, str] | None = None,
        transport: httpx2.BaseTransport | None = None,
    ) -> None:
        key = SecretStr(api_key) if isinstance(api_key, str) else api_key
        self._http = httpx2.Client(
            base_url=base_url,
            auth=Bearer(key) if key is not None else None,
            timeout=timeout,
            headers=headers,
            transport=transport,
        )

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections (idempotent)."""
        self._http.close()

    def _send(self, call: Call[T]) -> T:
        try:
            response = self._http.request(call.method, call.path, params=call.params, json=call.body)
        except httpx2.HTTPError as exc:
            raise unreachable(call, exc) from exc
        return answer(call, response)

    # ---------------------------------------------------------------- health and the key

    def health(self) -> Health:
        """The process is up (no key needed)."""
        return self._send(routes.health())

    def ready(self) -> Readiness:
        """Whether the server can serve (its store answers): `status` "ready" or "unavailable"."""
        return self._send(routes.ready())

    def me(self) -> Me:
        """Whose memory the key reaches."""
        return self._send(routes.me())

    # ---------------------------------------------------------------- chat

    def chat(
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
        return self._send(
            routes.chat(text, chat_id=chat_id, message_id=message_id, oversize=oversize, stream=False)
        )

    def chat_stream(
        self, text: str, *, chat_id: str = "default", message_id: str | None = None
    ) -> Iterator[ChatEvent]:
        """One turn, streamed: `delta` events as the answer comes, then `done` (the whole answer).
        `ApiStreamError` when the model fails mid-answer, `ApiConnectionError` when the stream breaks
        before `done`. Leaving early: close the iterator (`contextlib.closing`)."""
        call = routes.chat(text, chat_id=chat_id, message_id=message_id, stream=True)
        done = False
        try:
            with self._http.stream(call.method, call.path, json=call.body) as response:
                if response.status_code != 200:
                    response.read()
                    failed(response)
                reader = EventReader()
                for line in response.iter_lines():
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

    def add_memory(
        self,
        text: str | None = None,
        *,
        messages: Sequence[NewMessage | dict[str, Any]] | None = None,
        chat_id: str = "memories",
        infer: bool = True,
    ) -> AddResultView:
        """Add text or a conversation: facts are extracted in the background (`queued`); with
        `infer=False` the text is stored as one memory at once (`fact`)."""
        return self._send(routes.add_memory(text, messages=messages, chat_id=chat_id, infer=infer))

    def memories(self, *, as_of: Moment | None = None, include_retired: bool = False) -> list[FactView]:
        """Current memories, oldest first; or those true `as_of`; or every one with `include_retired`."""
        return self._send(routes.memories(as_of=as_of, include_retired=include_retired))

    def search(
        self, q: str, *, limit: int = 10, as_of: Moment | None = None, category: str | None = None
    ) -> list[FactView]:
        """Hybrid search (words and, with embeddings, meaning), best first."""
        return self._send(routes.search(q, limit=limit, as_of=as_of, category=category))

    def memory(self, memory_id: str) -> FactView:
        return self._send(routes.memory(memory_id))

    def memory_history(self, memory_id: str) -> list[AuditEventView]:
        """How one memory came and changed, oldest first."""
        return self._send(routes.memory_history(memory_id))

    def delete_memory(self, memory_id: str, *, reason: str = "") -> FactView:
        """Retire a memory (it stays in history and in "as of" answers); the retired fact."""
        return self._send(routes.delete_memory(memory_id, reason=reason))

    def history(self) -> list[AuditEventView]:
        """Every change to facts and graph relations, oldest first."""
        return self._send(routes.history())

    def rollback(self, event_id: str) -> AuditEventView:
        """Undo one change (itself audited); the event undone."""
        return self._send(routes.rollback(event_id))

    # ---------------------------------------------------------------- chats

    def chats(self) -> list[ChatInfo]:
        return self._send(routes.chats())

    def get_chat(self, chat_id: str, *, last: int = 100) -> ChatView:
        """Title, summary and the newest `last` turns of a chat."""
        return self._send(routes.get_chat(chat_id, last=last))

    def export_chat(self, chat_id: str) -> ConversationExport:
        return self._send(routes.export_chat(chat_id))

    def import_chat(self, chat_id: str, export: ConversationExport) -> ChatInfo:
        """Load an export into this (empty) chat of the key's scope."""
        return self._send(routes.import_chat(chat_id, export))

    def erase_chat(self, chat_id: str) -> ErasureReport:
        """Erase a chat in every tier."""
        return self._send(routes.erase_chat(chat_id))

    def erase_memory(self, *, confirm: bool) -> ErasureReport:
        """Erase everything the key reaches (only with `confirm=True`; a user-wide key: its keys too)."""
        return self._send(routes.erase_memory(confirm=confirm))

    # ---------------------------------------------------------------- core and archival memory

    def core_blocks(self) -> list[Block]:
        return self._send(routes.core_blocks())

    def edit_core_block(self, label: str, value: str) -> Block:
        """Set the key's own copy of a block (its whole new text)."""
        return self._send(routes.edit_core_block(label, value))

    def archival_insert(self, text: str, *, tags: Sequence[str] = ()) -> Passage:
        return self._send(routes.archival_insert(text, tags=tags))

    def archival_list(self, *, limit: int = 100, offset: int = 0, tags: Sequence[str] = ()) -> list[Passage]:
        """The passages the key sees, newest first."""
        return self._send(routes.archival_list(limit=limit, offset=offset, tags=tags))

    def archival_search(self, q: str, *, limit: int = 10, tags: Sequence[str] = ()) -> list[Passage]:
        """Passages matching `q`, best first."""
        return self._send(routes.archival_search(q, limit=limit, tags=tags))

    def archival_delete(self, passage_id: str) -> Passage:
        return self._send(routes.archival_delete(passage_id))

    # ---------------------------------------------------------------- what memory holds and costs

    def usage(self) -> UsageReport:
        return self._send(routes.usage())

    def graph(self, *, as_of: Moment | None = None) -> GraphView:
        return self._send(routes.graph(as_of=as_of))

    def dead_letters(self, *, limit: int = 100) -> list[DeadLetterView]:
        return self._send(routes.dead_letters(limit=limit))

    def stats(self) -> StorageReport:
        """Keys and bytes of the user's memory (a user-wide key only: else `ApiAuthError`, 403)."""
        return self._send(routes.stats())
