"""The message record: what roles send each other and what memory stores."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from brain.errors import InputError

__all__ = ["SCHEMA_VERSION", "Message", "check_text", "speaker"]

SCHEMA_VERSION = 1


_VERSION_4 = (0xF000 << 64 | 0xC000 << 48, 0x4000 << 64 | 0x8000 << 48)  # the bits a uuid4 sets


def _new_id() -> str:
    """A random uuid4's 32 lower-case hex digits (`uuid.uuid4().hex`, at a fifth of its cost: every turn
    makes several)."""
    clear, ones = _VERSION_4
    return f"{int.from_bytes(os.urandom(16)) & ~clear | ones:032x}"


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


def check_text(text: object, max_bytes: int, what: str = "message") -> str:
    """`text` if it can be stored and sent: a non-blank str, valid UTF-8 (no lone surrogates), at most
    `max_bytes` bytes. Otherwise `InputError` naming the limit; call it before any LLM call or write."""
    if not isinstance(text, str):
        raise InputError(f"the {what} must be text (str), not {type(text).__name__}")
    if not text.strip():
        raise InputError(f"the {what} is empty; say something")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise InputError(
            f"the {what} is not valid Unicode text (a lone surrogate at position {exc.start}); "
            "decode your input as UTF-8"
        ) from None
    if size > max_bytes:
        raise InputError(
            f"the {what} is {size:,} bytes; the limit is memory.max_message_bytes = {max_bytes:,} bytes"
        )
    return text
