"""How the fact queue's data is stored (`brain.backends.redis.queue`): stream entries, dead letters (JSON,
ids base64 in it), overflow records, and the queue's counters at a glance. Pure."""

from __future__ import annotations

import base64
import json
from typing import Any

from pydantic import BaseModel, ConfigDict

from brain.errors import StoreError
from brain.keys import raw_id, readable_id
from brain.search.filters import text
from brain.storage.queue import DeadLetter, QueueEntry

__all__ = [
    "QueueCounters",
    "entries",
    "letter",
    "names",
    "names_letter",
    "record",
    "waiter",
    "waiting",
    "waiting_tail",
]


class QueueCounters(BaseModel):
    """The fact queue at a glance (one deployment): what waits, and how often its bounds acted."""

    model_config = ConfigDict(frozen=True)

    backlog: int  # entries in the stream, read or not
    pending: int  # of those, read by a worker and not acknowledged yet
    overflow: int  # chats waiting outside the full stream, one record each
    dead: int  # dead letters
    deferred: int  # pushes coalesced into the overflow (nothing lost)
    dropped: int  # pushes refused, stream and overflow full (the chat waits for its next turn)
    dead_trimmed: int  # dead letters removed past the cap, oldest first
    max_len: int
    dead_letters_max: int


def _fields(fields: dict[Any, Any]) -> dict[str, Any]:
    return {(k.decode() if isinstance(k, bytes) else k): v for k, v in fields.items()}


def names(fields: dict[Any, Any], user: bytes, chat: bytes | None) -> bool:
    data = {k: raw_id(v) for k, v in _fields(fields).items()}
    return data.get("user") == user and (chat is None or data.get("chat") == chat)


def names_letter(letter: DeadLetter, user: bytes, chat: bytes | None) -> bool:
    return raw_id(letter.user_id) == user and (chat is None or raw_id(letter.chat_id) == chat)


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def waiting(user: bytes, chat: bytes, upto: int) -> str:
    """A chat's record in the overflow: "<upto> <user b64> <chat b64>" (Lua reads the `upto`). Pure."""
    return f"{upto}{waiting_tail(user, chat)}"


def waiting_tail(user: bytes, chat: bytes) -> str:
    """A chat's overflow record after its `upto` (a script that learns the `upto` itself joins them). Pure."""
    return f" {_b64(user)} {_b64(chat)}"


def waiter(record: Any) -> tuple[bytes, bytes]:
    """The user and chat of an overflow record; `StoreError` when it cannot be read. Pure."""
    try:
        _, user, chat = text(record).split(" ")
        return base64.b64decode(user, validate=True), base64.b64decode(chat, validate=True)
    except ValueError:
        raise StoreError("unreadable record in the fact queue's overflow") from None


def record(letter: DeadLetter) -> str:
    """A dead letter as stored: JSON, the ids in base64 (they may be any bytes)."""
    data = letter.model_dump(exclude={"id", "user_id", "chat_id"})
    data |= {"user": _b64(raw_id(letter.user_id)), "chat": _b64(raw_id(letter.chat_id))}
    return json.dumps(data, ensure_ascii=False)


def letter(dead_id: str, raw: Any) -> DeadLetter:
    """A stored dead letter; `StoreError` when it cannot be read."""
    try:
        data = json.loads(raw)
        user, chat = (readable_id(base64.b64decode(data.pop(k), validate=True)) for k in ("user", "chat"))
        return DeadLetter.model_validate({**data, "id": dead_id, "user_id": user, "chat_id": chat})
    except (ValueError, TypeError, KeyError) as exc:
        raise StoreError(f"unreadable dead letter {dead_id!r}: {type(exc).__name__}") from None


def entries(raw: list[Any]) -> list[QueueEntry]:
    out = []
    for entry_id, fields in raw:
        if not fields:  # deleted meanwhile
            continue
        data = _fields(fields)
        eid = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
        out.append(
            QueueEntry(
                id=eid,
                user_id=readable_id(data["user"]),
                chat_id=readable_id(data["chat"]),
                upto=int(data["upto"]),
            )
        )
    return out
