"""The in-memory backend passes the usage storage conformance suite."""

from __future__ import annotations

import pytest

from brain.backends.memory import MemoryBackend
from brain.testing.conformance.usage import UsageStoreConformance


class TestMemoryUsage(UsageStoreConformance):
    @pytest.fixture
    def backend(self) -> MemoryBackend:
        return MemoryBackend(prefix="t")
