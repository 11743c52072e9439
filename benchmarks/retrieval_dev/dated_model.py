"""The dated dev set's data: conversations of dated sessions, turns with speaker and time, and questions that
name their evidence turns and sessions and the time they are asked at (so "last week" can be resolved)."""

from __future__ import annotations

from datetime import date, datetime

from pydantic import BaseModel, ConfigDict

__all__ = ["TYPES", "DatedConversation", "DatedQuestion", "DatedSession", "DatedTurn"]

# single: one fact told once; temporal: when something happened, or what happened in a dated or relative
# window; multi_hop: two turns of two sessions; latest: a value that changed, only its last telling counts;
# preference: a taste or habit asked about abstractly (a recommendation, what suits the user)
TYPES = ("single", "temporal", "multi_hop", "latest", "preference")


class DatedTurn(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    session_id: str
    role: str  # "user" or "assistant"
    speaker: str  # the name a transcript shows
    text: str
    at: datetime


class DatedSession(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    day: date
    turns: tuple[DatedTurn, ...]


class DatedQuestion(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    type: str
    language: str
    asked_at: datetime
    text: str
    answer: str  # for a reader of the set; retrieval is scored on the evidence
    evidence_turns: tuple[str, ...]
    evidence_sessions: tuple[str, ...]


class DatedConversation(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    language: str
    user: str
    sessions: tuple[DatedSession, ...]
    questions: tuple[DatedQuestion, ...]

    @property
    def turns(self) -> list[DatedTurn]:
        return [t for s in self.sessions for t in s.turns]
