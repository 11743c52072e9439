"""The served app over real Redis and a scripted model: an HTTP client per tenant."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx2
import pytest
import redis.asyncio as aioredis

from brain.backends.redis import RedisBackend
from brain.backends.redis.api_keys import RedisApiKeyStore
from brain.backends.redis.client import TranslatingRedis
from brain.llm.scripted import ScriptedLLM
from brain.runtime import local_runtime
from brain.settings import Settings
from brain.storage.keys import ApiKeyStore
from roles.http import create_app
from tests.support.serving import assistant_of, serving, to_a_fresh_window


@dataclass
class Served:
    url: str
    llm: ScriptedLLM
    redis: aioredis.Redis
    keys: ApiKeyStore
    settings: Settings

    async def key(self, user: str, agent: str | None = None) -> str:
        _, secret = await self.keys.create(user, agent=agent)
        return secret

    def client(self, secret: str | None = None) -> httpx2.AsyncClient:
        headers = {"Authorization": f"Bearer {secret}"} if secret else {}
        return httpx2.AsyncClient(base_url=self.url, headers=headers, timeout=30)


def settings_for(llm: dict[str, Any] | None = None, **serve: Any) -> Settings:
    return Settings.model_validate(
        {
            "llm": llm or {},
            "redis": {"key_prefix": "svc"},
            "memory": {"facts": {"in_process_worker": False}},
            "serve": {"rate_limit": 0, "auth_failure_limit": 0, **serve},
        }
    )


@contextlib.asynccontextmanager
async def served_with(llm: Any, settings: Settings, redis_url: str) -> AsyncIterator[Served]:
    """The app answering with `llm` over real Redis (emptied first), served as `brain serve` does."""
    client = TranslatingRedis.from_url(redis_url)
    await client.flushdb()
    runtime = local_runtime(llm, settings=settings, backend=RedisBackend.for_settings(client, settings))
    async with serving(create_app(settings, assistant_of(runtime)), settings.serve) as url:
        if settings.serve.rate_limit or settings.serve.auth_failure_limit:
            await asyncio.sleep(to_a_fresh_window(settings.serve.rate_window_seconds))
        yield Served(url, llm, client, RedisApiKeyStore(client, prefix="svc"), settings)
    await client.aclose()


@pytest.fixture
async def served(redis_server_url: str, request: pytest.FixtureRequest) -> AsyncIterator[Served]:
    marker = request.node.get_closest_marker("serve")
    llm = ScriptedLLM()
    settings = settings_for(**(marker.kwargs if marker else {}))
    async with served_with(llm, settings, redis_server_url) as served:
        yield served
    llm.assert_consumed()
