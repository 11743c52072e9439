"""Where memory lives: the Redis connection (or embedded Valkey), the conversation store Protocol, its
Redis and in-memory implementations and their Lua scripts."""

from brain.store.connection import RedisClient, RedisConnection
from brain.store.memory_store import InMemoryStore
from brain.store.protocol import Conversation, MemoryStore, StoredState, Turn, WriteBatch, WriteResult
from brain.store.redis_store import RedisMemoryStore

__all__ = [
    "Conversation",
    "InMemoryStore",
    "MemoryStore",
    "RedisClient",
    "RedisConnection",
    "RedisMemoryStore",
    "StoredState",
    "Turn",
    "WriteBatch",
    "WriteResult",
]
