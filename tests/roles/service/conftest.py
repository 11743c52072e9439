"""The served app over real Redis and a scripted model: an HTTP client per tenant."""

from __future__ import annotations

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
from tests.support.serving import assistant_of, serving


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


def settings_for(**serve: Any) -> Settings:
    return Settings.model_validate(
        {
            "redis": {"key_prefix": "svc"},
            "memory": {"facts": {"in_process_worker": False}},
            "serve": {"rate_limit": 0, "auth_failure_limit": 0, **serve},
        }
    )


@pytest.fixture
async def served(redis_server_url: str, request: pytest.FixtureRequest) -> AsyncIterator[Served]:
    marker = request.node.get_closest_marker("serve")
    settings = settings_for(**(marker.kwargs if marker else {}))
    client = TranslatingRedis.from_url(redis_server_url)
    await client.flushdb()
    llm = ScriptedLLM()
    runtime = local_runtime(llm, settings=settings, backend=RedisBackend.for_settings(client, settings))
    app = create_app(settings, assistant_of(runtime))
    async with serving(app, settings.serve) as url:
        yield Served(url, llm, client, RedisApiKeyStore(client, prefix="svc"), settings)
    await client.aclose()
    llm.assert_consumed()
