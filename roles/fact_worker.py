"""The fact worker: reads the queue of new turns and applies them to fact memory, off the reply path.

`running(runtime)` runs one inside the process (what `Assistant.from_settings` does when facts are on);
`brain worker` runs the same loop as its own process, on as many machines as needed. A chat's turns are
applied in order and only once (a per-chat progress marker); a worker that dies leaves its entries pending
and another reclaims them after `memory.facts.reclaim_seconds`.

A batch the model answers unusably (`MalformedReplyError`) counts a try of the chat in the store
(`FactQueue.tried`: every worker and restart sees it); at `memory.facts.max_attempts` its entries are parked
as a dead letter saying what came back (`brain worker status|retry`). Failing to get an answer at all counts
nothing. Logs name a chat by `brain.keys.log_tag` and an error by its class, never ids or replies.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from actions.remember import RememberReport, remember
from actions.remember_graph import remember_graph
from actions.summarizer import Summarizer
from brain import telemetry
from brain.errors import (
    BrainError,
    ConfigError,
    ConflictError,
    ContextOverflowError,
    ErasedError,
    MalformedReplyError,
)
from brain.keys import log_tag
from brain.llm.batching import cut
from brain.llm.usage import SummaryStats, spending
from brain.memory.brain_memory import BrainMemory
from brain.memory.steps import is_step
from brain.memory.usage import record_spending
from brain.memory.window import Window
from brain.message import Message
from brain.progress import Progress, report
from brain.runtime import Runtime
from brain.storage import fence
from brain.storage.conversation import Conversation, Turn
from brain.storage.queue import QueueEntry

__all__ = ["DRAINING", "FactWorker", "WorkerReport", "batches", "running"]

DRAINING = "learning facts (Ctrl-C: next time)"
"""The task a worker's `progress` is told of: the facts of the chats it applies (short: a terminal's bar
shows it in front of its counts; Ctrl-C leaves what is not applied queued for the next worker)."""

_log = logging.getLogger("brain.facts")


class WorkerReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    entries: int = 0
    chats: int = 0
    turns: int = 0  # turns of the batches recorded done, those before a chat's failed batch included
    calls: int = 0  # completions the memory model made meanwhile, those of failed batches included
    failed: int = 0  # chats left pending after an error (retried later)
    parked: int = 0  # chats whose entries were parked as dead letters (malformed replies, tries spent)


@dataclass
class _Tally:
    """What a run applied so far (batches recorded done)."""

    turns: int = 0
    calls: int = 0  # chat calls made (those of failed batches included)
    parked: int = 0


@dataclass
class _Held:
    """A chat's entries this worker holds back for a bigger batch, and when it first and last saw one."""

    first: float
    last: float = 0.0
    entries: list[QueueEntry] = field(default_factory=list)

    @property
    def upto(self) -> int:
        """The last turn the entries name."""
        return max(e.upto for e in self.entries)


class FactWorker:
    """One consumer of the fact queue."""

    def __init__(self, runtime: Runtime, name: str | None = None) -> None:
        if runtime.tiers is None:
            raise ConfigError("fact memory needs Redis: open the runtime with Redis")
        self.runtime, self.tiers = runtime, runtime.tiers
        self.settings = runtime.settings.memory.facts
        self.name = name or f"{socket.gethostname()}-{os.getpid()}-{id(self):x}"
        self._held: dict[tuple[str | bytes, str | bytes], _Held] = {}

    async def run_once(
        self, block_ms: int | None = None, *, hold: bool = False, progress: Progress | None = None
    ) -> WorkerReport:
        """Apply what is queued: entries other workers abandoned, then new ones (waiting up to `block_ms`);
        `progress` is told how many of the chats due are done (`DRAINING`).

        With `hold` (what `run` does), a chat's entries wait until it has `batch_turns` new turns, has been
        quiet for `idle_seconds`, or its oldest entry is half way to `reclaim_seconds`: a busy chat costs
        one extraction per batch, not per turn. Held entries stay pending in the stream (a crash loses
        nothing: they are reclaimed)."""
        queue, settings = self.tiers.fact_queue, self.settings
        reclaim_ms, most = int(settings.reclaim_seconds * 1000), 10 * settings.batch_turns
        entries = await queue.reclaim(self.name, reclaim_ms, most)
        entries += await queue.read(self.name, most, block_ms if not entries else None)
        now = time.monotonic()
        for entry in entries:
            held = self._held.setdefault((entry.user_id, entry.chat_id), _Held(first=now))
            held.entries.append(entry)
            held.last = now
        due = [chat for chat, held in self._held.items() if not hold or self._due(held, now)]
        groups = [(chat, self._held.pop(chat)) for chat in due]
        limit = asyncio.Semaphore(settings.concurrency)

        tally = _Tally()
        finished = [0]
        report(progress, DRAINING, 0, len(groups), "chats")

        async def apply(chat: tuple[str | bytes, str | bytes], held: _Held) -> bool:
            ok = await applied_one(chat, held)  # one cancelled (a drain's deadline) is not told as done
            finished[0] += 1
            report(progress, DRAINING, finished[0], len(groups), "chats")
            return ok

        async def applied_one(chat: tuple[str | bytes, str | bytes], held: _Held) -> bool:
            async with limit:  # chats in parallel, each in order: one busy chat does not hold up the rest
                try:
                    # short of a batch: another worker's batch (`_apply` fills its last one with newer
                    # turns) may have applied these entries' turns already, then nothing is left to do
                    if not self._full(held) and await self.tiers.facts.progress(*chat) >= held.upto:
                        return True
                    await self.tiers.present(chat[0])  # an archived user's turns come back first
                    # taken before the turns are read: an erasure from now on drops what the batch writes
                    with fence.holding(await self.tiers.backend.erasure.ticket(*chat)):
                        return await self._apply_counted(chat, held, tally)
                except ErasedError:  # the chat or its user was erased meanwhile: nothing left to do
                    _log.info("fact extraction for %s dropped: erased meanwhile", log_tag(*chat))
                    return True

        results = await asyncio.gather(*(apply(chat, held) for chat, held in groups))

        applied = [held for ok, (_, held) in zip(results, groups, strict=True) if ok]
        await queue.done([e.id for held in applied for e in held.entries])
        if telemetry.enabled():
            telemetry.queue_depth(await queue.backlog())
        return WorkerReport(
            entries=len(entries),
            chats=len(due),
            turns=tally.turns,
            calls=tally.calls,
            failed=len(groups) - len(applied),
            parked=tally.parked,
        )

    async def _apply_counted(self, chat: tuple[str | bytes, str | bytes], held: _Held, tally: _Tally) -> bool:
        """Apply one chat's entries, counting what it spent (a failed batch spent its calls too); False
        when it failed and stays pending for a retry (True when it was parked instead)."""
        with spending() as spent:
            try:
                with telemetry.span("brain.facts.batch", {"brain.batch.entries": len(held.entries)}):
                    await self._apply(*chat, held.upto, tally)
                await self.tiers.fact_queue.untried(*chat)
                return True
            except ErasedError:
                raise
            except (MalformedReplyError, ContextOverflowError) as exc:  # the same batch fails the same way
                telemetry.count_error("facts.batch")
                return await self._malformed(chat, held.entries, exc, tally)
            except BrainError as exc:  # left pending: a worker retries after reclaim_seconds
                telemetry.count_error("facts.batch")
                tag, kind = log_tag(*chat), type(exc).__name__
                _log.warning("fact extraction for %s failed (%s); will retry", tag, kind)
                return False
            finally:
                tally.calls += spent.calls_of("chat", "stream")
                usage = self.runtime.backend.usage if self.runtime.backend is not None else None
                await record_spending(usage, *chat, spent)

    async def _malformed(
        self, chat: tuple[str | bytes, str | bytes], group: list[QueueEntry], exc: BrainError, tally: _Tally
    ) -> bool:
        """One more try of the chat's batch counted; at `max_attempts`, its entries parked as a dead letter
        (the error, which says what came back, as its reason) and True; else False (left pending)."""
        queue, most, tag = self.tiers.fact_queue, self.settings.max_attempts, log_tag(*chat)
        tries = await queue.tried(*chat)
        if tries < most:
            _log.warning("fact extraction for %s: malformed reply (try %d of %d)", tag, tries, most)
            return False
        letter = await queue.park(group, str(exc), tries)
        tally.parked += 1
        _log.warning("fact extraction for %s: malformed reply %d times; parked as %s", tag, tries, letter.id)
        return True

    def _due(self, held: _Held, now: float) -> bool:
        settings = self.settings
        return (
            self._full(held)
            or now - held.last >= settings.idle_seconds
            or now - held.first >= settings.reclaim_seconds / 2
        )

    def _full(self, held: _Held) -> bool:
        """Whether the entries held span a batch (a chat quiet, or reclaimed, may be applied short of one)."""
        uptos = [e.upto for e in held.entries]
        return max(uptos) - min(uptos) + 2 >= self.settings.batch_turns  # an entry is one exchange

    async def _apply(self, user_id: str | bytes, chat_id: str | bytes, upto: int, tally: _Tally) -> None:
        """Apply the chat's turns up to `upto` (the last batch filled with newer ones already stored),
        counting in `tally` the turns of each batch recorded done (those of a later batch that fails
        included)."""
        facts, settings = self.tiers.facts, self.settings
        start = await facts.progress(user_id, chat_id)
        if upto <= start:
            return  # applied before (a redelivered entry): nothing changes
        # the last batch filled with newer turns already stored: their entries, which other workers may
        # hold, are then done when those come to them, instead of each making a small batch of its own
        count = -(-(upto - start) // settings.batch_turns) * settings.batch_turns
        stored = await self.runtime.store.read_turns(Conversation(user_id, chat_id), start + 1, count)
        # A chat that fell behind (a burst, a worker that was down) is read in bounded batches, each one
        # recorded as done before the next: prompts stay small and a failure repeats one batch only.
        for batch in batches(stored, settings.batch_turns, settings.batch_tokens):
            # what the user and the assistant said; the agent's tool steps hold no new facts of the user
            messages = [self._clipped(t) for t in batch if not t.hidden and not is_step(t.message)]
            report = await self._remember(user_id, chat_id, messages)
            await self._graph(user_id, messages, report.hashes)
            await facts.set_progress(user_id, chat_id, batch[-1].seq)
            tally.turns += len(messages)

    async def _graph(self, user_id: str | bytes, messages: list[Message], hashes: Sequence[str]) -> None:
        """The batch's entities and relations, linked to the facts it gave (when graph memory is on).
        A failure leaves the batch pending: the facts part repeats without a call."""
        settings = self.runtime.settings.memory.graph
        if not settings.enabled or not messages:
            return
        facts = self.tiers.facts
        ids = list((await facts.by_hash(user_id, list(hashes))).values())
        texts = {f.id: f.text for f in await facts.get_many(user_id, ids)}
        await remember_graph(
            self.runtime.memory_llm, self.tiers.graph, user_id, messages, settings, facts=texts
        )

    def _clipped(self, turn: Turn) -> Message:
        """The message, its text cut to `batch_tokens` when one message alone is longer."""
        limit, message = self.settings.batch_tokens, turn.message
        if turn.tokens <= limit or not message.content:
            return message
        _log.info(
            "fact extraction reads the first %d of %d tokens of message %s", limit, turn.tokens, message.id
        )
        return message.model_copy(update={"content": self.runtime.tokenizer.truncate(message.content, limit)})

    async def _remember(
        self, user_id: str | bytes, chat_id: str | bytes, messages: list[Message]
    ) -> RememberReport:
        """Facts from `messages`. When the chat's unsummarized turns pass `memory.summarize_share` of the
        prompt's window, the same extraction call folds the oldest of them into the summary, so the reply
        path seldom has to summarize (it still does when a window is full: `BrainMode.refine`)."""
        llm, facts, settings = self.runtime.memory_llm, self.tiers.facts, self.runtime.settings
        memory = await BrainMemory.loads(
            self.runtime.store, user_id, chat_id, settings=settings.memory, tokenizer=self.runtime.tokenizer
        )
        window = Window.of(settings.memory, settings.llm.context_window)
        tuned: dict[str, Any] = {"settings": self.settings, "count": self.runtime.tokenizer.count}
        if not memory.summary_due(window.share(settings.memory.summarize_share)):
            return await remember(llm, facts, user_id, messages, **tuned)
        done: list[RememberReport] = []

        async def fold(lines: Sequence[str], max_words: int, keep_language: bool) -> tuple[str, SummaryStats]:
            if self.runtime.tokenizer.count("\n".join(lines)) > settings.memory.window_tokens:
                summarizer = Summarizer.from_settings(llm, self.runtime.tokenizer, settings.memory)
                summary, stats = await summarizer(lines, max_words, True)  # map-reduce, capped
                report = await remember(llm, facts, user_id, messages, **tuned)
                done.append(report.model_copy(update={"calls": report.calls + stats.calls}))
                return summary, stats
            report = await remember(llm, facts, user_id, messages, fold=lines, max_words=max_words, **tuned)
            done.append(report)
            return report.summary or "", SummaryStats(calls=1, estimated_prompt_tokens=report.prompt_tokens)

        try:
            await memory.summarize(
                fold, settings.memory.summary_max_words, keep_language=True, keep_recent=self._keep(window)
            )
        except ConflictError:  # a turn summarized the chat meanwhile; the facts are what matters here
            if not done:
                raise
        return done[0] if done else await remember(llm, facts, user_id, messages, **tuned)

    def _keep(self, window: Window) -> Window:
        """What a fold by the worker keeps verbatim: `keep_recent_share` of the window, but little enough
        that the chat's next batch (plus a little lag) still fits, so that the worker folds again before a
        turn would have to summarize on the reply path."""
        keep = window.share(self.runtime.settings.memory.keep_recent_share)
        batch = self.settings.batch_turns
        headroom = max(window.turns - batch - batch // 5, window.turns // 4)
        return Window(turns=min(keep.turns, headroom), tokens=keep.tokens)

    async def run(self, stop: asyncio.Event) -> None:
        """Apply batches until `stop` is set; errors are logged and retried, never fatal. While chats are
        held, the worker reads every quarter of `idle_seconds` instead of waking for each turn (it shares
        the event loop with the turns it serves)."""
        block = int(self.settings.idle_seconds * 1000)
        while not stop.is_set():
            try:
                if self._held:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stop.wait(), self.settings.idle_seconds / 4)
                await self.run_once(None if self._held else block, hold=True)
            except BrainError as exc:
                _log.warning("fact worker %s: %s; retrying", self.name, exc)
                await asyncio.sleep(self.settings.idle_seconds)

    async def drain(self, progress: Progress | None = None) -> WorkerReport:
        """Apply everything this worker holds or could read now, without waiting for more (at shutdown,
        so the last turns of a session are not left for the next worker to reclaim); `progress` is told
        how it goes, chat by chat."""
        return await self.run_once(None, hold=False, progress=progress)


def batches(turns: Sequence[Turn], max_turns: int, max_tokens: int) -> list[list[Turn]]:
    """`turns` in order, cut into batches of at most `max_turns` turns and `max_tokens` tokens (a longer
    turn alone is a batch of its own). Pure."""
    return [list(turns[r.start : r.stop]) for r in cut([t.tokens for t in turns], max_turns, max_tokens)]


@contextlib.asynccontextmanager
async def running(runtime: Runtime, progress: Progress | None = None) -> AsyncIterator[FactWorker | None]:
    """An in-process worker while the block runs (None when facts are off, `brain worker` processes do the
    work instead, or there is no Redis). On exit it drains for at most `memory.facts.drain_seconds`,
    telling `progress` how it goes; what it could not apply stays pending for the next worker."""
    facts = runtime.settings.memory.facts
    if not facts.enabled or not facts.in_process_worker or runtime.tiers is None:
        yield None
        return
    worker, stop = FactWorker(runtime), asyncio.Event()
    task = asyncio.create_task(worker.run(stop), name="brain-fact-worker")
    try:
        yield worker
    finally:
        stop.set()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        if facts.drain_seconds > 0:
            try:
                await asyncio.wait_for(worker.drain(progress), facts.drain_seconds)
            except (BrainError, TimeoutError) as exc:
                _log.warning(
                    "fact worker %s: stopped before applying everything (%s); a worker will reclaim the "
                    "rest after memory.facts.reclaim_seconds",
                    worker.name,
                    type(exc).__name__ if isinstance(exc, TimeoutError) else exc,
                )
