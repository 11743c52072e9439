"""The in-memory graph store passes the graph store conformance suite, and leaves no emptied names behind."""

import pytest

from brain.backends.memory import MemoryBackend
from brain.keys import facts_base, graph_base
from brain.storage import AuditEntry, Relation
from brain.testing.conformance.graph import GraphStoreConformance


class TestMemoryGraph(GraphStoreConformance):
    @pytest.fixture
    def backend(self) -> MemoryBackend:
        return MemoryBackend(prefix="t")


async def test_emptied_parts_leave_no_names() -> None:
    backend = MemoryBackend(prefix="t")
    relation = Relation(source="a", relation="knows", target="b")
    await backend.graph.relate("u", relation, AuditEntry(event="ADD"))
    base = graph_base("t", "u")
    kept = [f"{facts_base('t', 'u')}:audit", f"{base}:adj:a", f"{base}:adj:b", f"{base}:rel"]
    assert await backend.user_leftovers("u") == sorted([*kept, f"{base}:cur"])
    await backend.graph.retire("u", relation.id, 1.0, None, AuditEntry(event="DELETE"))
    assert await backend.user_leftovers("u") == sorted([*kept, f"{base}:rstate"])
    await backend.graph.restore("u", relation.id, AuditEntry(event="ROLLBACK"))
    assert await backend.user_leftovers("u") == sorted([*kept, f"{base}:cur"])
