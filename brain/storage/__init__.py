"""Storage seams: one small async protocol per memory kind, with its records, and `Backend`, which bundles
one store of each. Implementations live in `brain.backends` (Redis/Valkey, and memory for tests); the
conformance suites every implementation passes are in `brain.testing.conformance`."""

from brain.storage.backend import Backend
from brain.storage.blocks import Block, BlockLimitError, BlockSessionStore, CoreBlockStore, Record
from brain.storage.conversation import (
    Conversation,
    ConversationMeta,
    ConversationStore,
    MemoryStore,
    StoredState,
    SummaryStore,
    Turn,
    WriteBatch,
    WriteResult,
)
from brain.storage.facts import AuditEntry, AuditEvent, Fact, FactStore
from brain.storage.fence import ErasureStore, Ticket
from brain.storage.graph import Entity, EntityWrite, GraphStore, Relation
from brain.storage.index import Hit, IndexedDoc, IndexEntry, IndexStore, Ranking
from brain.storage.keys import ApiKey, ApiKeyStore, RateVerdict
from brain.storage.procedures import Procedure, ProcedureStore
from brain.storage.queue import FactQueue, QueueEntry
from brain.storage.usage import UsageRow, UsageStore

__all__ = [
    "ApiKey",
    "ApiKeyStore",
    "AuditEntry",
    "AuditEvent",
    "Backend",
    "Block",
    "BlockLimitError",
    "BlockSessionStore",
    "Conversation",
    "ConversationMeta",
    "ConversationStore",
    "CoreBlockStore",
    "Entity",
    "EntityWrite",
    "ErasureStore",
    "Fact",
    "FactQueue",
    "FactStore",
    "GraphStore",
    "Hit",
    "IndexEntry",
    "IndexStore",
    "IndexedDoc",
    "MemoryStore",
    "Procedure",
    "ProcedureStore",
    "QueueEntry",
    "Ranking",
    "RateVerdict",
    "Record",
    "Relation",
    "StoredState",
    "SummaryStore",
    "Ticket",
    "Turn",
    "UsageRow",
    "UsageStore",
    "WriteBatch",
    "WriteResult",
]
