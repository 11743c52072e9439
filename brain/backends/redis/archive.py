"""Cold users out of RAM: a user's every key moved to a compressed archive outside Redis, and brought back
on first access (`UserArchive.present`, which every way into a user's memory calls: `Tiers.present`).

Keys are opaque here: `DUMP` and `RESTORE` (with each key's absolute expiry), whatever a record or an index
looks like. A marker (`brain.keys.archived_key`, a hash: `state`, `token`, `name`, `until`) says where the
user is:

- `archiving`: claimed by an archiver (expiring after `lease_ms`, so a crashed one frees the user). Anyone
  arriving waits (`present` polls) until it is `archived`, then restores; or until it is gone (the archiver
  gave up), then goes on with the keys that never left.
- `archived`: every key is in the file `name` and none in Redis.
- `restoring` (until `until`, then anyone may take over) and `restored` (every key is back; only the file
  and the marker are left to delete).

No write is lost to an archiver: it DUMPs every key after claiming the user, writes the file, then deletes
the keys in one script that first compares each key's DUMP with what it archived (Redis runs a script
atomically: no write falls between the check and the delete). One changed key and nothing is deleted, the
file is removed and the user stays in RAM (`ArchiveResult.changed`). On Cluster, where one script reaches one
slot, each namespace is compared and deleted on its own, and one that changed restores those already
deleted. A caller that checked `present` before the claim and still writes after the delete (a request in
flight at that very moment) is what the sweep's second look at activity, after claiming, rules out
(`brain.backends.redis.archive_sweep`); if it happened anyway, restoring refuses to overwrite that key
(`StoreError`) and keeps the archive.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from itertools import groupby
from typing import Any

from pydantic import BaseModel, ConfigDict

from brain.backends.redis.archive_store import ArchivedKey, ArchiveStore, pack, unpack
from brain.backends.redis.client import RedisClient
from brain.errors import StoreError
from brain.keys import archive_name, archived_key, fence_key, log_tag, namespace_base, user_patterns
from brain.search.filters import text
from brain.telemetry import TracedScript

__all__ = ["ArchiveResult", "UserArchive"]

# KEYS: marker; ARGV: token, lease ms -> 1 when claimed, 0 when the user is archived or being archived
_CLAIM = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'state', 'archiving', 'token', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"""

# KEYS: [marker,] keys; ARGV: sealing ('1': KEYS[1] is the marker), token, name, payloads (one per key)
# -> 1 deleted (and sealed), 0 a key changed (nothing deleted), -1 the claim was lost (nothing deleted)
_SWAP = """
local first = 1
if ARGV[1] == '1' then
  if redis.call('HGET', KEYS[1], 'token') ~= ARGV[2] then return -1 end
  first = 2
end
for i = first, #KEYS do
  if redis.call('DUMP', KEYS[i]) ~= ARGV[3 + i - first + 1] then return 0 end
end
for i = first, #KEYS do redis.call('DEL', KEYS[i]) end
if ARGV[1] == '1' then
  redis.call('HSET', KEYS[1], 'state', 'archived', 'name', ARGV[3])
  redis.call('PERSIST', KEYS[1])
end
return 1
"""

# KEYS: marker; ARGV: token, state, name ('' keeps it) -> 1, or 0 when the claim was lost
_SET = """
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[2])
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'name', ARGV[3]) end
redis.call('PERSIST', KEYS[1])
return 1
"""

# KEYS: marker; ARGV: token -> 1 deleted, 0 not ours
_RELEASE = """
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])
"""

# KEYS: marker; ARGV: token, now ms, lease ms -> {what, name}: 'gone', 'wait' or the state taken over
# ('archived' or a stale 'restoring': restore it; 'restored': only the file and marker are left)
_TAKE = """
local m = redis.call('HMGET', KEYS[1], 'state', 'until', 'name')
local state, now = m[1], tonumber(ARGV[2])
if not state then return {'gone', ''} end
if state == 'archived' or state == 'restored' or (state == 'restoring' and tonumber(m[2] or '0') < now) then
  redis.call('HSET', KEYS[1], 'token', ARGV[1], 'until', now + tonumber(ARGV[3]))
  if state ~= 'restored' then redis.call('HSET', KEYS[1], 'state', 'restoring') end
  return {state, m[3] or ''}
end
return {'wait', ''}
"""


class ArchiveResult(BaseModel):
    """What archiving a user did: `keys` moved (`payload_bytes` of DUMPs, `file_bytes` compressed) into
    `name`; or nothing, because the user was archived already (`busy`), had nothing (`keys` 0), turned out
    active (`active`), or changed while being archived (`changed`: everything stays in RAM)."""

    model_config = ConfigDict(frozen=True)

    archived: bool = False
    name: str = ""
    keys: int = 0
    payload_bytes: int = 0
    file_bytes: int = 0
    busy: bool = False
    active: bool = False
    changed: bool = False


Quiet = Callable[[Sequence[str]], Awaitable[bool]]
"""Whether a user is still idle, given their keys (asked after the claim: `roles.archive_sweep`)."""


class UserArchive:
    """Archive, restore and forget users of one Redis (`prefix`) in `store` (None: none configured; an
    archived user is then a `StoreError`). `lease_ms`: how long a claim holds without its owner; `wait_s`:
    how long `present` waits for another process's archiving or restoring."""

    def __init__(
        self,
        client: RedisClient,
        *,
        prefix: str = "brain",
        store: ArchiveStore | None = None,
        cluster: bool = False,
        lease_ms: int = 60_000,
        wait_s: float = 90.0,
    ) -> None:
        self.client, self.prefix, self.store, self.cluster = client, prefix, store, cluster
        self.lease_ms, self.wait_s = lease_ms, wait_s
        self._claim = TracedScript(client.register_script(_CLAIM), "archive.claim")
        self._swap = TracedScript(client.register_script(_SWAP), "archive.swap")
        self._set = TracedScript(client.register_script(_SET), "archive.set")
        self._release = TracedScript(client.register_script(_RELEASE), "archive.release")
        self._take = TracedScript(client.register_script(_TAKE), "archive.take")

    def _store(self) -> ArchiveStore:
        if self.store is None:
            raise StoreError("no cold archive is configured (memory.archive_dir or memory.archive_url)")
        return self.store

    async def is_archived(self, user_id: str | bytes) -> bool:
        """Whether the user's marker is there (archived, or on the way out or back)."""
        return bool(await self.client.exists(archived_key(self.prefix, user_id)))

    async def present(self, user_id: str | bytes) -> bool:
        """Make sure the user's memory is in Redis before anything reads or writes it: one HGET when it is;
        else wait out an archiving and restore. True when this call restored it. `StoreError` when it
        cannot (the archive unreadable, a key in the way): never an empty memory."""
        marker = archived_key(self.prefix, user_id)
        if await self.client.hget(marker, "state") is None:
            return False
        deadline, pause = time.monotonic() + self.wait_s, 0.005
        while True:
            token = secrets.token_hex(8)
            raw = await self._take(keys=[marker], args=[token, _now_ms(), self.lease_ms])
            what, name = text(raw[0]), text(raw[1])
            if what == "gone":
                return False
            if what != "wait":
                await self._restore(marker, token, name, restored=what == "restored")
                return True
            if time.monotonic() > deadline:
                raise StoreError(f"user {log_tag(user_id)} stayed on the way to or from the cold archive")
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.1)

    async def _restore(self, marker: str, token: str, name: str, *, restored: bool) -> None:
        if not restored:
            data = await asyncio.to_thread(self._store().get, name)
            await self._put_back(unpack(data))
            if not int(await self._set(keys=[marker], args=[token, "restored", ""])):
                raise StoreError("the cold archive's marker changed hands while restoring (an erasure?)")
        if self.store is not None:
            await asyncio.to_thread(self.store.delete, name)
        await self._release(keys=[marker], args=[token])

    async def _put_back(self, keys: Sequence[ArchivedKey]) -> None:
        """RESTORE every key not expired meanwhile; a key already there must hold the same payload (a
        restore begun before and taken over), else `StoreError` and nothing is overwritten."""
        now = _now_ms()
        live = [k for k in keys if not k.expires_at_ms or k.expires_at_ms > now]
        pipe = self.client.pipeline(transaction=False)
        for key in live:
            if key.expires_at_ms:
                pipe.execute_command("RESTORE", key.name, key.expires_at_ms, key.payload, "ABSTTL")
            else:
                pipe.execute_command("RESTORE", key.name, 0, key.payload)
        results = await pipe.execute(raise_on_error=False)
        for key, result in zip(live, results, strict=True):
            if not isinstance(result, Exception):
                continue
            if "BUSYKEY" not in str(result) or await self.client.dump(key.name) != key.payload:
                raise StoreError(
                    f"restoring from the cold archive failed ({type(result).__name__}): a key holds other "
                    "data; the archive was kept"
                )

    async def archive(self, user_id: str | bytes, quiet: Quiet | None = None) -> ArchiveResult:
        """Move every key of the user (but the erasure fences) to the archive store, as the module says;
        `quiet`, when given, is asked after the claim whether the user is still idle."""
        store, marker, token = self._store(), archived_key(self.prefix, user_id), secrets.token_hex(8)
        if not int(await self._claim(keys=[marker], args=[token, self.lease_ms])):
            return ArchiveResult(busy=True)
        result = ArchiveResult()
        try:
            names = await self._keys(user_id, marker)
            if names and quiet is not None and not await quiet(names):
                result = ArchiveResult(active=True)
            elif names:
                found = await self._dump(names)
                name, data = archive_name(self.prefix, user_id), pack(found)
                await asyncio.to_thread(store.put, name, data)
                if await self._swap_all(marker, token, name, found):
                    payload = sum(len(k.payload) for k in found)
                    return ArchiveResult(
                        archived=True, name=name, keys=len(found), payload_bytes=payload, file_bytes=len(data)
                    )
                await asyncio.to_thread(store.delete, name)
                result = ArchiveResult(changed=True)
        except BaseException:
            await self._release(keys=[marker], args=[token])
            raise
        await self._release(keys=[marker], args=[token])
        return result

    async def _keys(self, user_id: str | bytes, marker: str) -> list[str]:
        found: set[str] = set()
        for pattern in user_patterns(self.prefix, user_id):
            found.update([text(k) async for k in self.client.scan_iter(match=pattern, count=1_000)])
        return sorted(k for k in found if k != marker and k != fence_key(namespace_base(k)))

    async def _dump(self, names: Sequence[str]) -> list[ArchivedKey]:
        pipe = self.client.pipeline(transaction=False)
        for name in names:
            pipe.dump(name)
            pipe.pttl(name)
        raw, now = await pipe.execute(), _now_ms()
        found = []
        for name, payload, ttl in zip(names, raw[::2], raw[1::2], strict=True):
            if payload is not None:  # gone meanwhile (expired)
                expires = now + int(ttl) if int(ttl) > 0 else 0
                found.append(ArchivedKey(name=name, expires_at_ms=expires, payload=payload))
        return found

    async def _swap_all(self, marker: str, token: str, name: str, found: Sequence[ArchivedKey]) -> bool:
        """Delete the archived keys if none changed (and seal the marker); False when one did."""
        if not self.cluster:
            args: list[Any] = ["1", token, name, *[k.payload for k in found]]
            done = int(await self._swap(keys=[marker, *[k.name for k in found]], args=args))
            if done < 0:
                raise StoreError("the claim on a user expired while archiving them: nothing was deleted")
            return done == 1
        if not int(await self._set(keys=[marker], args=[token, "archiving", ""])):  # no expiry from here
            raise StoreError("the claim on a user expired while archiving them: nothing was deleted")
        deleted: list[ArchivedKey] = []
        spaces = sorted(found, key=lambda k: namespace_base(k.name))
        for _, group in groupby(spaces, key=lambda k: namespace_base(k.name)):
            keys = list(group)
            args = ["0", token, name, *[k.payload for k in keys]]
            if not int(await self._swap(keys=[k.name for k in keys], args=args)):
                await self._put_back(deleted)
                return False
            deleted += keys
        await self._set(keys=[marker], args=[token, "archived", name])
        return True

    async def forget(self, user_id: str | bytes) -> bool:
        """Delete the user's archive file and marker (erasure); whether there was a file."""
        await self.client.delete(archived_key(self.prefix, user_id))
        if self.store is None:
            return False
        return await asyncio.to_thread(self.store.delete, archive_name(self.prefix, user_id))


def _now_ms() -> int:
    return int(time.time() * 1000)
