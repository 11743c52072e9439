"""`MemoryErasureStore`: each user's erasure record in the keyspace's table, checked by every memory store's
writes (`Keyspace.check`) as Redis scripts check theirs."""

from __future__ import annotations

from collections.abc import Sequence

from brain.backends.memory.keyspace import Keyspace
from brain.keys import raw_id
from brain.storage.fence import Ticket, erased_fields

__all__ = ["MemoryErasureStore"]


class MemoryErasureStore:
    """An `ErasureStore` in memory (one process: the record itself is what every write checks)."""

    def __init__(self, space: Keyspace) -> None:
        self._space = space

    async def ticket(self, user_id: str | bytes, chat_id: str | bytes | None = None) -> Ticket:
        record = self._space.erasures.get(raw_id(user_id, "user_id"), {})
        return Ticket(user_id, record.get("n", 0), chat_id)

    async def begin(self, user_id: str | bytes, chat_ids: Sequence[str | bytes] | None = None) -> int:
        record = self._space.erasures.setdefault(raw_id(user_id, "user_id"), {})
        count = record["n"] = record.get("n", 0) + 1
        if chat_ids is None:
            for field in [f for f in record if f.startswith("c:")]:
                del record[field]
        for field in erased_fields(chat_ids):
            record[field] = count
        return count

    async def fence(
        self, user_id: str | bytes, bases: Sequence[str], chat_ids: Sequence[str | bytes] | None, epoch: int
    ) -> int:
        return 0  # the record itself is what writes check
