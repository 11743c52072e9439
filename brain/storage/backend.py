"""`Backend`: one store of every memory kind, over one database (Redis or Valkey, or memory for tests).

Built once per process at the edge (`brain.runtime`), shared by every call; it holds no per-call state.
Whoever opens a backend closes it.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from brain.storage.blocks import BlockSessionStore, CoreBlockStore
from brain.storage.conversation import ConversationStore
from brain.storage.facts import FactStore
from brain.storage.fence import ErasureStore
from brain.storage.graph import GraphStore
from brain.storage.index import IndexStore
from brain.storage.keys import ApiKeyStore
from brain.storage.queue import FactQueue
from brain.storage.usage import UsageStore

__all__ = ["Backend"]


@runtime_checkable
class Backend(Protocol):
    """Every memory kind's store. Index namespaces and block sessions are named with `brain.keys`."""

    @property
    def prefix(self) -> str:
        """The first part of every name it stores (`redis.key_prefix`)."""
        ...

    @property
    def name(self) -> str:
        """What it is, for messages: "redis://host:6379/0" (password masked), "memory"."""
        ...

    @property
    def conversations(self) -> ConversationStore: ...

    @property
    def core(self) -> CoreBlockStore: ...

    @property
    def facts(self) -> FactStore: ...

    @property
    def graph(self) -> GraphStore: ...

    @property
    def queue(self) -> FactQueue: ...

    @property
    def api_keys(self) -> ApiKeyStore: ...

    @property
    def usage(self) -> UsageStore: ...

    @property
    def erasure(self) -> ErasureStore:
        """Each user's erasure record: what fences every write of the other stores."""
        ...

    def index(self, base: str) -> IndexStore:
        """The search index namespace `base` (`brain.keys.archival_base`, `recall_base`, ...)."""
        ...

    def block_session(self, user_id: str | bytes, chat_id: str | bytes) -> BlockSessionStore: ...

    async def ping(self) -> None:
        """`StoreError` unless the store answers now."""
        ...

    async def user_leftovers(self, user_id: str | bytes) -> list[str]:
        """Whatever is still stored under `user_id`'s namespaces (`brain.keys.user_patterns`), by name: for
        erasure and audits, not hot paths."""
        ...

    async def compact(self) -> bool:
        """Rewrite the store's append-only file now (after an erasure, so that erased data leaves the disk
        too), waiting until it is done; False when the store keeps none."""
        ...

    async def purge(self, names: list[str]) -> int:
        """Delete what `user_leftovers` named; how many existed."""
        ...
