"""`MemoryApiKeyStore`: the service's API keys in this process, as the Redis store keeps them (records by
id, active ids by secret digest, request counters per key and fixed window). Keys are nobody's memory, so
they live in the store, not in the keyspace that erasure scans."""

from __future__ import annotations

import time

from brain.errors import NotFoundError
from brain.keys import rate_key
from brain.storage.keys import (
    ApiKey,
    RateVerdict,
    digest,
    issue_key,
    rate_window,
    secret_names,
    verify_then_hit,
    well_formed,
)

__all__ = ["MemoryApiKeyStore"]


class MemoryApiKeyStore:
    """An `ApiKeyStore` in memory; `prefix` names its rate counters as Redis does."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self._records: dict[str, ApiKey] = {}
        self._digests: dict[str, str] = {}  # key id -> digest of its secret
        self._active: dict[str, str] = {}  # digest -> id, for active keys only
        self._counters: dict[str, tuple[int, float]] = {}  # rate key -> (count, expiry)

    async def create(self, user: str, *, agent: str | None = None, name: str = "") -> tuple[ApiKey, str]:
        key, secret = issue_key(user, agent, name)
        hashed = digest(secret)
        self._records[key.id] = key
        self._digests[key.id] = hashed
        self._active[hashed] = key.id
        return key, secret

    async def verify(self, secret: str) -> ApiKey | None:
        if not well_formed(secret):
            return None
        key_id = self._active.get(digest(secret))
        if key_id is None:
            return None
        key = self._records[key_id]
        return key if secret_names(secret, key) else None

    async def list(self, user: str | None = None) -> list[ApiKey]:
        keys = sorted(self._records.values(), key=lambda k: (k.created_at, k.id))
        return [k for k in keys if user is None or k.user == user]

    async def revoke(self, key_id: str) -> ApiKey:
        key = self._records.get(key_id)
        if key is None:
            raise NotFoundError(f"there is no API key {key_id!r}")
        if key.active:
            key = self._records[key_id] = key.model_copy(update={"revoked_at": time.time()})
        self._active.pop(self._digests[key_id], None)
        return key

    async def forget(self, user: str) -> int:
        gone = [k.id for k in self._records.values() if k.user == user]
        for key_id in gone:
            del self._records[key_id]
            self._active.pop(self._digests.pop(key_id), None)
        return len(gone)

    async def verify_counted(
        self, secret: str, limit: int, window_seconds: int
    ) -> tuple[ApiKey | None, RateVerdict | None]:
        return await verify_then_hit(self, secret, limit, window_seconds)

    async def hit(self, key_id: str, limit: int, window_seconds: int) -> RateVerdict:
        now = time.time()
        window, retry = rate_window(now, window_seconds)
        counter = rate_key(self.prefix, key_id, window)
        # Counters expire two windows after their last hit, as the Redis ones do.
        self._counters = {name: held for name, held in self._counters.items() if held[1] > now}
        count = self._counters.get(counter, (0, 0.0))[0] + 1
        self._counters[counter] = (count, now + window_seconds * 2)
        return RateVerdict.of(count, limit, retry)
