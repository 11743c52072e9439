"""API key storage (`ApiKeyStore`): each key reaches one tenant (a user, optionally as one agent).

A key is shown once, at creation (`bk_<id>_<secret>`); the store keeps only its SHA-256 digest, so a copy of
the database lets nobody in. Revoking takes effect at once for every server sharing the store, and keeps the
record for listing. Request counts per key and rate window are kept in the store too, so a limit holds
across any number of servers.
"""

from __future__ import annotations

import hashlib
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["KEY_PREFIX", "ApiKey", "ApiKeyStore", "RateVerdict", "digest"]

KEY_PREFIX = "bk_"


class ApiKey(BaseModel):
    """A key's record: whose memory it reaches; never the secret."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[0-9a-f]{16}$")
    user: str = Field(min_length=1)
    agent: str | None = None
    name: str = ""
    created_at: float
    revoked_at: float | None = None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


class RateVerdict(BaseModel):
    """Whether a request is within its key's limit, and when the window ends."""

    model_config = ConfigDict(frozen=True)

    allowed: bool
    count: int
    retry_after: int


def digest(secret: str) -> str:
    """The stored form of a key. Pure."""
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


@runtime_checkable
class ApiKeyStore(Protocol):
    """The service's API keys. Every method raises `StoreError` when the store cannot answer."""

    async def create(self, user: str, *, agent: str | None = None, name: str = "") -> tuple[ApiKey, str]:
        """A new key for `user` (validated like every user id, `InputError`): its record and the secret,
        shown once."""
        ...

    async def verify(self, secret: str) -> ApiKey | None:
        """The active key `secret` is, or None (unknown, malformed or revoked)."""
        ...

    async def list(self, user: str | None = None) -> list[ApiKey]:
        """Every key (of `user`, when given), oldest first, revoked ones included."""
        ...

    async def revoke(self, key_id: str) -> ApiKey:
        """Revoke a key at once. `NotFoundError` for an unknown id; revoking twice keeps the first
        revocation's time."""
        ...

    async def hit(self, key_id: str, limit: int, window_seconds: int) -> RateVerdict:
        """Count one request of `key_id` in the current fixed window of `window_seconds`: allowed while the
        count is at most `limit`; `retry_after` is the seconds (at least 1) until the window ends. The key
        need not exist; a malformed id is an `InputError`."""
        ...
