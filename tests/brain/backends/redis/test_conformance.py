"""The Redis backend passes every conformance suite, on redis-server and on the embedded Valkey."""

from __future__ import annotations

import uuid

import pytest
import redis.asyncio as aioredis

from brain.backends.redis import RedisBackend
from brain.memory.tiers import Tiers
from brain.storage import ProcedureStore
from brain.testing.conformance.block_sessions import BlockSessionStoreConformance
from brain.testing.conformance.blocks import CoreBlockStoreConformance
from brain.testing.conformance.conversation import ConversationStoreConformance
from brain.testing.conformance.erasure import ErasureStoreConformance
from brain.testing.conformance.fact_writes import FactWriteConformance
from brain.testing.conformance.facts import FactStoreConformance
from brain.testing.conformance.graph import GraphStoreConformance
from brain.testing.conformance.index import IndexStoreConformance
from brain.testing.conformance.keys import ApiKeyStoreConformance
from brain.testing.conformance.procedures import ProcedureStoreConformance
from brain.testing.conformance.queue import FactQueueConformance
from brain.testing.conformance.retention import TurnRetentionConformance
from brain.testing.conformance.usage import UsageStoreConformance


class OnRedis:
    """A backend with a prefix of its own over each real server (emptied for the test)."""

    @pytest.fixture
    def backend(self, redis_client: aioredis.Redis) -> RedisBackend:
        return RedisBackend(redis_client, prefix=f"c{uuid.uuid4().hex[:8]}")


class TestConversations(OnRedis, ConversationStoreConformance):
    pass


class TestRetention(OnRedis, TurnRetentionConformance):
    pass


class TestCoreBlocks(OnRedis, CoreBlockStoreConformance):
    pass


class TestBlockSessions(OnRedis, BlockSessionStoreConformance):
    pass


class TestFacts(OnRedis, FactStoreConformance):
    pass


class TestFactWrites(OnRedis, FactWriteConformance):
    pass


class TestGraph(OnRedis, GraphStoreConformance):
    pass


class TestIndex(OnRedis, IndexStoreConformance):
    pass


class TestApiKeys(OnRedis, ApiKeyStoreConformance):
    pass


class TestQueue(OnRedis, FactQueueConformance):
    pass


class TestUsage(OnRedis, UsageStoreConformance):
    pass


class TestProcedures(ProcedureStoreConformance):
    @pytest.fixture
    def procedures(self, redis_client: aioredis.Redis) -> ProcedureStore:
        return Tiers(RedisBackend(redis_client, prefix=f"p{uuid.uuid4().hex[:8]}")).procedures


class TestErasure(OnRedis, ErasureStoreConformance):
    pass
