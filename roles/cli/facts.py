"""`brain memory facts|history|rollback` and `brain worker [status|retry]`: fact memory (and the graph's
audit) and the workers that fill it, from the command line."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys

from brain import telemetry
from brain.backends.redis import RedisBackend, RedisConnection
from brain.errors import InputError
from brain.runtime import open_runtime
from brain.search.analysis import searchable
from brain.settings import Settings
from roles.cli.archive import sweep_periodically
from roles.cli.progress import progress_to
from roles.cli.retention import retain_periodically
from roles.cli.shown import shown_date
from roles.fact_worker import FactWorker
from roles.service import as_of_time as when

__all__ = ["fact_command", "worker_command"]


async def fact_command(settings: Settings, args: argparse.Namespace) -> int:
    async with open_runtime(settings, defer_model=True) as runtime:
        assert runtime.tiers is not None
        await runtime.tiers.present(args.user)
        facts = runtime.tiers.facts
        if args.memory_command == "facts":
            if args.repair:
                with progress_to(sys.stderr) as progress:
                    fixed = await facts.repair(args.user, progress)
                print(f"indexed {fixed} fact(s) that search could not find", file=sys.stderr)
            as_of = when(args.as_of) if args.as_of else None
            if args.search:
                if not searchable(args.search):
                    raise InputError(
                        f"nothing to search for in {args.search!r}: only stop words or punctuation"
                    )
                found = await facts.search(args.user, args.search, limit=50, as_of=as_of)
            else:
                found = await facts.all(args.user, current_only=not args.all and as_of is None)
                found = [f for f in found if as_of is None or f.true_at(as_of)]
            for fact in found:
                state = "" if fact.current else f" (retired {shown_date(fact.expired_at)})"
                key = f" {fact.key}:" if fact.key else ""
                print(f"{fact.id}  [{fact.category}]{key} {fact.text}{state}")
            print(f"{len(found)} fact(s)", file=sys.stderr)
        elif args.memory_command == "history":
            for e in await facts.history(args.user, args.fact):
                change = (
                    f"{e.old_text!r} -> {e.new_text!r}"
                    if e.old_text and e.new_text
                    else e.new_text or e.old_text
                )
                by = f" by {e.actor}" if e.actor else ""
                why = f" ({e.reason})" if e.reason else ""
                what = "relation " if e.subject == "relation" else ""
                print(f"{e.id}  {shown_date(e.at)}  {e.event:<8} {what}{e.fact_id}  {change}{by}{why}")
        else:
            event = await runtime.tiers.rollback(args.user, args.event, actor="cli")
            what = "a relation" if event.subject == "relation" else "a fact"
            print(f"rolled back {args.event} ({what}, audited)")
    return 0


async def worker_command(settings: Settings, args: argparse.Namespace) -> int:
    """`brain worker` (`--once`), `brain worker status`, `brain worker retry`."""
    if getattr(args, "worker_command", None) is not None:
        return await _queue_command(settings, args)
    telemetry.configure(settings.telemetry)
    async with open_runtime(settings) as runtime:
        worker = FactWorker(runtime)
        if args.once:
            report = await worker.run_once(block_ms=None)
            print(f"applied {report.turns} turns of {report.chats} chats ({report.calls} LLM calls)")
            if report.parked:
                print(f"{report.parked} chat(s) parked as dead letters: see brain worker status")
            return 1 if report.failed or report.parked else 0
        print(f"fact worker {worker.name}: applying queued turns; Ctrl-C stops it", file=sys.stderr)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        sweeping = asyncio.create_task(sweep_periodically(runtime, stop), name="brain-archive-sweep")
        retaining = asyncio.create_task(retain_periodically(runtime, stop), name="brain-retention")
        await worker.run(stop)
        for job in (sweeping, retaining):
            job.cancel()  # an archive cut short leaves its user in Redis; retention is idempotent
            with contextlib.suppress(asyncio.CancelledError):
                await job
        drain = settings.memory.facts.drain_seconds
        print(f"fact worker {worker.name}: stopping; applying what it holds (≤ {drain:g} s)", file=sys.stderr)
        try:
            report = await asyncio.wait_for(worker.drain(), drain)
        except TimeoutError:
            print("what was left stays pending; another worker reclaims it", file=sys.stderr)
            return 1
        print(f"applied {report.turns} turns of {report.chats} chats ({report.calls} LLM calls)")
    return 0


async def _queue_command(settings: Settings, args: argparse.Namespace) -> int:
    """The queue's state, or dead letters queued again: Redis only, no model."""
    async with await RedisConnection.open(settings) as connection:
        queue = RedisBackend.for_settings(connection.client, settings).queue
        if args.worker_command == "retry":
            ids = None if args.all else list(dict.fromkeys(args.ids))
            done = await queue.requeue(ids)
            print(f"re-queued {done} dead letter(s)")
            if ids is not None and done < len(ids):
                print(f"{len(ids) - done} id(s) named no dead letter", file=sys.stderr)
                return 1
            return 0
        backlog, pending, dead = await queue.backlog(), await queue.pending(), await queue.dead()
        print(f"queued: {backlog} entries ({pending} taken by a worker, not yet applied)")
        print(f"dead letters: {dead}" + (" (brain worker retry --all queues them again)" if dead else ""))
        for letter in await queue.parked(max(args.limit, 0)):
            print(
                f"{letter.id}  {shown_date(letter.at)}  user {letter.user_id!r} chat {letter.chat_id!r}  "
                f"turns up to {letter.upto}  {letter.attempts} tries  {_line(letter.reason)}"
            )
    return 0


def _line(text: str) -> str:
    """`text` on one line, every control or invisible character shown as U+FFFD. Pure."""
    return "".join(c if c.isprintable() else "\ufffd" for c in text.replace("\n", " "))
