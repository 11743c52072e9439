"""Google ADK adapter (`pip install brain-assistant[adk]`): `BrainMemoryService`, a `BaseMemoryService`
whose memories are passages of a user's archival memory (searched as brain's archival search is: BM25,
fused with vectors when the runtime has an embedding model).

The ADK user `(app_name, user_id)` is the brain user `"<app_name>/<user_id>"`. Each event with text is one
passage, its id the event's id (adding a session again adds only its new events), tagged `adk`, its whole
`Content` kept as JSON with the author and session, so a memory comes back as the event said it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from google.adk.events.event import Event
from google.adk.memory import BaseMemoryService
from google.adk.memory.base_memory_service import SearchMemoryResponse
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.sessions.session import Session
from google.genai import types

from brain.errors import InputError
from brain.runtime import Runtime
from brain.search.index import IndexedDoc
from brain.storage import fence
from roles.integrations.memory_search import MemoryHit, search_archival, tiers_of

__all__ = ["BrainMemoryService", "brain_user"]


def brain_user(app_name: str, user_id: str) -> str:
    """The brain user id of an ADK app's user. Pure."""
    return f"{app_name}/{user_id}"


def _doc(event: Event, session_id: str | None) -> IndexedDoc | None:
    content = event.content
    text = "\n".join(p.text for p in (content.parts or []) if p.text) if content is not None else ""
    if content is None or not text.strip():
        return None
    return IndexedDoc(
        id=event.id,
        text=text,
        tags=("adk",),
        ts=event.timestamp,
        metadata={
            "author": event.author,
            "session_id": session_id,
            "content": content.model_dump(mode="json", exclude_none=True),
        },
    )


def _entry(hit: MemoryHit) -> MemoryEntry:
    meta = hit.metadata
    author = meta.get("author")
    return MemoryEntry(
        id=hit.id,
        content=types.Content.model_validate(meta["content"]),
        author=author if isinstance(author, str) else None,
        timestamp=datetime.fromtimestamp(hit.ts, UTC).isoformat(),
        custom_metadata={"score": hit.score, "session_id": meta.get("session_id")},
    )


class BrainMemoryService(BaseMemoryService):  # type: ignore[misc]
    """ADK memory on `runtime`'s Redis. It holds only the runtime's tiers; `StoreError` when the store
    fails; an erasure of the user meanwhile drops what a call was writing (`brain.storage.fence`)."""

    def __init__(self, runtime: Runtime, *, limit: int = 5) -> None:
        self.tiers = tiers_of(runtime)
        self.limit = limit

    async def add_session_to_memory(self, session: Session) -> None:
        await self._add(session.app_name, session.user_id, session.events, session.id)

    async def add_events_to_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        events: Sequence[Event],
        session_id: str | None = None,
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        await self._add(app_name, user_id, events, session_id)

    async def _add(
        self, app_name: str, user_id: str, events: Sequence[Event], session_id: str | None
    ) -> None:
        docs = [d for d in (_doc(e, session_id) for e in events) if d is not None]
        if not docs:
            return
        tiers, user = self.tiers, brain_user(app_name, user_id)
        await tiers.present(user)
        vectors = [await tiers.vector(d.text) for d in docs] if tiers.embed is not None else None
        with fence.holding(await tiers.backend.erasure.ticket(user)):
            await tiers.archival(user).add_many(docs, vectors)  # type: ignore[arg-type]

    async def search_memory(self, *, app_name: str, user_id: str, query: str) -> SearchMemoryResponse:
        """The best `limit` memories for `query`; none for a query with nothing to search for."""
        try:
            hits = await search_archival(self.tiers, brain_user(app_name, user_id), query, self.limit)
        except InputError:
            hits = []
        return SearchMemoryResponse(memories=[_entry(h) for h in hits if "content" in h.metadata])

    async def delete_memory(self, *, app_name: str, user_id: str, memory_id: str | None = None) -> None:
        if memory_id is not None:
            await self.tiers.archival(brain_user(app_name, user_id)).delete(memory_id)
