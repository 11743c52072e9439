"""The in-memory backend keeps the erasure fence as Redis does."""

from __future__ import annotations

import pytest

from brain.backends.memory import MemoryBackend
from brain.testing.conformance.erasure import ErasureStoreConformance


class TestMemoryErasure(ErasureStoreConformance):
    @pytest.fixture
    def backend(self) -> MemoryBackend:
        return MemoryBackend(prefix="t")
