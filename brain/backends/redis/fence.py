"""Erasure fences on Redis: the check every write script starts with, and each user's erasure record.

Every script that writes a user's memory is registered as `fenced(body)`: its first key is the erasure
record to check (the user's own `brain.keys.erasure_key` on a standalone server; on Cluster, where a script
reads one slot only, the namespace's `fence_key` copy that an erasure leaves there) and its first arguments
are the ticket (`brain.storage.fence`): the work's erasure count (-1: none held) and the record's fields to
check. A record field above the ticket refuses the write (`BRAIN_ERASED`, nothing written); otherwise the
prelude removes its own key and arguments, so the body reads KEYS and ARGV as it always did. Writes that
were plain commands go through `RUN`, the same check before a list of commands.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Any

from redis.asyncio.cluster import RedisCluster

from brain.backends.redis.client import RedisClient
from brain.backends.redis.replicas import acknowledged
from brain.keys import erasure_key, fence_key, namespace_base, raw_id
from brain.storage import fence
from brain.storage.fence import Ticket, erased_fields
from brain.telemetry import TracedScript

__all__ = ["PRELUDE", "RUN", "Fencing", "RedisErasureStore", "fenced"]

PRELUDE = """
local fence_t = tonumber(ARGV[1])
local fence_n = tonumber(ARGV[2])
if fence_t >= 0 then
  for fence_i = 3, 2 + fence_n do
    if tonumber(redis.call('HGET', KEYS[1], ARGV[fence_i]) or '0') > fence_t then
      return redis.error_reply('BRAIN_ERASED')
    end
  end
end
table.remove(KEYS, 1)
for fence_i = 1, 2 + fence_n do table.remove(ARGV, 1) end
"""

# KEYS: one key per command; ARGV: per command, its argument count, its name, its arguments (after the key)
RUN = """
local at = 1
for k = 1, #KEYS do
  local count = tonumber(ARGV[at])
  local command = {ARGV[at + 1], KEYS[k]}
  for j = 1, count do command[#command + 1] = ARGV[at + 1 + j] end
  redis.call(unpack(command))
  at = at + 2 + count
end
return #KEYS
"""

# KEYS: the record; ARGV: field ('*' for the whole user), the chat fields -> the new count
_BEGIN = """
local n = redis.call('HINCRBY', KEYS[1], 'n', 1)
if ARGV[1] == '*' then
  for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
    if string.sub(field, 1, 2) == 'c:' then redis.call('HDEL', KEYS[1], field) end
  end
end
for i = 1, #ARGV do redis.call('HSET', KEYS[1], ARGV[i], n) end
return n
"""

# KEYS: fence copies; ARGV: epoch, lifetime in ms, fields...
_FENCE = """
for k = 1, #KEYS do
  for i = 3, #ARGV do
    local old = tonumber(redis.call('HGET', KEYS[k], ARGV[i]) or '0')
    if old < tonumber(ARGV[1]) then redis.call('HSET', KEYS[k], ARGV[i], ARGV[1]) end
  end
  redis.call('PEXPIRE', KEYS[k], ARGV[2])
end
return #KEYS
"""


def fenced(body: str) -> str:
    """A write script's text behind the fence check."""
    return PRELUDE + body


class Fencing:
    """Where this backend's write scripts find the erasure record, and the run script for plain writes."""

    def __init__(
        self, client: RedisClient, prefix: str, *, wait_replicas: int = 0, wait_timeout_ms: int = 1_000
    ) -> None:
        self.prefix, self.cluster = prefix, isinstance(client, RedisCluster)
        self._client = client
        self._run = TracedScript(client.register_script(fenced(RUN)), "fence.run")
        self.wait_replicas, self.wait_timeout_ms = wait_replicas, wait_timeout_ms

    def ticket_parts(self, base: str, user_id: str | bytes | None = None) -> tuple[list[str], list[Any]]:
        """The key and arguments that put a write to namespace `base` (of `user_id`, when the store knows
        it) behind the held ticket; a write outside any ticket, or for another user, is not checked."""
        held = fence.applying(user_id)
        if held is None:
            return [fence_key(base)], [-1, 0]
        record = fence_key(base) if self.cluster else erasure_key(self.prefix, held.user_id)
        return [record], [held.epoch, len(held.fields), *held.fields]

    def call(
        self, script: Any, keys: list[str], args: list[Any], user_id: str | bytes | None = None
    ) -> Awaitable[Any]:
        """The call of a `fenced` script with the held ticket (its namespace is that of `keys[0]`), to
        await; with `wait_replicas`, acknowledged once that many replicas have the write
        (`replicas.acknowledged`). Not a coroutine of its own: one frame less on every write."""
        head, ticket = self.ticket_parts(namespace_base(keys[0]), user_id)
        head += keys
        ticket += args
        if self.wait_replicas:
            return acknowledged(self._client, script, head, ticket, self.wait_replicas, self.wait_timeout_ms)
        return script(keys=head, args=ticket)  # type: ignore[no-any-return]

    async def run(
        self, commands: Sequence[tuple[str, str, Sequence[Any]]], user_id: str | bytes | None = None
    ) -> None:
        """Run plain write commands, each `(name, key, arguments)`, all in one namespace, behind the held
        ticket, atomically."""
        keys = [key for _, key, _ in commands]
        args: list[Any] = []
        for name, _, rest in commands:
            args += [len(rest), name, *rest]
        await self.call(self._run, keys, args, user_id)


class RedisErasureStore:
    """An `ErasureStore`: one hash per user (`brain.keys.erasure_key`), and on Cluster its copies."""

    def __init__(self, client: RedisClient, *, prefix: str = "brain", fence_seconds: int = 604_800) -> None:
        self._client, self.prefix = client, prefix
        self.cluster = isinstance(client, RedisCluster)
        self.fence_seconds = fence_seconds
        self._begin = TracedScript(client.register_script(_BEGIN), "erasure.begin")
        self._fence = TracedScript(client.register_script(_FENCE), "erasure.fence")

    async def ticket(self, user_id: str | bytes, chat_id: str | bytes | None = None) -> Ticket:
        raw = await self._client.hget(erasure_key(self.prefix, user_id), "n")
        return Ticket(user_id, int(raw or 0), chat_id)

    async def erased_since(self, ticket: Ticket) -> int:
        """The count of the latest erasure of what `ticket` is for, when it came after the ticket; else 0."""
        found = await self._client.hmget(erasure_key(self.prefix, ticket.user_id), list(ticket.fields))
        latest = max(int(f or 0) for f in found)
        return latest if latest > ticket.epoch else 0

    async def begin(self, user_id: str | bytes, chat_ids: Sequence[str | bytes] | None = None) -> int:
        fields = erased_fields(chat_ids)
        return int(await self._begin(keys=[erasure_key(self.prefix, user_id)], args=fields))

    async def fence(
        self, user_id: str | bytes, bases: Sequence[str], chat_ids: Sequence[str | bytes] | None, epoch: int
    ) -> int:
        raw_id(user_id, "user_id")
        if not self.cluster or not bases:
            return 0
        fields = erased_fields(chat_ids)
        for base in sorted(set(bases)):  # one slot per call
            await self._fence(keys=[fence_key(base)], args=[epoch, self.fence_seconds * 1000, *fields])
        return len(set(bases))
