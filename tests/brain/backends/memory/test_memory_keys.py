"""The in-memory backend passes the API key storage conformance suite."""

from __future__ import annotations

import pytest

from brain.backends.memory import MemoryBackend
from brain.testing.conformance.keys import ApiKeyStoreConformance


class TestMemoryApiKeys(ApiKeyStoreConformance):
    @pytest.fixture
    def backend(self) -> MemoryBackend:
        return MemoryBackend(prefix="t")
