"""A runtime on a real, emptied Redis with a scripted model, for the framework adapters' tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from brain.backends.redis.client import connect
from brain.runtime import Runtime
from brain.settings import RedisSettings
from brain.testing import ScriptedLLM
from tests.support.runtime import make_runtime


@pytest.fixture
async def runtime(redis_url: str) -> AsyncIterator[Runtime]:
    client = connect(redis_url, RedisSettings())
    yield make_runtime(ScriptedLLM(), client=client, prefix="it")
    await client.aclose()
