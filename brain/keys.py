"""Redis key naming for conversations. Pure.

Every key of one conversation shares a hash tag, so multi-key scripts work on Redis Cluster. User and chat
ids are encoded (base64url, or a SHA-256 digest for long ids) so that no id can break a key, match a glob,
or collide with another conversation's keys.
"""

from __future__ import annotations

import base64
import hashlib

from pydantic import BaseModel, ConfigDict

from brain.errors import InputError

__all__ = ["ConversationKeys", "conversation_keys", "encode_id"]

_MAX_INLINE = 96  # ids longer than this (in bytes) are hashed instead of inlined


def encode_id(value: str | bytes, what: str = "id") -> str:
    """A key-safe, collision-free encoding of a user or chat id (`[A-Za-z0-9_-]` only)."""
    if isinstance(value, str):
        raw = value.encode("utf-8", "surrogatepass")
    elif isinstance(value, bytes):
        raw = value
    else:
        raise InputError(f"{what} must be str or bytes, not {type(value).__name__}")
    if not raw:
        raise InputError(f"{what} must not be empty")
    if len(raw) > 65_536:
        raise InputError(f"{what} is {len(raw)} bytes; ids are limited to 64 KiB")
    if len(raw) <= _MAX_INLINE:
        return "b" + base64.urlsafe_b64encode(raw).decode().rstrip("=")
    return "h" + hashlib.sha256(raw).hexdigest()


class ConversationKeys(BaseModel):
    """The keys of one conversation."""

    model_config = ConfigDict(frozen=True)

    base: str

    @property
    def meta(self) -> str:
        """Hash: schema version, summary, summary_upto, counters, last_talk, title."""
        return f"{self.base}:meta"

    @property
    def turns(self) -> str:
        """List of every turn ever appended, oldest first; never trimmed."""
        return f"{self.base}:turns"

    @property
    def ids(self) -> str:
        """Hash: message id -> sequence number (1-based), for idempotent appends."""
        return f"{self.base}:ids"

    @property
    def knowledge(self) -> str:
        """List of knowledge records."""
        return f"{self.base}:knowledge"

    @property
    def hidden(self) -> str:
        """Set of sequence numbers of turns taken back (/pop, /retry): kept, but out of the window."""
        return f"{self.base}:hidden"

    @property
    def all(self) -> tuple[str, str, str, str, str]:
        return (self.meta, self.turns, self.ids, self.knowledge, self.hidden)


def conversation_keys(prefix: str, user_id: str | bytes, chat_id: str | bytes) -> ConversationKeys:
    """Keys of (user_id, chat_id) under `prefix` (e.g. `brain`), hash-tagged per conversation."""
    user = encode_id(user_id, "user_id")
    chat = encode_id(chat_id, "chat_id")
    return ConversationKeys(base=f"{prefix}:{{{user}.{chat}}}")
