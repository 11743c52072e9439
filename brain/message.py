"""The message record: what roles send each other and what memory stores."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["SCHEMA_VERSION", "Message", "speaker"]

SCHEMA_VERSION = 1


def _new_id() -> str:
    return uuid.uuid4().hex


def _now() -> datetime:
    return datetime.now(UTC)


class Message(BaseModel):
    """One message. `id` makes stores idempotent: the same id is stored once."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(default_factory=_new_id, min_length=1, max_length=256)
    role: str = "user"
    content: str
    sent_from: str = ""
    send_to: tuple[str, ...] = ()
    cause_by: str = ""
    created_at: datetime = Field(default_factory=_now)
    metadata: dict[str, Any] = Field(default_factory=dict)


def speaker(message: Message) -> str:
    """The label a transcript shows for a message: its sender, else its role, capitalised."""
    name = message.sent_from or message.role or "unknown"
    return name[:1].upper() + name[1:]
