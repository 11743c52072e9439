"""The in-memory backend passes the fact queue conformance suite."""

from __future__ import annotations

import pytest

from brain.backends.memory import MemoryBackend
from brain.testing.conformance.queue import FactQueueConformance


class TestMemoryFactQueue(FactQueueConformance):
    @pytest.fixture
    def backend(self) -> MemoryBackend:
        return MemoryBackend(prefix="t")
