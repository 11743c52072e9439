"""`MemoryUsageStore`: each chat's running usage totals in the keyspace, beside the chat under
`<conversation base>:usage` (where the Redis store keeps its hash of counters); the conversation store adds
a turn's usage there in the same write (`add_usage`). A table is removed when its last row goes."""

from __future__ import annotations

from brain.backends.memory.keyspace import Keyspace
from brain.keys import conversation_keys, encode_id, raw_id, readable_id
from brain.llm.usage import Usage
from brain.storage.usage import UsageRow

__all__ = ["MemoryUsageStore", "add_usage", "usage_name"]


class _Totals(dict[str, tuple[int, int, int]]):
    """model -> (calls, prompt tokens, completion tokens) of one chat."""

    def __init__(self, chat_id: bytes) -> None:
        super().__init__()
        self.chat_id = chat_id


def usage_name(prefix: str, user_id: str | bytes, chat_id: str | bytes) -> str:
    return f"{conversation_keys(prefix, user_id, chat_id).base}:usage"


def add_usage(
    space: Keyspace, name: str, chat_id: str | bytes, model: str, calls: int, prompt: int, completion: int
) -> None:
    """Add to one chat's row of `model` (no await: atomic in the event loop)."""
    raw = raw_id(chat_id, "chat_id")
    totals = space.setdefault(name, lambda: _Totals(raw))
    had_calls, had_prompt, had_completion = totals.get(model, (0, 0, 0))
    totals[model] = (had_calls + calls, had_prompt + prompt, had_completion + completion)


class MemoryUsageStore:
    """A `UsageStore` in a `Keyspace`."""

    def __init__(self, space: Keyspace, prefix: str) -> None:
        self._space = space
        self.prefix = prefix

    def _names(self, user_id: str | bytes, chat_id: str | bytes | None) -> list[str]:
        if chat_id is not None:
            return [usage_name(self.prefix, user_id, chat_id)]
        return self._space.matching([f"{self.prefix}:{{{encode_id(user_id, 'user_id')}.*}}:usage"])

    async def add(
        self, user_id: str | bytes, chat_id: str | bytes, model: str, usage: Usage, calls: int = 1
    ) -> None:
        self._space.check(user_id)
        name = usage_name(self.prefix, user_id, chat_id)
        add_usage(self._space, name, chat_id, model, calls, usage.prompt_tokens, usage.completion_tokens)

    async def rows(self, user_id: str | bytes, chat_id: str | bytes | None = None) -> list[UsageRow]:
        rows: list[UsageRow] = []
        for name in self._names(user_id, chat_id):
            totals = self._space.get(name, _Totals)
            if totals is None:
                continue
            chat = readable_id(totals.chat_id)
            rows += [
                UsageRow(chat_id=chat, model=model, calls=calls, prompt_tokens=prompt, completion_tokens=done)
                for model, (calls, prompt, done) in totals.items()
            ]
        return sorted(rows, key=lambda r: (raw_id(r.chat_id), r.model))

    async def drop(self, user_id: str | bytes, chat_id: str | bytes | None = None) -> int:
        gone = 0
        for name in self._names(user_id, chat_id):
            totals = self._space.get(name, _Totals)
            gone += len(totals or ())
            self._space.delete(name)
        return gone
