"""`brain memory retain [--user U] [--dry-run]`: the retention policy (`memory.retention`) applied now, and
the job `brain worker` runs every `memory.retention.every_seconds` when a policy is set
(`brain.memory.retention`). Progress goes to stderr, results to stdout."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from brain.backends.redis import RedisBackend
from brain.backends.redis.retention_sweep import retention_candidates
from brain.errors import BrainError, InputError
from brain.memory.retention import ChatRetention, RetentionReport, apply_retention
from brain.progress import Progress
from brain.runtime import Runtime, open_runtime
from brain.settings import Settings
from brain.storage.conversation import Conversation
from roles.cli.progress import progress_to

__all__ = ["retain", "retain_command", "retain_periodically"]

_log = logging.getLogger("brain.retention")


async def retain(
    runtime: Runtime,
    user_id: str | bytes | None = None,
    *,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> tuple[list[ChatRetention], RetentionReport]:
    """Apply the policy to `user_id`'s chats (brought back from the cold archive first), or to every chat
    with summarized turns still verbatim (Redis only)."""
    settings, tiers = runtime.settings.memory, runtime.tiers
    if tiers is None:
        raise InputError("retention needs the memory backend (Redis); this runtime has none")
    if user_id is not None:
        await tiers.present(user_id)
        chats = [Conversation(user_id, c) for c in await runtime.store.list_chats(user_id)]
    elif isinstance(runtime.backend, RedisBackend):
        chats = await retention_candidates(runtime.backend.client, runtime.backend.prefix)
    else:
        raise InputError("retention over every chat needs Redis; name a user with --user")
    return await apply_retention(
        runtime.store,
        tiers,
        chats,
        settings.retention,
        facts_on=settings.facts.enabled,
        dry_run=dry_run,
        progress=progress,
    )


async def retain_command(settings: Settings, args: argparse.Namespace) -> int:
    policy = settings.memory.retention
    if not policy.enabled:
        print("memory.retention keeps every turn (keep_turns and keep_days are null): nothing to do")
        return 0
    async with open_runtime(settings, defer_model=True) as runtime:
        with progress_to(sys.stderr) as progress:
            chats, done = await retain(runtime, args.user, dry_run=args.dry_run, progress=progress)
    for chat in chats:
        if chat.dropped or chat.unindexed:
            print(
                f"{chat.user_id!r}/{chat.chat_id!r}: turns {chat.before + 1}-{chat.upto} of {chat.turns} "
                f"{'would lose' if args.dry_run else 'lost'} their text ({chat.dropped} turns; summary to "
                f"{chat.summary_upto}, facts to {'-' if chat.extracted is None else chat.extracted}"
                + ("" if args.dry_run else f"; {chat.unindexed} recall entries deleted")
                + ")"
            )
    verb = "would lose their text (--dry-run: nothing changed)" if args.dry_run else "lost their text"
    print(f"{done.turns} turns of {done.changed} of {done.chats} chats {verb}")
    return 0


async def retain_periodically(runtime: Runtime, stop: asyncio.Event) -> None:
    """`brain worker`'s retention job: every `memory.retention.every_seconds`, apply the policy to the chats
    with summarized turns still verbatim (nothing when no policy is set or without Redis), until `stop` is
    set. A failed run is logged and tried again next time."""
    policy = runtime.settings.memory.retention
    if not policy.enabled or not isinstance(runtime.backend, RedisBackend):
        return
    while not stop.is_set():
        try:
            _, done = await retain(runtime)
            if done.turns or done.unindexed:
                _log.info("retention dropped the text of %d turns of %d chats", done.turns, done.changed)
        except BrainError as exc:
            _log.warning("applying retention failed, trying again later: %s", exc)
        try:
            await asyncio.wait_for(stop.wait(), policy.every_seconds)
        except TimeoutError:
            continue
