"""`brain memory archive --idle-days N [--dry-run]` and `brain memory restore --user U`: cold users out of
RAM and back (`brain.backends.redis.archive`); and the sweep `brain worker` runs when
`memory.archive_idle_days` is set. Progress goes to stderr, results to stdout."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import time

from brain.backends.redis import RedisBackend
from brain.backends.redis.archive_sweep import sweep
from brain.errors import BrainError, InputError
from brain.runtime import Runtime, open_runtime
from brain.settings import Settings
from roles.cli.progress import progress_to

__all__ = ["SWEEP_EVERY_S", "archive_command", "sweep_periodically"]

SWEEP_EVERY_S = 3_600.0
"""How often `brain worker` looks for idle users (with `memory.archive_idle_days`)."""

_log = logging.getLogger("brain.archive")


def _backend(runtime: Runtime) -> RedisBackend:
    if not isinstance(runtime.backend, RedisBackend):
        raise InputError("the cold archive takes users out of Redis; this runtime keeps memory elsewhere")
    return runtime.backend


async def archive_command(settings: Settings, args: argparse.Namespace) -> int:
    async with open_runtime(settings, defer_model=True) as runtime:
        archive = _backend(runtime).archive
        if args.memory_command == "restore":
            if not await archive.present(args.user):
                print(f"user {args.user!r} is not in the cold archive")
                return 0
            print(f"restored user {args.user!r} from the cold archive")
            return 0
        if args.idle_days <= 0:
            raise InputError("--idle-days must be above 0")
        print(f"looking for users idle {args.idle_days:g} days (a full scan) ...", file=sys.stderr)
        with progress_to(sys.stderr) as progress:
            users, done = await sweep(archive, args.idle_days, dry_run=args.dry_run, progress=progress)
    if args.dry_run:
        for user in users:
            when = time.strftime("%Y-%m-%d", time.gmtime(user.last_active))
            print(f"{user.user_id!r}  last active {when}  {user.chats} chats")
        print(f"{done.idle} users idle {args.idle_days:g} days; nothing archived (--dry-run)")
        return 0
    where = archive.store.where if archive.store is not None else "?"
    print(
        f"archived {done.archived} of {done.idle} idle users ({done.keys:,} keys, {done.file_bytes:,} bytes "
        f"compressed) into {where}"
    )
    left = {"active again": done.active, "changed while archiving": done.changed, "busy": done.busy}
    if any(left.values()):
        print("left in Redis: " + ", ".join(f"{n} {why}" for why, n in left.items() if n))
    return 0


async def sweep_periodically(runtime: Runtime, stop: asyncio.Event, every_s: float = SWEEP_EVERY_S) -> None:
    """`brain worker`'s archive job: every `every_s` seconds, archive the users idle for
    `memory.archive_idle_days` (nothing when unset or without Redis), until `stop` is set. A failed sweep
    is logged and tried again next time."""
    days = runtime.settings.memory.archive_idle_days
    if days is None or not isinstance(runtime.backend, RedisBackend):
        return
    archive = runtime.backend.archive
    while not stop.is_set():
        try:
            _, done = await sweep(archive, days)
            if done.archived:
                _log.info("archived %d users idle %d days (%d keys)", done.archived, days, done.keys)
        except BrainError as exc:
            _log.warning("archiving idle users failed, trying again later: %s", exc)
        try:
            await asyncio.wait_for(stop.wait(), every_s)
        except TimeoutError:
            continue
