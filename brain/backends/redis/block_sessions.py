"""`RedisBlockSession`: where one session's block memory lives in Redis (all under the session's hash
tag, `brain.keys`):

- `active`: the FIFO of chat history (each record: id, message, tokens);
- `archived`: messages flushed out of the FIFO, in order (kept: nothing is deleted by a flush);
- `state`: the system messages, each block's state and how far into the archive it has read.

A flush moves the oldest records atomically and only if the FIFO still starts where the caller saw it, so
two processes flushing one session never move a message twice.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, cast

from brain.backends.redis.client import RedisClient
from brain.backends.redis.fence import Fencing, fenced
from brain.keys import blocks_base
from brain.storage.blocks import Record
from brain.telemetry import TracedScript

__all__ = ["BlockScripts", "RedisBlockSession"]

# KEYS: active, archived. ARGV: expected first record, n -> archived length, or -1 when the head moved
_FLUSH = """
local head = redis.call('LINDEX', KEYS[1], 0)
if head ~= ARGV[1] then return -1 end
local n = tonumber(ARGV[2])
local moved = redis.call('LPOP', KEYS[1], n)
for _, record in ipairs(moved) do redis.call('RPUSH', KEYS[2], record) end
return redis.call('LLEN', KEYS[2])
"""

# KEYS: active. ARGV: exchanges -> messages removed (from the newest back to the count-th user message)
_DROP_TAIL = """
local records = redis.call('LRANGE', KEYS[1], 0, -1)
local users, cut = 0, #records + 1
for i = #records, 1, -1 do
  local ok, record = pcall(cjson.decode, records[i])
  if ok and type(record) == 'table' and record['message']['role'] == 'user' then
    users = users + 1
    cut = i
    if users == tonumber(ARGV[1]) then break end
  end
end
if cut > #records then return 0 end
if cut == 1 then redis.call('DEL', KEYS[1]) else redis.call('LTRIM', KEYS[1], 0, cut - 2) end
return #records - cut + 1
"""

# KEYS: active. ARGV: new record -> 1 when the newest record was an answer (now replaced), else 0
_REPLACE_ANSWER = """
local last = redis.call('LINDEX', KEYS[1], -1)
if not last then return 0 end
local ok, record = pcall(cjson.decode, last)
if not ok or type(record) ~= 'table' or record['message']['role'] ~= 'assistant' then return 0 end
redis.call('LSET', KEYS[1], -1, ARGV[1])
return 1
"""

# KEYS: state. ARGV: field, expected, new -> 1 when set
_CLAIM = """
if (redis.call('HGET', KEYS[1], ARGV[1]) or '0') ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
"""


class BlockScripts:
    """The Lua scripts, registered once per client."""

    def __init__(self, client: RedisClient) -> None:
        self.flush = TracedScript(client.register_script(fenced(_FLUSH)), "blocks.flush")
        self.claim = TracedScript(client.register_script(fenced(_CLAIM)), "blocks.claim")
        self.drop_tail = TracedScript(client.register_script(fenced(_DROP_TAIL)), "blocks.drop_tail")
        self.replace_answer = TracedScript(
            client.register_script(fenced(_REPLACE_ANSWER)), "blocks.replace_answer"
        )


class RedisBlockSession:
    """A `BlockSessionStore`: one session's block memory in Redis. Cheap to build; the client is injected."""

    def __init__(
        self,
        client: RedisClient,
        user_id: str | bytes,
        chat_id: str | bytes,
        *,
        prefix: str = "brain",
        scripts: BlockScripts | None = None,
        fencing: Fencing | None = None,
        ttl_seconds: int | None = None,
    ) -> None:
        self._client = client
        self.ttl = ttl_seconds or 0  # the session's keys expire with its chat
        self._user = user_id
        self._fencing = fencing or Fencing(client, prefix)
        self.base = blocks_base(prefix, user_id, chat_id)
        self.active_key, self.archived_key, self.state_key = (
            f"{self.base}:active",
            f"{self.base}:archived",
            f"{self.base}:state",
        )
        self.vectors_base = f"{self.base}:vec"  # the namespace of the vector block's index
        self._scripts = scripts or BlockScripts(client)

    async def append(self, records: Sequence[Record]) -> None:
        if records:
            raws = [r.model_dump_json() for r in records]
            await self._fencing.run([("RPUSH", self.active_key, raws), *self._expiry()], self._user)

    def _expiry(self) -> list[tuple[str, str, tuple[int]]]:
        keys = (self.active_key, self.archived_key, self.state_key) if self.ttl else ()
        return [("EXPIRE", key, (self.ttl,)) for key in keys]

    async def active(self) -> tuple[list[Record], list[bytes]]:
        """The FIFO's records, oldest first, and their raw form (to flush against)."""
        raws = cast(list[bytes], await self._client.lrange(self.active_key, 0, -1))
        return [Record.model_validate_json(r) for r in raws], raws

    async def flush(self, head: bytes, count: int) -> int | None:
        """Move the oldest `count` records to the archive if the FIFO still starts with `head`; the archive's
        new length, or None when another writer flushed first."""
        keys = [self.active_key, self.archived_key]
        length = await self._fencing.call(self._scripts.flush, keys, [head, count], self._user)
        return None if int(length) < 0 else int(length)

    async def archived(self, start: int, stop: int = -1) -> list[Record]:
        raws = await self._client.lrange(self.archived_key, start, stop)
        return [Record.model_validate_json(r) for r in raws]

    async def archived_count(self) -> int:
        return int(await self._client.llen(self.archived_key))

    async def get_state(self, field: str) -> Any:
        raw = await self._client.hget(self.state_key, field)
        return None if raw is None else json.loads(raw)

    async def set_state(self, field: str, value: Any) -> None:
        data = json.dumps(value, ensure_ascii=False)
        await self._fencing.run([("HSET", self.state_key, (field, data)), *self._expiry()], self._user)

    async def claim(self, field: str, expected: int, new: int) -> bool:
        """Move a counter from `expected` to `new`; False when someone else moved it first."""
        args = [field, str(expected), str(new)]
        return bool(await self._fencing.call(self._scripts.claim, [self.state_key], args, self._user))

    async def drop_tail(self, exchanges: int) -> int:
        """Remove the newest `exchanges` exchanges from the FIFO (atomic); how many messages went."""
        return int(
            await self._fencing.call(self._scripts.drop_tail, [self.active_key], [exchanges], self._user)
        )

    async def replace_answer(self, record: Record) -> bool:
        """Put `record` in place of the newest record if that is an answer (atomic); False otherwise (the
        answer was flushed already, or the history ends otherwise)."""
        args = [record.model_dump_json()]
        return bool(
            await self._fencing.call(self._scripts.replace_answer, [self.active_key], args, self._user)
        )

    async def drop(self) -> int:
        """Delete the session's history, archive and state; how many keys existed."""
        keys = [self.active_key, self.archived_key, self.state_key]
        return int(await self._client.delete(*keys))
