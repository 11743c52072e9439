"""The in-memory backend passes the block storage conformance suites."""

from __future__ import annotations

import pytest

from brain.backends.memory import MemoryBackend
from brain.testing.conformance.block_sessions import BlockSessionStoreConformance
from brain.testing.conformance.blocks import CoreBlockStoreConformance


class TestMemoryCoreBlocks(CoreBlockStoreConformance):
    @pytest.fixture
    def backend(self) -> MemoryBackend:
        return MemoryBackend(prefix="t")


class TestMemoryBlockSessions(BlockSessionStoreConformance):
    @pytest.fixture
    def backend(self) -> MemoryBackend:
        return MemoryBackend(prefix="t")
