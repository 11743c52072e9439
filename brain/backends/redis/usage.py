"""`RedisUsageStore`: a chat's LLM usage as one hash beside the chat, under its hash tag
(`brain.keys.ConversationKeys.usage`), so a turn's write adds its usage in the same script
(`brain.backends.redis.conversation_scripts.WRITE`) and erasing the chat erases it: counters
`calls|<model>`, `prompt|<model>`, `completion|<model>`, and `id`, the chat's raw id. One row per chat and
model, however long the user chats."""

from __future__ import annotations

from brain.backends.redis.client import RedisClient
from brain.backends.redis.fence import Fencing, fenced
from brain.keys import conversation_keys, encode_id, raw_id, readable_id
from brain.llm.usage import Usage
from brain.search.filters import text
from brain.storage.usage import UsageRow
from brain.telemetry import TracedScript

__all__ = ["RedisUsageStore"]

_COUNTERS = {"calls": "calls", "prompt": "prompt_tokens", "completion": "completion_tokens"}

# KEYS: the chat's usage hash. ARGV: model, calls, prompt tokens, completion tokens, raw chat id.
_ADD = """
redis.call('HINCRBY', KEYS[1], 'calls|' .. ARGV[1], ARGV[2])
redis.call('HINCRBY', KEYS[1], 'prompt|' .. ARGV[1], ARGV[3])
redis.call('HINCRBY', KEYS[1], 'completion|' .. ARGV[1], ARGV[4])
redis.call('HSETNX', KEYS[1], 'id', ARGV[5])
return 1
"""


class RedisUsageStore:
    """A `UsageStore` over an injected client."""

    def __init__(self, client: RedisClient, *, prefix: str = "brain", fencing: Fencing | None = None) -> None:
        self._client = client
        self.prefix = prefix
        self._fencing = fencing or Fencing(client, prefix)
        self._add = TracedScript(client.register_script(fenced(_ADD)), "usage.add")

    def _key(self, user_id: str | bytes, chat_id: str | bytes) -> str:
        return conversation_keys(self.prefix, user_id, chat_id).usage

    async def _keys(self, user_id: str | bytes) -> list[str]:
        """The usage hashes of every chat of the user (a SCAN: for reports, not hot paths)."""
        pattern = f"{self.prefix}:{{{encode_id(user_id, 'user_id')}.*}}:usage"
        return sorted({text(k) async for k in self._client.scan_iter(match=pattern, count=1_000)})

    async def add(
        self, user_id: str | bytes, chat_id: str | bytes, model: str, usage: Usage, calls: int = 1
    ) -> None:
        args = [model, calls, usage.prompt_tokens, usage.completion_tokens, raw_id(chat_id, "chat_id")]
        await self._fencing.call(self._add, [self._key(user_id, chat_id)], args, user_id)

    async def rows(self, user_id: str | bytes, chat_id: str | bytes | None = None) -> list[UsageRow]:
        keys = [self._key(user_id, chat_id)] if chat_id is not None else await self._keys(user_id)
        rows: list[UsageRow] = []
        for key in keys:  # one by one: on Cluster each chat lives in its own slot
            fields = {text(k): v for k, v in (await self._client.hgetall(key)).items()}
            raw = fields.pop("id", None)
            chat = readable_id(raw if isinstance(raw, bytes) else text(raw).encode()) if raw else None
            counts: dict[str, dict[str, int]] = {}
            for field, value in fields.items():
                counter, _, model = field.partition("|")
                if counter in _COUNTERS:
                    counts.setdefault(model, {})[_COUNTERS[counter]] = int(value)
            rows += [UsageRow(chat_id=chat, model=m, **c) for m, c in counts.items() if chat is not None]
        return sorted(rows, key=lambda r: (raw_id(r.chat_id), r.model))

    async def drop(self, user_id: str | bytes, chat_id: str | bytes | None = None) -> int:
        keys = [self._key(user_id, chat_id)] if chat_id is not None else await self._keys(user_id)
        rows = len(await self.rows(user_id, chat_id))
        for key in keys:
            await self._client.delete(key)
        return rows
