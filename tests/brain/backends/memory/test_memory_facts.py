"""The in-memory fact store passes the fact store conformance suite, and leaves no emptied names behind."""

import time

import pytest

from brain.backends.memory import MemoryBackend
from brain.keys import facts_base
from brain.storage import AuditEntry, Fact
from brain.storage.facts import fact_hash
from brain.testing.conformance.fact_writes import FactWriteConformance
from brain.testing.conformance.facts import FactStoreConformance


class TestMemoryFacts(FactStoreConformance):
    @pytest.fixture
    def backend(self) -> MemoryBackend:
        return MemoryBackend(prefix="t")


class TestMemoryFactWrites(FactWriteConformance):
    @pytest.fixture
    def backend(self) -> MemoryBackend:
        return MemoryBackend(prefix="t")


async def test_emptied_parts_leave_no_names() -> None:
    backend = MemoryBackend(prefix="t")
    fact = Fact(text="Has a cat", hash=fact_hash("Has a cat"))
    base = facts_base("t", "u")
    await backend.facts.add("u", fact, AuditEntry(event="ADD"))
    kept = [f"{base}:audit", f"{base}:facts", f"{base}:gen"]
    assert await backend.user_leftovers("u") == [*kept, f"{base}:hash"]
    await backend.facts.retire("u", fact.id, time.time(), AuditEntry(event="DELETE"))
    assert await backend.user_leftovers("u") == [*kept, f"{base}:state"]
    await backend.facts.restore("u", fact.id, AuditEntry(event="ROLLBACK"))
    assert await backend.user_leftovers("u") == [*kept, f"{base}:hash"]
