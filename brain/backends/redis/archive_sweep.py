"""Finding cold users and moving them to the cold archive (`brain memory archive --idle-days N`, and
`brain worker` when `memory.archive_idle_days` is set).

A user's last activity is the newest `updated_at` (else `created_at`) of their chats' meta hashes: every
turn writes it when it starts (the pending text) and when it commits, so no write is added to the turn for
this. One SCAN of the deployment's conversation metas finds everyone (long ids are hashed in key names, so
the ids are read from the metas). Users with no chat at all (facts or documents only) are never found
here. The second look after the claim (`UserArchive.archive(quiet=...)`) reads the activity of the chats the
user has then: a turn that began before the claim has written its pending text, so the user is left alone.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from brain.backends.redis.archive import Quiet, UserArchive
from brain.backends.redis.client import RedisClient
from brain.keys import key_family, readable_id
from brain.progress import Progress, report

__all__ = ["IdleUser", "SweepReport", "idle_users", "sweep"]

_CHUNK = 500
DAY_S = 86_400


class IdleUser(BaseModel):
    """A user none of whose chats changed since `last_active` (Unix time)."""

    model_config = ConfigDict(frozen=True)

    user_id: str | bytes
    last_active: float
    chats: int


class SweepReport(BaseModel):
    """What a sweep found and did: users `idle`, `archived` (with their `keys` and compressed
    `file_bytes`), and those left in RAM because they turned out `active`, `changed` while being archived,
    or were `busy` (archived already, or another process at it)."""

    model_config = ConfigDict(frozen=True)

    idle: int = 0
    archived: int = 0
    keys: int = 0
    file_bytes: int = 0
    active: int = 0
    changed: int = 0
    busy: int = 0


async def idle_users(
    client: RedisClient, prefix: str, idle_days: float, now: float | None = None
) -> list[IdleUser]:
    """Users whose every chat has been idle at least `idle_days`, longest idle first (one full SCAN)."""
    cutoff = (time.time() if now is None else now) - idle_days * DAY_S
    metas = [k async for k in client.scan_iter(match=f"{prefix}:{{[bh]*}}:meta", count=1_000)]
    newest: dict[bytes, tuple[float, int]] = {}
    for start in range(0, len(metas), _CHUNK):
        pipe = client.pipeline(transaction=False)
        for key in metas[start : start + _CHUNK]:
            pipe.hmget(key, ["user_id", "updated_at", "created_at"])
        for user, updated, created in await pipe.execute():
            if user is None:
                continue
            when, chats = newest.get(user, (0.0, 0))
            newest[user] = (max(when, _time(updated, created)), chats + 1)
    found = [
        IdleUser(user_id=readable_id(user), last_active=when, chats=chats)
        for user, (when, chats) in newest.items()
        if when < cutoff
    ]
    return sorted(found, key=lambda u: u.last_active)


def still_idle(client: RedisClient, cutoff: float) -> Quiet:
    """The check `UserArchive.archive` makes after its claim: no chat of the user's changed since `cutoff`."""

    async def quiet(names: Sequence[str]) -> bool:
        metas = [n for n in names if n.endswith(":meta") and key_family(n) == "conversation"]
        pipe = client.pipeline(transaction=False)
        for name in metas:
            pipe.hmget(name, ["updated_at", "created_at"])
        return all(_time(*times) < cutoff for times in await pipe.execute())

    return quiet


async def sweep(
    archive: UserArchive,
    idle_days: float,
    *,
    dry_run: bool = False,
    progress: Progress | None = None,
    now: float | None = None,
) -> tuple[list[IdleUser], SweepReport]:
    """Archive every user idle at least `idle_days` (none with `dry_run`): the idle users, what was done."""
    now = time.time() if now is None else now
    users = await idle_users(archive.client, archive.prefix, idle_days, now)
    if dry_run:
        return users, SweepReport(idle=len(users))
    quiet, tally = still_idle(archive.client, now - idle_days * DAY_S), SweepReport(idle=len(users))
    for done, user in enumerate(users, 1):
        result = await archive.archive(user.user_id, quiet)
        tally = tally.model_copy(
            update={
                "archived": tally.archived + result.archived,
                "keys": tally.keys + result.keys,
                "file_bytes": tally.file_bytes + result.file_bytes,
                "active": tally.active + result.active,
                "changed": tally.changed + result.changed,
                "busy": tally.busy + result.busy,
            }
        )
        report(progress, "archiving idle users", done, len(users), "users")
    return users, tally


def _time(updated: bytes | None, created: bytes | None = None) -> float:
    """When a chat last changed: `updated_at`, else `created_at` (0 when neither reads as a time). Pure."""
    for raw in (updated, created):
        if raw is None:
            continue
        try:
            return float(raw)
        except ValueError:
            continue
    return 0.0
