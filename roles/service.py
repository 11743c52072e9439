"""`MemoryService`: what the HTTP API, the MCP server and the inspector page do to one tenant's memory.

Every method takes the caller's `Scope` first. The scope comes from the authenticated API key (or the
configuration of a stdio MCP server), never from a request's arguments, so no argument can name another
tenant: ids in requests (facts, events, chats) are looked up inside the scope's own namespaces only.
What a scope reaches inside its user (an agent's chats, facts, events, erasure) is `roles.access`'s rule,
asked by every method here.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from brain.errors import InputError, NotFoundError
from brain.memory.erasure import ErasureReport
from brain.memory.facts import AuditEvent, Fact, trimmed_event
from brain.memory.graph import render
from brain.memory.steps import is_step
from brain.memory.tiers import Tiers
from brain.memory.transfer import ConversationExport
from brain.message import Message, check_text
from brain.process_caches import forget_soon
from brain.search.analysis import searchable
from brain.storage import fence
from brain.storage.conversation import Conversation, ConversationMeta
from brain.storage.fence import Ticket
from brain.wire import (
    Archived,
    ChatInfo,
    ChatView,
    DeadLetterView,
    NewMessage,
    TurnView,
    UsageReport,
)
from roles.access import (
    Scope,
    erases_fact,
    erases_user,
    passage_agent,
    request_chat,
    sees,
    sees_event,
    storage_chat,
)
from roles.assistant import Assistant
from roles.service_memory import TieredMemory

__all__ = [
    "AddResult",
    "Archived",
    "ChatInfo",
    "ChatView",
    "DeadLetterView",
    "MemoryService",
    "NewMessage",
    "Scope",
    "TurnView",
    "UsageReport",
    "as_of_time",
]


def as_of_time(text: str) -> float:
    """An "as of" date or time (ISO; a whole day means its end, UTC unless it says). Pure."""
    try:
        parsed = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        raise InputError("as_of must be an ISO date or time, like 2026-05-01") from None
    if len(text) <= 10:  # a whole day: as of its end
        parsed = parsed.replace(hour=23, minute=59, second=59)
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp()


class AddResult(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    chat_id: str | None = None
    turns: int = 0  # turns the chat holds after the add
    queued: bool = False  # handed to the fact workers: facts appear in the background
    fact: Fact | None = None  # infer=False: the fact stored as given


class MemoryService:
    """One assistant's memory, served per tenant. Holds nothing per call; safe for any number at once."""

    def __init__(self, assistant: Assistant) -> None:
        self.assistant = assistant
        self.runtime = assistant.runtime

    @property
    def tiers(self) -> Tiers:
        if self.runtime.tiers is None:
            raise InputError("memory beyond chats needs a backend (Redis, or memory)")
        return self.runtime.tiers

    async def present(self, scope: Scope) -> None:
        """The scope's user brought back from the cold archive first, when archived (`Tiers.present`):
        every HTTP route and MCP tool calls this before anything else."""
        if self.runtime.tiers is not None:
            await self.runtime.tiers.present(scope.user)

    @property
    def tiered_memory(self) -> TieredMemory:
        """Core blocks (persona included) and archival memory, per scope (`roles.service_memory`)."""
        return TieredMemory(self.assistant)

    # ------------------------------------------------------------------ facts

    async def add(
        self,
        scope: Scope,
        *,
        text: str | None = None,
        messages: Sequence[NewMessage] = (),
        chat_id: str = "memories",
        infer: bool = True,
    ) -> AddResult:
        """Add a memory: `text` or a conversation (`messages`). With `infer`, they are stored as turns of
        `chat_id` and the fact workers extract facts in the background; without, `text` is one fact."""
        if (text is None) == (not messages):
            raise InputError("give either text or messages")
        limit = self.runtime.settings.memory.max_message_bytes
        if not infer:
            if text is None:
                raise InputError("infer=false stores text as one fact; give text, not messages")
            fact = Fact(text=check_text(text, min(limit, 4_000), "memory").strip(), agent_id=scope.agent)
            with fence.holding(await self._ticket(scope)):
                stored, _ = await self.tiers.facts.add(scope.user, fact, actor=scope.actor, reason="added")
            return AddResult(fact=stored)
        given = (
            [NewMessage(content=check_text(text, limit, "memory"))] if text is not None else list(messages)
        )
        turns = [
            Message(
                role=m.role,
                content=m.content,
                sent_from=m.role,
                **({"id": m.id} if m.id else {}),
                **({"created_at": m.created_at} if m.created_at else {}),
            )
            for m in given
        ]
        count = await self.assistant.add_turns(scope.user, storage_chat(scope, chat_id), turns)
        return AddResult(chat_id=chat_id, turns=count, queued=self.runtime.settings.memory.facts.enabled)

    async def search(
        self,
        scope: Scope,
        query: str,
        *,
        limit: int = 10,
        as_of: float | None = None,
        category: str | None = None,
    ) -> list[Fact]:
        """Facts matching `query` (hybrid search), current or true `as_of`; best first."""
        check_text(query, 4_000, "query")
        if not searchable(query):
            raise InputError(f"nothing to search for in {query!r}: only stop words or punctuation")
        found = await self.tiers.facts.search(
            scope.user, query, limit=limit * 2 if scope.agent else limit, as_of=as_of, category=category
        )
        return [f for f in found if sees(scope, f)][:limit]

    async def list_memories(
        self, scope: Scope, *, as_of: float | None = None, include_retired: bool = False
    ) -> list[Fact]:
        """Facts, oldest first: current ones, those true `as_of`, or every one with `include_retired`."""
        facts = await self.tiers.facts.all(scope.user, current_only=not include_retired and as_of is None)
        return [f for f in facts if sees(scope, f) and (as_of is None or f.true_at(as_of))]

    async def get(self, scope: Scope, fact_id: str) -> Fact:
        fact = await self.tiers.facts.get(scope.user, fact_id)
        if fact is None or not sees(scope, fact):
            raise NotFoundError("there is no memory with this memory_id")  # never echoed: it may be hostile
        return fact

    async def history(self, scope: Scope, fact_id: str | None = None) -> list[AuditEvent]:
        """The audit trail, oldest first: of one memory, or everything (facts and graph relations); only
        the events the scope sees."""
        if fact_id is not None:
            await self.get(scope, fact_id)
        events = await self.tiers.facts.history(scope.user, fact_id)
        if scope.agent is None:
            return events
        facts = {f.id: f for f in await self.tiers.facts.all(scope.user, current_only=False)}
        return [e for e in events if sees_event(scope, e, facts)]

    async def delete(self, scope: Scope, fact_id: str, reason: str = "") -> Fact:
        """Retire a memory (kept for history and "as of" questions); the retired fact."""
        ticket = await self._ticket(scope)
        await self.get(scope, fact_id)
        with fence.holding(ticket):
            await self.tiers.facts.retire(scope.user, fact_id, actor=scope.actor, reason=reason or "deleted")
        return await self.get(scope, fact_id)

    async def rollback(self, scope: Scope, event_id: str) -> AuditEvent:
        """Undo one audited change (fact or relation) the scope sees; the event undone. `NotFoundError`
        for an event it does not see, as for one that does not exist."""
        ticket = await self._ticket(scope)
        if not any(e.id == event_id for e in await self.history(scope)):
            trimmed = trimmed_event(event_id, await self.tiers.facts.history(scope.user))
            raise NotFoundError(trimmed or "there is no memory event with this event_id")
        with fence.holding(ticket):
            return await self.tiers.rollback(scope.user, event_id, actor=scope.actor)

    async def _ticket(self, scope: Scope) -> Ticket:
        """The erasure ticket of a request that writes facts: taken before it reads anything, so that an
        erasure of the user meanwhile drops its write (`brain.storage.fence`)."""
        return await self.tiers.backend.erasure.ticket(scope.user)

    # ------------------------------------------------------------------ chats

    async def chats(self, scope: Scope) -> list[ChatInfo]:
        """The scope's chats (an agent's own; a user-wide scope's: those of no agent), by id."""
        ids = await self._chat_ids(scope)
        metas = await asyncio.gather(*(self._meta(scope, c) for c in ids))
        return sorted((_info(c, m) for c, m in zip(ids, metas, strict=True)), key=lambda c: c.id)

    async def _chat_ids(self, scope: Scope) -> list[str]:
        """The scope's chat ids, as requests name them."""
        found = (request_chat(scope, c) for c in await self.runtime.store.list_chats(scope.user))
        return [c for c in found if c is not None]

    async def _meta(self, scope: Scope, chat_id: str) -> ConversationMeta:
        conv = Conversation(scope.user, storage_chat(scope, chat_id))
        state = await self.runtime.store.load(conv, window_turns=0, knowledge_items=0)
        if not state.exists:
            raise NotFoundError("there is no chat with this chat_id")
        return state.meta

    async def chat(self, scope: Scope, chat_id: str, *, last: int = 100) -> ChatView:
        """A chat's title, summary and newest `last` turns (taken-back ones flagged)."""
        meta = await self._meta(scope, chat_id)
        start = max(1, meta.turn_count - last + 1)
        conv = Conversation(scope.user, storage_chat(scope, chat_id))
        turns = await self.runtime.store.read_turns(conv, start, last)
        views = tuple(
            TurnView(
                seq=t.seq,
                role=t.message.role,
                speaker=t.message.sent_from or t.message.role,
                content=t.message.content,
                at=t.message.created_at.isoformat(timespec="seconds"),
                hidden=t.hidden,
                step=is_step(t.message),
            )
            for t in turns
        )
        return ChatView(chat=_info(chat_id, meta), summary_upto=meta.summary_upto, turns=views)

    def converse(
        self, scope: Scope, chat_id: str, text: str, message_id: str | None = None
    ) -> AsyncGenerator[str, None]:
        """One turn with the assistant in the scope's `chat_id`, streamed (`message_id`: an idempotency
        key, see `Assistant.chat`): the assistant's stream itself. `InputError` at once for a bad id."""
        chat = storage_chat(scope, chat_id)
        return self.assistant.chat_stream(scope.user, chat, text, message_id=message_id)

    async def dead_letters(self, scope: Scope, limit: int = 100) -> list[DeadLetterView]:
        """The scope's chats whose new turns wait outside the fact queue (dead letters), oldest first."""
        letters = await self.tiers.fact_queue.parked(limit=10_000, user_id=scope.user)
        views = [
            DeadLetterView(id=d.id, chat_id=chat, upto=d.upto, attempts=d.attempts, at=d.at, reason=d.reason)
            for d in letters
            if (chat := request_chat(scope, d.chat_id)) is not None
        ]
        return views[:limit]

    async def fits(self, text: str) -> bool:
        """Whether a message of `text` fits the model (else `converse` refuses it, 413)."""
        return await self.assistant.fits(text)

    async def archive(self, scope: Scope, chat_id: str, text: str) -> Archived:
        """Store a message in the user's archival memory instead of answering it (see `Assistant.archive`)."""
        loaded = await self.assistant.archive(scope.user, storage_chat(scope, chat_id), text, named=chat_id)
        return Archived(
            chat_id=chat_id, source=loaded.source, passages=loaded.added, unchanged=loaded.unchanged
        )

    async def export_chat(self, scope: Scope, chat_id: str) -> ConversationExport:
        """Every turn of the scope's `chat_id`, the export naming it as the request did."""
        await self._meta(scope, chat_id)
        export = await self.assistant.export_chat(scope.user, storage_chat(scope, chat_id))
        return export if export.ids_base64 else export.model_copy(update={"chat_id": chat_id})

    async def import_chat(self, scope: Scope, chat_id: str, export: ConversationExport) -> ChatInfo:
        """Load an export into the scope's empty `chat_id` (whoever the export came from)."""
        await self.assistant.import_chat(scope.user, storage_chat(scope, chat_id), export)
        return _info(chat_id, await self._meta(scope, chat_id))

    async def erase_chat(self, scope: Scope, chat_id: str) -> ErasureReport:
        """Erase one of the scope's chats in every tier."""
        return await self.assistant.forget(scope.user, storage_chat(scope, chat_id))

    async def erase(self, scope: Scope) -> ErasureReport:
        """Erase what the scope reaches: a user-wide scope, everything of the user (`forget_user`); an agent
        scope, every chat of the agent, the agent's own facts and archival passages (the user's shared
        ones stay).
        `remaining` names the agent's chats a final listing still found (written meanwhile)."""
        if erases_user(scope):
            return await self.assistant.forget_user(scope.user)
        try:
            return await self._erase_agent(scope)
        finally:
            forget_soon()  # the archival passages' text too (`brain.process_caches`)

    async def _erase_agent(self, scope: Scope) -> ErasureReport:
        report = ErasureReport()
        for chat_id in await self._chat_ids(scope):
            report += await self.erase_chat(scope, chat_id)
        facts = await self.tiers.facts.all(scope.user, current_only=False)
        await self.tiers.facts.erase(scope.user, [f.id for f in facts if erases_fact(scope, f)])
        archival = self.tiers.archival(scope.user)  # the passages the agent's key stored
        mine = [d.id for d in await archival.all_docs() if passage_agent(d) == scope.agent]
        for passage_id in mine:
            await archival.delete(passage_id)
        left = await self._chat_ids(scope)
        return report + ErasureReport(
            archival_passages=len(mine), remaining=tuple(f"chat {c!r}" for c in left)
        )

    # ------------------------------------------------------------------ the rest of memory

    async def usage(self, scope: Scope) -> UsageReport:
        """LLM calls and tokens spent in the scope's chats: per chat and model (answers, summaries, fact and
        graph extraction), and in all."""
        backend = self.runtime.backend
        if backend is None:
            raise InputError("usage is kept in the backend: memory beyond chats needs one")
        rows = tuple(
            r.model_copy(update={"chat_id": chat_id})
            for r in await backend.usage.rows(scope.user)
            if (chat_id := request_chat(scope, r.chat_id)) is not None
        )
        return UsageReport(
            rows=rows,
            calls=sum(r.calls for r in rows),
            prompt_tokens=sum(r.prompt_tokens for r in rows),
            completion_tokens=sum(r.completion_tokens for r in rows),
        )

    async def graph(self, scope: Scope, *, as_of: float | None = None) -> dict[str, Any]:
        """The user's graph (entities, relations with their validity), as JSON data."""
        whole = await self.tiers.graph.everything(scope.user, as_of=as_of, current_only=False)
        data: dict[str, Any] = json.loads(render(whole, "json"))
        return data


def _info(chat_id: str, meta: ConversationMeta) -> ChatInfo:
    usage = meta.usage
    return ChatInfo(
        id=chat_id,
        title=meta.title,
        summary=meta.summary,
        turns=meta.turn_count,
        calls=meta.calls,
        tokens=usage.prompt_tokens + usage.completion_tokens,
    )
