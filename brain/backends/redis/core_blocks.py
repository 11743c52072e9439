"""`RedisCoreBlockStore`: core memory blocks (persona, human, custom) with character limits, in Redis.

Every write path (create, append, replace, set) checks the limit inside one Lua script, so concurrent edits
of a shared block are serialized by Redis and no edit can push a block past its limit.
"""

from __future__ import annotations

from brain.backends.redis.client import RedisClient, Refused
from brain.backends.redis.fence import Fencing, fenced
from brain.errors import InputError
from brain.keys import core_key
from brain.storage.blocks import Block, BlockLimitError
from brain.telemetry import TracedScript

__all__ = ["RedisCoreBlockStore"]

_EDIT = """
-- KEYS: blocks hash; ARGV: op (create|set|append|replace), label, a, b
-- create: a = block JSON (limit checked); set: a = value; append: a = text; replace: a = old, b = new
local function chars(s) local _, n = string.gsub(s, '[^\\128-\\191]', ''); return n end
local op, label = ARGV[1], ARGV[2]
if op == 'create' then
  local block = cjson.decode(ARGV[3])
  if chars(block['value']) > tonumber(block['limit']) then
    return redis.error_reply('BRAIN_LIMIT ' .. tonumber(block['limit']) .. ' ' .. chars(block['value']))
  end
  if redis.call('HSETNX', KEYS[1], label, ARGV[3]) == 0 and ARGV[4] ~= 'replace' then
    return redis.error_reply('BRAIN_EXISTS')
  end
  redis.call('HSET', KEYS[1], label, ARGV[3])
  return ARGV[3]
end
local raw = redis.call('HGET', KEYS[1], label)
if not raw then return redis.error_reply('BRAIN_MISSING') end
local block = cjson.decode(raw)
if block['read_only'] then return redis.error_reply('BRAIN_READ_ONLY') end
local value = block['value']
if op == 'set' then value = ARGV[3]
elseif op == 'append' then
  if value == '' then value = ARGV[3] else value = value .. '\\n' .. ARGV[3] end
elseif op == 'replace' then
  local s, e = string.find(value, ARGV[3], 1, true)
  if not s or ARGV[3] == '' then return redis.error_reply('BRAIN_NOT_FOUND') end
  value = string.sub(value, 1, s - 1) .. ARGV[4] .. string.sub(value, e + 1)
end
local limit = tonumber(block['limit'])
if chars(value) > limit then
  return redis.error_reply('BRAIN_LIMIT ' .. limit .. ' ' .. chars(value) .. ' ' .. chars(block['value']))
end
block['value'] = value
local encoded = cjson.encode(block)
redis.call('HSET', KEYS[1], label, encoded)
return encoded
"""


class RedisCoreBlockStore:
    """A `CoreBlockStore`: blocks per scope in one Redis hash each (`brain.keys.core_key`). The client is
    injected."""

    def __init__(self, client: RedisClient, *, prefix: str = "brain", fencing: Fencing | None = None) -> None:
        self._client = client
        self.prefix = prefix
        self._fencing = fencing or Fencing(client, prefix)
        self._edit = TracedScript(client.register_script(fenced(_EDIT)), "core.edit")

    def key(self, scope: str | bytes) -> str:
        return core_key(self.prefix, scope)

    async def _run(self, scope: str | bytes, args: list[str]) -> Block:
        try:
            raw = await self._fencing.call(self._edit, [self.key(scope)], args)
        except Refused as exc:
            raise _translate(exc, args[1]) from None
        return Block.model_validate_json(raw)

    async def create(self, scope: str | bytes, block: Block, *, replace: bool = False) -> Block:
        return await self._run(
            scope, ["create", block.label, block.model_dump_json(), "replace" if replace else ""]
        )

    async def set(self, scope: str | bytes, label: str, value: str) -> Block:
        return await self._run(scope, ["set", label, value, ""])

    async def append(self, scope: str | bytes, label: str, text: str) -> Block:
        return await self._run(scope, ["append", label, text, ""])

    async def replace(self, scope: str | bytes, label: str, old: str, new: str) -> Block:
        return await self._run(scope, ["replace", label, old, new])

    async def list(self, scope: str | bytes) -> list[Block]:
        raw = await self._client.hgetall(self.key(scope))
        return [Block.model_validate_json(v) for _, v in sorted(raw.items())]

    async def drop(self, scope: str | bytes) -> int:
        """Delete every block of `scope`; how many there were."""
        async with self._client.pipeline(transaction=True) as pipe:
            pipe.hlen(self.key(scope))
            pipe.delete(self.key(scope))
            count, _ = await pipe.execute()
        return int(count)

    async def delete(self, scope: str | bytes, label: str) -> bool:
        found = await self.list(scope)
        await self._fencing.run([("HDEL", self.key(scope), (label,))])
        return any(b.label == label for b in found)


def _translate(refused: Refused, label: str) -> InputError:
    if refused.code == "BRAIN_LIMIT":
        numbers = refused.detail.split()
        limit, wanted = int(numbers[0]), int(numbers[1])
        current = int(numbers[2]) if len(numbers) > 2 and numbers[2].isdigit() else 0
        return BlockLimitError(
            f"block {label!r} holds at most {limit} characters; this edit would make it {wanted} "
            f"({limit - current} characters of room left); shorten it or replace old content"
        )
    if refused.code == "BRAIN_MISSING":
        return InputError(f"there is no core memory block {label!r}")
    if refused.code == "BRAIN_NOT_FOUND":
        return InputError(f"the text to replace was not found in block {label!r}; it must match exactly")
    if refused.code == "BRAIN_READ_ONLY":
        return InputError(f"block {label!r} is read-only")
    if refused.code == "BRAIN_EXISTS":
        return InputError(f"block {label!r} exists already")
    return InputError(f"editing block {label!r} failed: {refused}")
