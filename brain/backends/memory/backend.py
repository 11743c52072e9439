"""`MemoryBackend`: every memory kind in this process's memory, with the Redis backend's semantics (the
conformance suites in `brain.testing.conformance` hold both to them). For tests and tiny embedded uses: it
forgets everything when the process ends, and nothing falls back to it silently."""

from __future__ import annotations

from brain.backends.memory.api_keys import MemoryApiKeyStore
from brain.backends.memory.audit import AuditLog
from brain.backends.memory.blocks import MemoryBlockSession, MemoryCoreBlockStore
from brain.backends.memory.conversation import InMemoryStore
from brain.backends.memory.erasure import MemoryErasureStore
from brain.backends.memory.facts import MemoryFactStore
from brain.backends.memory.graph import MemoryGraphStore
from brain.backends.memory.index import MemoryIndexStore
from brain.backends.memory.keyspace import Keyspace
from brain.backends.memory.queue import MemoryFactQueue
from brain.backends.memory.usage import MemoryUsageStore
from brain.keys import user_patterns

__all__ = ["MemoryBackend"]


class MemoryBackend:
    """A `Backend` in memory: one `Keyspace` named as Redis keys are, shared by every store."""

    name = "memory"

    def __init__(self, *, prefix: str = "brain", max_message_bytes: int = 1_048_576) -> None:
        self.prefix = prefix
        self.space = Keyspace()
        audit = AuditLog(self.space, prefix)
        self.conversations = InMemoryStore(max_message_bytes, space=self.space, prefix=prefix)
        self.core = MemoryCoreBlockStore(self.space, prefix)
        self.facts = MemoryFactStore(self.space, prefix, audit)
        self.graph = MemoryGraphStore(self.space, prefix, audit)
        self.queue = MemoryFactQueue(self.space)
        self.api_keys = MemoryApiKeyStore(prefix)
        self.usage = MemoryUsageStore(self.space, prefix)
        self.erasure = MemoryErasureStore(self.space)

    def index(self, base: str) -> MemoryIndexStore:
        return MemoryIndexStore(self.space, base)

    def block_session(self, user_id: str | bytes, chat_id: str | bytes) -> MemoryBlockSession:
        return MemoryBlockSession(self.space, self.prefix, user_id, chat_id)

    async def ping(self) -> None:
        return None

    async def user_leftovers(self, user_id: str | bytes) -> list[str]:
        return self.space.matching(user_patterns(self.prefix, user_id))

    async def compact(self) -> bool:
        return False  # nothing on disk

    async def purge(self, names: list[str]) -> int:
        return self.space.delete(*names)
