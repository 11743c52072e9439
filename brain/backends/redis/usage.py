"""`RedisUsageStore`: each user's LLM usage as one hash under the user's fact-memory tag
(`f"{facts_base}:usage"`): counters `<chat>|calls|<model>`, `<chat>|prompt|<model>`,
`<chat>|completion|<model>` (the chat encoded by `brain.keys.encode_id`) and `<chat>|id`, the chat's raw id.
One row per chat and model, however long the user chats; erasing the user erases it."""

from __future__ import annotations

from collections import defaultdict

from brain.backends.redis.client import RedisClient
from brain.keys import encode_id, facts_base, raw_id, readable_id
from brain.llm.usage import Usage
from brain.search.filters import text
from brain.storage.usage import UsageRow

__all__ = ["RedisUsageStore"]

_COUNTERS = {"calls": "calls", "prompt": "prompt_tokens", "completion": "completion_tokens"}


class RedisUsageStore:
    """A `UsageStore` over an injected client."""

    def __init__(self, client: RedisClient, *, prefix: str = "brain") -> None:
        self._client = client
        self.prefix = prefix

    def _key(self, user_id: str | bytes) -> str:
        return f"{facts_base(self.prefix, user_id)}:usage"

    async def add(
        self, user_id: str | bytes, chat_id: str | bytes, model: str, usage: Usage, calls: int = 1
    ) -> None:
        chat, key = encode_id(chat_id, "chat_id"), self._key(user_id)
        async with self._client.pipeline(transaction=True) as pipe:
            pipe.hset(key, f"{chat}|id", raw_id(chat_id, "chat_id"))
            pipe.hincrby(key, f"{chat}|calls|{model}", calls)
            pipe.hincrby(key, f"{chat}|prompt|{model}", usage.prompt_tokens)
            pipe.hincrby(key, f"{chat}|completion|{model}", usage.completion_tokens)
            await pipe.execute()

    async def rows(self, user_id: str | bytes, chat_id: str | bytes | None = None) -> list[UsageRow]:
        only = encode_id(chat_id, "chat_id") if chat_id is not None else None
        fields = {text(k): v for k, v in (await self._client.hgetall(self._key(user_id))).items()}
        ids: dict[str, bytes] = {}
        counts: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
        for field, value in fields.items():
            chat, _, rest = field.partition("|")
            if only is not None and chat != only:
                continue
            if rest == "id":
                ids[chat] = value if isinstance(value, bytes) else str(value).encode()
                continue
            counter, _, model = rest.partition("|")
            if counter in _COUNTERS:
                counts[(chat, model)][_COUNTERS[counter]] = int(value)
        rows = [
            UsageRow(chat_id=readable_id(ids.get(chat, chat.encode())), model=model, **values)
            for (chat, model), values in counts.items()
        ]
        return sorted(rows, key=lambda r: (raw_id(r.chat_id), r.model))

    async def drop(self, user_id: str | bytes, chat_id: str | bytes | None = None) -> int:
        key = self._key(user_id)
        if chat_id is None:
            rows = len(await self.rows(user_id))
            await self._client.delete(key)
            return rows
        chat = encode_id(chat_id, "chat_id")
        rows = len(await self.rows(user_id, chat_id))
        fields = [f for f in map(text, await self._client.hkeys(key)) if f.startswith(f"{chat}|")]
        if fields:
            await self._client.hdel(key, *fields)
        return rows
