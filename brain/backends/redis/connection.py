"""The process's Redis connection: the client (or the embedded Valkey and a client for it), health-checked
at start."""

from __future__ import annotations

import asyncio
from types import TracebackType

from redis.asyncio.cluster import RedisCluster

from brain.backends.redis.client import RedisClient, connect
from brain.backends.redis.embedded import EmbeddedValkey
from brain.errors import StoreError, UnreachableError
from brain.logs import redact
from brain.settings import Settings, mask_url

__all__ = ["RedisConnection"]


class RedisConnection:
    """Owns the process's Redis client (and the embedded server when it started one)."""

    def __init__(
        self, client: RedisClient, url: str, embedded: EmbeddedValkey | None = None, *, shown: str = ""
    ) -> None:
        self.client = client
        self.masked_url = shown or mask_url(url)  # as every message shows it (the configured URL, masked)
        self.embedded = embedded

    @classmethod
    async def open(cls, settings: Settings) -> RedisConnection:
        """Connect to `redis.url`, or to the embedded Valkey under `home`; ping and check the version. On a
        Cluster whose URL lists several seed nodes, any one that answers will do.

        Raises `StoreError` naming the URL as configured (every seed node, password masked) when the server
        is not usable: `UnreachableError` when it (or every seed node) does not answer.
        """
        embedded = None
        if settings.redis.url is None:
            embedded = EmbeddedValkey(settings.home)
            url = await asyncio.to_thread(embedded.start)
        else:
            url = settings.redis.url.get_secret_value()
        shown = mask_url(url)  # the URL as configured (valkey:// included), password masked, in every message
        if url.lower().startswith("valkey"):
            url = "redis" + url[len("valkey") :]
        try:
            client = connect(url, settings.redis, cluster=settings.redis.cluster)
        except StoreError as exc:
            await asyncio.to_thread(_stop, embedded)
            raise StoreError(f"bad Redis URL {shown}: {redact(str(exc))}") from exc
        connection = cls(client, url, embedded, shown=shown)
        try:
            await connection.check()
        except StoreError:
            await connection.aclose()
            raise
        return connection

    async def check(self) -> str:
        """Ping and return the server version; `StoreError` when unreachable or older than 7."""
        try:
            await self.client.ping()
            info = await self.client.info("server")
        except StoreError as exc:
            raise UnreachableError(f"cannot reach Redis at {self.masked_url}: {exc}") from exc
        if isinstance(self.client, RedisCluster):
            info = next(iter(info.values())) if info and isinstance(next(iter(info.values())), dict) else info
        version = str(info.get("valkey_version") or info.get("redis_version") or "0")
        major = int(version.split(".")[0]) if version.split(".")[0].isdigit() else 0
        if major < 7:
            raise StoreError(
                f"Redis at {self.masked_url} is version {version}; brain needs Redis >= 7 or Valkey"
            )
        return version

    async def aclose(self) -> None:
        """Close the pool, then stop the embedded server if this process started it."""
        try:
            await self.client.aclose()
        finally:
            await asyncio.to_thread(_stop, self.embedded)

    async def __aenter__(self) -> RedisConnection:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


def _stop(embedded: EmbeddedValkey | None) -> None:
    if embedded is not None:
        embedded.stop()
