"""The fact worker: reads the queue of new turns and applies them to fact memory, off the reply path.

`running(runtime)` runs one inside the process (what `Assistant.from_settings` does when facts are on);
`brain worker` runs the same loop as its own process, on as many machines as needed. A chat's turns are
applied in order and only once (a per-chat progress marker); a worker that dies leaves its entries pending
and another reclaims them after `memory.facts.reclaim_seconds`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import AsyncIterator, Sequence

from pydantic import BaseModel, ConfigDict

from actions.remember import RememberReport, remember
from actions.summarizer import Summarizer
from brain.errors import BrainError, ConfigError, ConflictError
from brain.llm.usage import SummaryStats
from brain.memory.brain_memory import BrainMemory
from brain.memory.fact_queue import QueueEntry
from brain.memory.window import Window
from brain.message import Message
from brain.runtime import Runtime
from brain.store.protocol import Conversation

__all__ = ["FactWorker", "WorkerReport", "running"]

_log = logging.getLogger("brain.facts")


class WorkerReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    entries: int = 0
    chats: int = 0
    turns: int = 0
    calls: int = 0
    failed: int = 0  # chats left pending after an error (retried later)


class FactWorker:
    """One consumer of the fact queue."""

    def __init__(self, runtime: Runtime, name: str | None = None) -> None:
        if runtime.tiers is None:
            raise ConfigError("fact memory needs Redis: open the runtime with Redis")
        self.runtime, self.tiers = runtime, runtime.tiers
        self.settings = runtime.settings.memory.facts
        self.name = name or f"{socket.gethostname()}-{os.getpid()}-{id(self):x}"

    async def run_once(self, block_ms: int | None = None) -> WorkerReport:
        """Apply one batch: entries other workers abandoned, then new ones (waiting up to `block_ms`)."""
        queue, count = self.tiers.fact_queue, self.settings.batch_turns
        entries = await queue.reclaim(self.name, int(self.settings.reclaim_seconds * 1000), count)
        entries += await queue.read(self.name, count, block_ms if not entries else None)
        chats: dict[tuple[str | bytes, str | bytes], list[QueueEntry]] = {}
        for entry in entries:
            chats.setdefault((entry.user_id, entry.chat_id), []).append(entry)
        done: list[str] = []
        turns = calls = failed = 0
        for (user_id, chat_id), group in chats.items():
            try:
                applied, spent = await self._apply(user_id, chat_id, max(e.upto for e in group))
            except BrainError as exc:  # left pending: this or another worker retries after reclaim_seconds
                _log.warning("fact extraction for %r/%r failed, will retry: %s", user_id, chat_id, exc)
                failed += 1
                continue
            turns, calls = turns + applied, calls + spent
            done += [e.id for e in group]
        await queue.done(done)
        return WorkerReport(entries=len(entries), chats=len(chats), turns=turns, calls=calls, failed=failed)

    async def _apply(self, user_id: str | bytes, chat_id: str | bytes, upto: int) -> tuple[int, int]:
        facts = self.tiers.facts
        start = await facts.progress(user_id, chat_id)
        if upto <= start:
            return 0, 0  # applied before (a redelivered entry): nothing changes
        stored = await self.runtime.store.read_turns(Conversation(user_id, chat_id), start + 1, upto - start)
        messages = [t.message for t in stored if not t.hidden]
        report = await self._remember(user_id, chat_id, messages)
        await facts.set_progress(user_id, chat_id, upto)
        return len(messages), report.calls

    async def _remember(
        self, user_id: str | bytes, chat_id: str | bytes, messages: list[Message]
    ) -> RememberReport:
        """Facts from `messages`. When the chat's unsummarized turns pass `memory.summarize_share` of the
        prompt's window, the same extraction call folds the oldest of them into the summary, so the reply
        path seldom has to summarize (it still does when a window is full: `Assistant.refine_memory`)."""
        llm, facts, settings = self.runtime.memory_llm, self.tiers.facts, self.runtime.settings
        memory = await BrainMemory.loads(
            self.runtime.store, user_id, chat_id, settings=settings.memory, tokenizer=self.runtime.tokenizer
        )
        window = Window.of(settings.memory, settings.llm.context_window)
        if not memory.summary_due(window.share(settings.memory.summarize_share)):
            return await remember(llm, facts, user_id, messages)
        done: list[RememberReport] = []

        async def fold(lines: Sequence[str], max_words: int, keep_language: bool) -> tuple[str, SummaryStats]:
            if self.runtime.tokenizer.count("\n".join(lines)) > settings.memory.window_tokens:
                summarizer = Summarizer.from_settings(llm, self.runtime.tokenizer, settings.memory)
                summary, stats = await summarizer(lines, max_words, True)  # map-reduce, capped
                report = await remember(llm, facts, user_id, messages)
                done.append(report.model_copy(update={"calls": report.calls + stats.calls}))
                return summary, stats
            report = await remember(llm, facts, user_id, messages, fold=lines, max_words=max_words)
            done.append(report)
            return report.summary or "", SummaryStats(calls=1, estimated_prompt_tokens=report.prompt_tokens)

        try:
            await memory.summarize(
                fold,
                settings.memory.summary_max_words,
                keep_recent=window.share(settings.memory.keep_recent_share),
            )
        except ConflictError:  # a turn summarized the chat meanwhile; the facts are what matters here
            if not done:
                raise
        return done[0] if done else await remember(llm, facts, user_id, messages)

    async def run(self, stop: asyncio.Event) -> None:
        """Apply batches until `stop` is set; errors are logged and retried, never fatal."""
        block = int(self.settings.idle_seconds * 1000)
        while not stop.is_set():
            try:
                await self.run_once(block)
            except BrainError as exc:
                _log.warning("fact worker %s: %s; retrying", self.name, exc)
                await asyncio.sleep(self.settings.idle_seconds)


@contextlib.asynccontextmanager
async def running(runtime: Runtime) -> AsyncIterator[FactWorker | None]:
    """An in-process worker while the block runs (None when facts are off, `brain worker` processes do the
    work instead, or there is no Redis)."""
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
