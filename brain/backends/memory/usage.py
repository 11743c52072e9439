"""`MemoryUsageStore`: each user's running usage totals in the keyspace, one table per user under
`<facts_base>:usage` (where the Redis store keeps its hash of counters), removed when its last row goes."""

from __future__ import annotations

from brain.backends.memory.keyspace import Keyspace
from brain.keys import facts_base, raw_id, readable_id
from brain.llm.usage import Usage
from brain.storage.usage import UsageRow

__all__ = ["MemoryUsageStore"]


class _Totals(dict[tuple[bytes, str], tuple[int, int, int]]):
    """(raw chat id, model) -> (calls, prompt tokens, completion tokens)."""


class MemoryUsageStore:
    """A `UsageStore` in a `Keyspace`."""

    def __init__(self, space: Keyspace, prefix: str) -> None:
        self._space = space
        self.prefix = prefix

    def _name(self, user_id: str | bytes) -> str:
        return f"{facts_base(self.prefix, user_id)}:usage"

    async def add(
        self, user_id: str | bytes, chat_id: str | bytes, model: str, usage: Usage, calls: int = 1
    ) -> None:
        name, row = self._name(user_id), (raw_id(chat_id, "chat_id"), model)
        totals = self._space.setdefault(name, _Totals)
        had_calls, had_prompt, had_completion = totals.get(row, (0, 0, 0))
        totals[row] = (
            had_calls + calls,
            had_prompt + usage.prompt_tokens,
            had_completion + usage.completion_tokens,
        )

    async def rows(self, user_id: str | bytes, chat_id: str | bytes | None = None) -> list[UsageRow]:
        totals = self._space.get(self._name(user_id), _Totals) or _Totals()
        chat = raw_id(chat_id, "chat_id") if chat_id is not None else None
        return [
            UsageRow(
                chat_id=readable_id(raw_chat),
                model=model,
                calls=calls,
                prompt_tokens=prompt,
                completion_tokens=completion,
            )
            for (raw_chat, model), (calls, prompt, completion) in sorted(totals.items())
            if chat is None or raw_chat == chat
        ]

    async def drop(self, user_id: str | bytes, chat_id: str | bytes | None = None) -> int:
        name = self._name(user_id)
        chat = raw_id(chat_id, "chat_id") if chat_id is not None else None
        totals = self._space.get(name, _Totals)
        if totals is None:
            return 0
        gone = [row for row in totals if chat is None or row[0] == chat]
        for row in gone:
            del totals[row]
        if not totals:
            self._space.delete(name)
        return len(gone)
