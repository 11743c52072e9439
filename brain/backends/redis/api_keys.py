"""`RedisApiKeyStore`: the service's API keys in Redis (`brain.storage.keys`), all under one hash tag
(`brain.keys.api_keys_base`): records by id, digests by id, records by digest. Rate windows are counters
with an expiry (`brain.keys.rate_key`), so a limit holds across any number of servers. On a standalone Redis
a request's key lookup and its count are one script (one round trip); on a Cluster they are two (the
counter is in another slot)."""

from __future__ import annotations

import re
import time

from pydantic import ValidationError
from redis.asyncio.cluster import RedisCluster

from brain.backends.redis.client import RedisClient
from brain.errors import NotFoundError, StoreError
from brain.keys import api_keys_base, rate_key
from brain.storage.keys import (
    KEY_PREFIX,
    ApiKey,
    RateVerdict,
    digest,
    issue_key,
    rate_window,
    secret_names,
    verify_then_hit,
    well_formed,
)
from brain.telemetry import TracedScript

__all__ = ["RedisApiKeyStore"]

_KEY_ID = re.compile(r"[0-9a-f]{16}")

# KEYS: the records by digest, the rate counter of the key id the secret names. ARGV: the digest, that id
# as the record spells it (`"id":"<id>"`), the counter's expiry. A record of another id counts nothing.
_VERIFY_COUNTED = """
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return false end
if not string.find(raw, ARGV[2], 1, true) then return {raw} end
local count = redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[3])
return {raw, count}
"""


class RedisApiKeyStore:
    """An `ApiKeyStore`: keys in Redis under `brain.keys.api_keys_base` (the client is injected; the caller
    owns it). The digest maps to the key's record (one HGET per request)."""

    def __init__(self, client: RedisClient, *, prefix: str = "brain") -> None:
        self._client = client
        self.prefix = prefix
        base = api_keys_base(prefix)
        self._records, self._digests, self._by_digest = f"{base}:records", f"{base}:digests", f"{base}:auth"
        self._counted = (
            None
            if isinstance(client, RedisCluster)
            else TracedScript(client.register_script(_VERIFY_COUNTED), "apikeys.verify_counted")
        )

    async def create(self, user: str, *, agent: str | None = None, name: str = "") -> tuple[ApiKey, str]:
        """A new key for `user` (validated like every user id): its record and the secret, shown once."""
        key, secret = issue_key(user, agent, name)
        hashed = digest(secret)
        async with self._client.pipeline(transaction=True) as pipe:
            pipe.hset(self._records, key.id, key.model_dump_json())
            pipe.hset(self._digests, key.id, hashed)
            pipe.hset(self._by_digest, hashed, key.model_dump_json())
            await pipe.execute()
        return key, secret

    async def verify(self, secret: str) -> ApiKey | None:
        """The active key `secret` is, or None (unknown, malformed or revoked). One round trip."""
        if not well_formed(secret):
            return None
        raw = await self._client.hget(self._by_digest, digest(secret))
        if raw is None:
            return None
        key = _record(raw)
        return key if secret_names(secret, key) else None

    async def list(self, user: str | None = None) -> list[ApiKey]:
        """Every key (of `user`, when given), oldest first, revoked ones included."""
        raw = await self._client.hvals(self._records)
        keys = sorted((_record(r) for r in raw), key=lambda k: (k.created_at, k.id))
        return [k for k in keys if user is None or k.user == user]

    async def revoke(self, key_id: str) -> ApiKey:
        """Revoke a key at once, on every server. `NotFoundError` for an unknown id; revoking twice keeps
        the first revocation's time."""
        async with self._client.pipeline(transaction=False) as pipe:
            pipe.hget(self._records, key_id)
            pipe.hget(self._digests, key_id)
            raw, hashed = await pipe.execute()
        if raw is None:
            raise NotFoundError(f"there is no API key {key_id!r}")
        key = _record(raw)
        if key.active:
            key = key.model_copy(update={"revoked_at": time.time()})
        async with self._client.pipeline(transaction=True) as pipe:
            if hashed is not None:
                pipe.hdel(self._by_digest, hashed)
            pipe.hset(self._records, key_id, key.model_dump_json())
            await pipe.execute()
        return key

    async def forget(self, user: str) -> int:
        """Delete every key of `user` (records included): they stop working at once, on every server."""
        gone = [k.id for k in await self.list(user)]
        if not gone:
            return 0
        hashes = await self._client.hmget(self._digests, gone)
        async with self._client.pipeline(transaction=True) as pipe:
            pipe.hdel(self._records, *gone)
            pipe.hdel(self._digests, *gone)
            if any(hashes):
                pipe.hdel(self._by_digest, *[h for h in hashes if h])
            await pipe.execute()
        return len(gone)

    async def hit(self, key_id: str, limit: int, window_seconds: int) -> RateVerdict:
        """Count one request of `key_id` in the current window (fixed windows, shared by every server)."""
        counter, retry = self._counter(key_id, window_seconds)
        async with self._client.pipeline(transaction=False) as pipe:
            pipe.incr(counter)
            pipe.expire(counter, window_seconds * 2)
            count, _ = await pipe.execute()
        return RateVerdict.of(int(count), limit, retry)

    def _counter(self, key_id: str, window_seconds: int) -> tuple[str, int]:
        """The rate counter of `key_id`'s current window, and the seconds until the window ends."""
        window, retry = rate_window(time.time(), window_seconds)
        return rate_key(self.prefix, key_id, window), retry

    async def verify_counted(
        self, secret: str, limit: int, window_seconds: int
    ) -> tuple[ApiKey | None, RateVerdict | None]:
        """`verify` and, for the key found, `hit`: one round trip on a standalone Redis."""
        claimed = secret[len(KEY_PREFIX) : len(KEY_PREFIX) + 16]
        if self._counted is None or not limit or not well_formed(secret) or not _KEY_ID.fullmatch(claimed):
            return await verify_then_hit(self, secret, limit, window_seconds)
        counter, retry = self._counter(claimed, window_seconds)
        found = await self._counted(
            keys=[self._by_digest, counter], args=[digest(secret), f'"id":"{claimed}"', window_seconds * 2]
        )
        if not found:
            return None, None
        key = _record(found[0])
        if not secret_names(secret, key) or len(found) < 2:
            return None, None
        return key, RateVerdict.of(int(found[1]), limit, retry)


def _record(raw: bytes | str) -> ApiKey:
    try:
        return ApiKey.model_validate_json(raw)
    except ValidationError as exc:
        raise StoreError("a stored API key record is unreadable") from exc
