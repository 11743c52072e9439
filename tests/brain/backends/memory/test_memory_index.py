"""The in-memory index store passes the index store conformance suite."""

import pytest

from brain.backends.memory import MemoryBackend
from brain.testing.conformance.index import IndexStoreConformance


class TestMemoryIndex(IndexStoreConformance):
    @pytest.fixture
    def backend(self) -> MemoryBackend:
        return MemoryBackend(prefix="t")
