"""Token usage and latency of LLM calls: per client (`UsageLedger`, bounded), and per unit of work
(`spending()`: every call made inside the block, by this task and the tasks it starts, and nobody else's)."""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = [
    "CallRecord",
    "Spending",
    "SummaryStats",
    "Usage",
    "UsageLedger",
    "UsageTotals",
    "spending",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class Usage(BaseModel):
    """Tokens of one call. `counted_locally` is True when the server reported none."""

    model_config = _FROZEN

    prompt_tokens: int
    completion_tokens: int
    counted_locally: bool = False

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        """Tokens of both (counted locally when either was)."""
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            counted_locally=self.counted_locally or other.counted_locally,
        )


class CallRecord(BaseModel):
    """One LLM call as the gateway saw it."""

    model_config = _FROZEN

    kind: Literal["chat", "stream", "embed", "rerank"]
    model: str
    usage: Usage
    latency_s: float


class UsageTotals(BaseModel):
    """Sums over calls."""

    model_config = _FROZEN

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: UsageTotals) -> UsageTotals:
        return UsageTotals(
            calls=self.calls + other.calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            latency_s=self.latency_s + other.latency_s,
        )

    def __sub__(self, other: UsageTotals) -> UsageTotals:
        """What was spent since `other` (an earlier reading of the same totals)."""
        return UsageTotals(
            calls=self.calls - other.calls,
            prompt_tokens=self.prompt_tokens - other.prompt_tokens,
            completion_tokens=self.completion_tokens - other.completion_tokens,
            latency_s=self.latency_s - other.latency_s,
        )


def _of(record: CallRecord) -> UsageTotals:
    usage = record.usage
    return UsageTotals(
        calls=1,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        latency_s=record.latency_s,
    )


class Spending:
    """What the calls of one unit of work spent (a turn, a fact batch), per model and kind of call."""

    def __init__(self) -> None:
        self._by: dict[tuple[str, str], UsageTotals] = {}

    def add(self, record: CallRecord) -> None:
        key = (record.model, record.kind)
        self._by[key] = self._by.get(key, UsageTotals()) + _of(record)

    @property
    def calls(self) -> int:
        return sum(t.calls for t in self._by.values())

    def calls_of(self, *kinds: str) -> int:
        """Calls of these kinds ("chat", "stream", "embed", "rerank")."""
        return sum(t.calls for (_, kind), t in self._by.items() if kind in kinds)

    def by_model(self) -> list[tuple[str, Usage, int]]:
        """(model, tokens, calls) for each model called, by model."""
        models: dict[str, UsageTotals] = {}
        for (model, _), totals in self._by.items():
            models[model] = models.get(model, UsageTotals()) + totals
        return [
            (m, Usage(prompt_tokens=t.prompt_tokens, completion_tokens=t.completion_tokens), t.calls)
            for m, t in sorted(models.items())
        ]


_SPENDING: ContextVar[tuple[Spending, ...]] = ContextVar("brain_spending", default=())


@contextlib.contextmanager
def spending() -> Iterator[Spending]:
    """Collect every LLM call made inside the block (by this task and the tasks it starts); blocks nest,
    and each collects its calls. Safe across the `yield`s of a streamed turn: nothing is reset by token."""
    spent, outer = Spending(), _SPENDING.get()
    _SPENDING.set((*outer, spent))
    try:
        yield spent
    finally:
        _SPENDING.set(outer)


class UsageLedger:
    """A client's calls: running totals (overall and per model) and the newest `keep` records. Bounded,
    however long the process runs. Every call recorded is also charged to the `spending()` blocks that
    are open where it was made."""

    def __init__(self, keep: int = 1_000) -> None:
        self._recent: deque[CallRecord] = deque(maxlen=keep)
        self._totals = UsageTotals()
        self._models: dict[str, UsageTotals] = {}

    def record(self, record: CallRecord) -> None:
        self._recent.append(record)
        self._totals = self._totals + _of(record)
        self._models[record.model] = self._models.get(record.model, UsageTotals()) + _of(record)
        for spent in _SPENDING.get():
            spent.add(record)

    @property
    def records(self) -> tuple[CallRecord, ...]:
        """The newest records (at most `keep`), oldest first."""
        return tuple(self._recent)

    def totals(self) -> UsageTotals:
        """Every call so far (subtract an earlier reading to measure a span)."""
        return self._totals

    def by_model(self) -> dict[str, UsageTotals]:
        return dict(sorted(self._models.items()))

    def __len__(self) -> int:
        """Calls recorded so far."""
        return self._totals.calls


class SummaryStats(BaseModel):
    """What one summarize run cost and how it ended."""

    model_config = _FROZEN

    calls: int = 0
    estimated_prompt_tokens: int = 0
    rounds: int = 0
    precompressed: bool = False  # lines were cut to fit the prompt-token cap before any call
    truncated: bool = False  # the result is a deterministic truncation, not the LLM's final summary
