"""API key storage (`ApiKeyStore`): each key reaches one tenant (a user, optionally as one agent).

A key is shown once, at creation (`bk_<id>_<secret>`); the store keeps only its SHA-256 digest, so a copy of
the database lets nobody in. Revoking takes effect at once for every server sharing the store, and keeps the
record for listing. Request counts per key and rate window are kept in the store too, so a limit holds
across any number of servers.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from brain.keys import encode_id

__all__ = [
    "KEY_PREFIX",
    "ApiKey",
    "ApiKeyStore",
    "RateVerdict",
    "digest",
    "issue_key",
    "rate_window",
    "secret_names",
    "verify_then_hit",
    "well_formed",
]

KEY_PREFIX = "bk_"
_MAX_SECRET = 200


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

    @classmethod
    def of(cls, count: int, limit: int, retry_after: int) -> RateVerdict:
        """The verdict on a window's `count`-th request under `limit`."""
        return cls(allowed=count <= limit, count=count, retry_after=retry_after)


def digest(secret: str) -> str:
    """The stored form of a key. Pure."""
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def issue_key(user: str, agent: str | None, name: str) -> tuple[ApiKey, str]:
    """A new key's record and its secret (`bk_<id>_<token>`); `InputError` for an id no key may name."""
    encode_id(user, "user_id")
    if agent is not None:
        encode_id(agent, "agent")
    key = ApiKey(id=secrets.token_hex(8), user=user, agent=agent, name=name, created_at=time.time())
    return key, f"{KEY_PREFIX}{key.id}_{secrets.token_urlsafe(32)}"


def well_formed(secret: str) -> bool:
    """Whether `secret` can be a key at all (checked before any lookup). Pure."""
    return secret.startswith(KEY_PREFIX) and len(secret) <= _MAX_SECRET


def secret_names(secret: str, key: ApiKey) -> bool:
    """Whether `secret` carries `key`'s id: a record filed under the wrong digest never authenticates."""
    return hmac.compare_digest(secret[len(KEY_PREFIX) : len(KEY_PREFIX) + 16], key.id)


def rate_window(now: float, window_seconds: int) -> tuple[int, int]:
    """The fixed window `now` falls in, and the seconds (at least 1) until it ends. Pure."""
    window = int(now // window_seconds)
    return window, max(1, int((window + 1) * window_seconds - now + 0.999))


async def verify_then_hit(
    store: ApiKeyStore, secret: str, limit: int, window_seconds: int
) -> tuple[ApiKey | None, RateVerdict | None]:
    """`ApiKeyStore.verify_counted` as two calls of `store`: `verify`, then `hit` for the key found."""
    key = await store.verify(secret)
    if key is None or not limit:
        return key, None
    return key, await store.hit(key.id, limit, window_seconds)


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

    async def forget(self, user: str) -> int:
        """Delete every key of `user`, records included (a user's erasure): none of them works any more,
        and none names the user. How many there were."""
        ...

    async def hit(self, key_id: str, limit: int, window_seconds: int) -> RateVerdict:
        """Count one request of `key_id` in the current fixed window of `window_seconds`: allowed while the
        count is at most `limit`; `retry_after` is the seconds (at least 1) until the window ends. The key
        need not exist; a malformed id is an `InputError`."""
        ...

    async def verify_counted(
        self, secret: str, limit: int, window_seconds: int
    ) -> tuple[ApiKey | None, RateVerdict | None]:
        """`verify`, then `hit` for the key found when `limit` is set: the key (None as `verify`) and its
        verdict (None when no key or no limit). A request of an unknown key counts nothing."""
        ...
