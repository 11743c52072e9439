"""The in-memory reference backend (`MemoryBackend`): for tests and tiny embedded uses."""

from brain.backends.memory.backend import MemoryBackend
from brain.backends.memory.conversation import InMemoryStore

__all__ = ["InMemoryStore", "MemoryBackend"]
