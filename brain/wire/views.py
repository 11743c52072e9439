"""The HTTP API's responses. Times are `UtcTime` (ISO 8601, UTC); the store keeps Unix seconds, and these
views are made from its records (`FactView.of`, `AuditEventView.of`). Unknown fields are ignored, so a
client reads the answers of a newer server."""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from brain.storage.facts import AuditEvent, Event, Fact
from brain.storage.usage import UsageRow
from brain.wire.times import UtcTime

__all__ = [
    "AddResultView",
    "Archived",
    "AuditEventView",
    "ChatInfo",
    "ChatReply",
    "ChatView",
    "DeadLetterView",
    "FactView",
    "GraphEntity",
    "GraphRelation",
    "GraphView",
    "Health",
    "Me",
    "Passage",
    "Readiness",
    "TurnView",
    "UsageReport",
]

_VIEW = ConfigDict(frozen=True, extra="ignore")


class Health(BaseModel):
    model_config = _VIEW

    status: str
    version: str


class Readiness(BaseModel):
    model_config = _VIEW

    status: str = Field(description='"ready", or "unavailable" (503) while the store does not answer')
    detail: str | None = None


class Me(BaseModel):
    model_config = _VIEW

    user: str
    agent: str | None


class ChatReply(BaseModel):
    model_config = _VIEW

    chat_id: str
    text: str


class FactView(BaseModel):
    """One fact (`brain.storage.facts.Fact`). `valid_at`/`invalid_at`: when it is true in the world;
    `created_at`/`expired_at`: when we learned it and when we retired it."""

    model_config = _VIEW

    id: str
    text: str
    category: str = "misc"
    agent_id: str | None = None
    run_id: str | None = None
    valid_at: UtcTime | None = None
    invalid_at: UtcTime | None = None
    created_at: UtcTime
    expired_at: UtcTime | None = None
    superseded_by: str | None = None
    source_turns: tuple[str, ...] = ()
    hash: str = ""
    key: str = ""
    value: str = ""

    @classmethod
    def of(cls, fact: Fact) -> FactView:
        return cls.model_validate(fact.model_dump())


class AuditEventView(BaseModel):
    """One change to fact (or graph) memory (`brain.storage.facts.AuditEvent`); `id` orders events."""

    model_config = _VIEW

    id: str
    event: Event
    fact_id: str
    old_fact_id: str = ""
    old_text: str = ""
    new_text: str = ""
    actor: str = ""
    reason: str = ""
    source_turns: tuple[str, ...] = ()
    at: UtcTime
    undoes: str = ""
    subject: Literal["fact", "relation"] = "fact"

    @classmethod
    def of(cls, event: AuditEvent) -> AuditEventView:
        return cls.model_validate(event.model_dump())


class AddResultView(BaseModel):
    model_config = _VIEW

    chat_id: str | None = None
    turns: int = 0  # turns the chat holds after the add
    queued: bool = False  # handed to the fact workers: facts appear in the background
    fact: FactView | None = None  # infer=False: the fact stored as given


class ChatInfo(BaseModel):
    model_config = _VIEW

    id: str
    title: str
    summary: str
    turns: int
    calls: int
    tokens: int


class TurnView(BaseModel):
    model_config = _VIEW

    seq: int
    role: str
    speaker: str
    content: str
    at: UtcTime
    hidden: bool
    step: bool = False  # a tool call with its inner thoughts, or a tool's result, kept with the turn


class UsageReport(BaseModel):
    """What a user's memory and answers cost: one row per chat and model, and the totals."""

    model_config = _VIEW

    rows: tuple[UsageRow, ...]
    calls: int
    prompt_tokens: int
    completion_tokens: int


class ChatView(BaseModel):
    model_config = _VIEW

    chat: ChatInfo
    summary_upto: int
    turns: tuple[TurnView, ...]


class Archived(BaseModel):
    """A message stored in archival memory instead of being answered (too long for the model)."""

    model_config = _VIEW

    chat_id: str
    source: str
    passages: int
    unchanged: bool = False


class DeadLetterView(BaseModel):
    """Turns of one of the key's chats set aside after the model answered their fact extraction unusably."""

    model_config = _VIEW

    id: str
    chat_id: str
    upto: int = Field(description="the chat's turns up to this one wait for fact extraction")
    attempts: int
    at: UtcTime = Field(description="when they were set aside")
    reason: str = Field(description="what the model answered the last time, cut short")


class Passage(BaseModel):
    """An archival passage as a scope sees it."""

    model_config = _VIEW

    id: str
    text: str
    tags: tuple[str, ...] = ()
    source: str = Field("", description="who or what stored it (an API key, the model, a loaded document)")
    at: UtcTime = Field(description="when it was stored")
    agent: str | None = Field(None, description="the agent whose passage it is; none: the user's shared one")
    score: float | None = Field(None, description="a search's relevance (best first)")


class GraphEntity(BaseModel):
    model_config = _VIEW

    id: str
    name: str
    type: str
    aliases: tuple[str, ...] = ()
    mentions: int = 0


class GraphRelation(BaseModel):
    """`source -relation-> target`; its validity and learning times as UTC days."""

    model_config = _VIEW

    id: str
    source: str
    relation: str
    target: str
    valid_at: date | None = None
    invalid_at: date | None = None
    created_at: date | None = None
    expired_at: date | None = None
    fact_id: str | None = None
    source_turns: tuple[str, ...] = ()


class GraphView(BaseModel):
    """Entities and relations (retired relations included)."""

    model_config = _VIEW

    entities: tuple[GraphEntity, ...] = ()
    relations: tuple[GraphRelation, ...] = ()
