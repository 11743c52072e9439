"""Capped map-reduce summarization of transcript lines, measured in tokens.

Each round packs whole lines into windows of at most `window_tokens`, summarizes the windows concurrently
(bounded), and must shrink the text; a single window gets the final call. Hard caps bound the LLM calls and
prompt tokens of one run. When the input is larger than the prompt-token cap allows, each line is first cut
to a common token length (deterministic, keeps every speaker label). When a round would break a cap or does
not shrink the text, the run stops and the text is truncated deterministically instead.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence

from actions.summarize import render_summarize, summarize_text
from brain.errors import LLMError
from brain.llm.protocol import LLM
from brain.llm.tokens import OFFLINE_ENCODING, Tokenizer
from brain.llm.usage import SummaryStats
from brain.settings import MemorySettings

__all__ = ["Summarizer", "SummaryStats", "fit_lines", "pack_windows", "window_words"]

FLOOR_WORDS = 40  # no window is asked for fewer words than this
TOKENS_PER_WORD = 4 / 3


def window_words(n_windows: int, max_words: int, floor: int = FLOOR_WORDS) -> int:
    """Words asked of each window: together about twice the final budget, never below `floor`."""
    return max(floor, math.ceil(2 * max_words / max(n_windows, 1)))


def pack_windows(lines: Sequence[str], counts: Sequence[int], window_tokens: int) -> list[list[str]]:
    """Greedy packing of whole lines into windows of at most `window_tokens` (a longer line stands alone)."""
    windows: list[list[str]] = []
    current: list[str] = []
    size = 0
    for line, count in zip(lines, counts, strict=True):
        if current and size + count > window_tokens:
            windows.append(current)
            current, size = [], 0
        current.append(line)
        size += count
    if current:
        windows.append(current)
    return windows


def fit_lines(lines: Sequence[str], counts: Sequence[int], budget: int, tokenizer: Tokenizer) -> list[str]:
    """Cut the longest lines to one common length so the total fits `budget` tokens (water-filling)."""
    if sum(counts) <= budget:
        return list(lines)
    low, high = 1, max(counts)
    while low < high:  # the largest cap whose total fits
        mid = (low + high + 1) // 2
        if sum(min(c, mid) for c in counts) <= budget:
            low = mid
        else:
            high = mid - 1
    return [
        line if c <= low else tokenizer.truncate(line, max(low - 1, 1)) + "…"
        for line, c in zip(lines, counts, strict=True)
    ]


class Summarizer:
    """Runs the capped summarization against an injected LLM."""

    def __init__(
        self,
        llm: LLM,
        tokenizer: Tokenizer | None = None,
        *,
        window_tokens: int = 4_000,
        max_calls: int = 20,
        max_prompt_tokens: int = 40_000,
        concurrency: int = 4,
    ) -> None:
        self.llm = llm
        self.tokenizer = tokenizer or Tokenizer.for_model("", OFFLINE_ENCODING)
        self.window_tokens = window_tokens
        self.max_calls = max_calls
        self.max_prompt_tokens = max_prompt_tokens
        self.concurrency = concurrency

    @classmethod
    def from_settings(cls, llm: LLM, tokenizer: Tokenizer | None, settings: MemorySettings) -> Summarizer:
        return cls(
            llm,
            tokenizer,
            window_tokens=settings.window_tokens,
            max_calls=settings.summarize_max_calls,
            max_prompt_tokens=settings.summarize_max_prompt_tokens,
            concurrency=settings.summarize_concurrency,
        )

    def _overhead(self, max_words: int, keep_language: bool) -> int:
        return self.tokenizer.count_messages(
            m.content or "" for m in render_summarize("", max_words, keep_language)
        )

    async def __call__(
        self, lines: Sequence[str], max_words: int, keep_language: bool = False
    ) -> tuple[str, SummaryStats]:
        return await self.summarize(lines, max_words, keep_language)

    async def summarize(
        self, lines: Sequence[str], max_words: int, keep_language: bool = False
    ) -> tuple[str, SummaryStats]:
        """Summary of `lines` in about `max_words` words. `LLMError` (nothing to commit) when a call fails,
        a reply is empty, or the final summary is far over length."""
        target_tokens = math.ceil(max_words * TOKENS_PER_WORD)
        overhead = self._overhead(max_words, keep_language)
        counts = [self.tokenizer.count(line) + 1 for line in lines]
        # The first round may use three quarters of the call and prompt budgets; the rest is for reducing.
        map_calls = max(self.max_calls - max(self.max_calls // 4, 1), 1)
        first_round = min(
            int(self.max_prompt_tokens * 0.75) - overhead * map_calls,
            int(map_calls * self.window_tokens * 0.85),  # packing whole lines leaves windows part-full
        )
        current = fit_lines(lines, counts, max(first_round, target_tokens), self.tokenizer)
        stats = SummaryStats(precompressed=current != list(lines))
        limiter = asyncio.Semaphore(self.concurrency)

        async def call(window: list[str], words: int) -> str:
            async with limiter:
                return await summarize_text(self.llm, "\n".join(window), words, keep_language)

        while True:
            counts = [self.tokenizer.count(line) + 1 for line in current]
            windows = pack_windows(current, counts, self.window_tokens)
            words = max_words if len(windows) == 1 else window_words(len(windows), max_words)
            cost = sum(counts) + overhead * len(windows)
            if (
                stats.calls + len(windows) > self.max_calls
                or stats.estimated_prompt_tokens + cost > self.max_prompt_tokens
            ):
                return self._truncate(current, target_tokens), stats.model_copy(update={"truncated": True})
            outputs = await asyncio.gather(*(call(w, words) for w in windows))
            stats = stats.model_copy(
                update={
                    "calls": stats.calls + len(windows),
                    "estimated_prompt_tokens": stats.estimated_prompt_tokens + cost,
                    "rounds": stats.rounds + 1,
                }
            )
            if len(windows) == 1:
                summary = outputs[0]
                if len(summary.split()) > 2 * max_words + 20:
                    raise LLMError(
                        f"{self.llm.model}: the summary has {len(summary.split())} words, far over the "
                        f"{max_words}-word budget; memory left unchanged"
                    )
                return summary, stats
            if sum(self.tokenizer.count(o) for o in outputs) >= sum(counts):
                return self._truncate(list(outputs), target_tokens), stats.model_copy(
                    update={"truncated": True}
                )
            current = list(outputs)

    def _truncate(self, lines: Sequence[str], target_tokens: int) -> str:
        """Deterministic fallback: the newest lines that fit the target, the oldest cut at the front."""
        kept: list[str] = []
        room = target_tokens
        for line in reversed(lines):
            count = self.tokenizer.count(line) + 1
            if count <= room:
                kept.append(line)
                room -= count
                continue
            if room > 8:
                ids = self.tokenizer.encoding.encode(line, disallowed_special=())
                kept.append("…" + self.tokenizer.encoding.decode(ids[-(room - 2) :]))
            break
        return "\n".join(reversed(kept)).strip()
