"""The in-memory backend passes the fact queue conformance suite."""

from __future__ import annotations

import pytest

from brain.backends.memory import MemoryBackend
from brain.backends.memory.queue import MemoryFactQueue
from brain.testing.conformance.queue import FactQueueConformance


class TestMemoryFactQueue(FactQueueConformance):
    @pytest.fixture
    def backend(self) -> MemoryBackend:
        backend = MemoryBackend(prefix="t")
        if not isinstance(backend.queue, MemoryFactQueue) or backend.queue._space is None:
            backend.queue = MemoryFactQueue(backend.space)  # checks the erasure record, as on Redis
        return backend
