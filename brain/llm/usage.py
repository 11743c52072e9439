"""Token usage and latency of LLM calls: per client (`UsageLedger`, bounded), and per unit of work
(`spending()`: every call made inside the block, by this task and the tasks it starts, and nobody else's)."""

from __future__ import annotations

from collections import deque
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
        if (
            not (other.prompt_tokens or other.completion_tokens)
            and other.counted_locally <= self.counted_locally
        ):
            return self  # frozen: adding nothing gives the same value
        if (
            not (self.prompt_tokens or self.completion_tokens)
            and self.counted_locally <= other.counted_locally
        ):
            return other
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


class _Sums:
    """Running sums of calls (plain numbers: counted on every call, read rarely)."""

    __slots__ = ("calls", "completion", "latency", "prompt")

    def __init__(self) -> None:
        self.calls, self.prompt, self.completion, self.latency = 0, 0, 0, 0.0

    def add(self, record: CallRecord) -> None:
        self.calls += 1
        self.prompt += record.usage.prompt_tokens
        self.completion += record.usage.completion_tokens
        self.latency += record.latency_s

    def totals(self) -> UsageTotals:
        return UsageTotals(
            calls=self.calls,
            prompt_tokens=self.prompt,
            completion_tokens=self.completion,
            latency_s=self.latency,
        )


class Spending:
    """What the calls of one unit of work spent (a turn, a fact batch), per model and kind of call."""

    def __init__(self) -> None:
        self._by: dict[tuple[str, str], _Sums] = {}

    def add(self, record: CallRecord) -> None:
        key = (record.model, record.kind)
        sums = self._by.get(key)
        if sums is None:
            sums = self._by[key] = _Sums()
        sums.add(record)

    @property
    def calls(self) -> int:
        return sum(s.calls for s in self._by.values())

    def clear(self) -> None:
        """Forget what was collected so far (it was accounted for); calls made later are collected."""
        self._by.clear()

    def calls_of(self, *kinds: str) -> int:
        """Calls of these kinds ("chat", "stream", "embed", "rerank")."""
        return sum(s.calls for (_, kind), s in self._by.items() if kind in kinds)

    def by_model(self) -> list[tuple[str, int, int, int]]:
        """(model, calls, prompt tokens, completion tokens) for each model called, by model."""
        models: dict[str, tuple[int, int, int]] = {}
        for (model, _), s in self._by.items():
            calls, prompt, completion = models.get(model, (0, 0, 0))
            models[model] = (calls + s.calls, prompt + s.prompt, completion + s.completion)
        return [(model, *sums) for model, sums in sorted(models.items())]


_SPENDING: ContextVar[tuple[Spending, ...]] = ContextVar("brain_spending", default=())


class spending:
    """Collect every LLM call made inside the block (by this task and the tasks it starts); blocks nest,
    and each collects its calls. Safe across the `yield`s of a streamed turn: nothing is reset by token.
    (A class, not a generator: it runs on every turn.)"""

    __slots__ = ("_outer", "_spent")

    def __enter__(self) -> Spending:
        self._spent, self._outer = Spending(), _SPENDING.get()
        _SPENDING.set((*self._outer, self._spent))
        return self._spent

    def __exit__(self, *exc: object) -> None:
        _SPENDING.set(self._outer)


class UsageLedger:
    """A client's calls: running totals (overall and per model) and the newest `keep` records. Bounded,
    however long the process runs. Every call recorded is also charged to the `spending()` blocks that
    are open where it was made."""

    def __init__(self, keep: int = 1_000) -> None:
        self._recent: deque[CallRecord] = deque(maxlen=keep)
        self._sums = _Sums()
        self._models: dict[str, _Sums] = {}

    def record(self, record: CallRecord) -> None:
        self._recent.append(record)
        self._sums.add(record)
        model = self._models.get(record.model)
        if model is None:
            model = self._models[record.model] = _Sums()
        model.add(record)
        for spent in _SPENDING.get():
            spent.add(record)

    @property
    def records(self) -> tuple[CallRecord, ...]:
        """The newest records (at most `keep`), oldest first."""
        return tuple(self._recent)

    def totals(self) -> UsageTotals:
        """Every call so far (subtract an earlier reading to measure a span)."""
        return self._sums.totals()

    def by_model(self) -> dict[str, UsageTotals]:
        return {m: s.totals() for m, s in sorted(self._models.items())}

    def __len__(self) -> int:
        """Calls recorded so far."""
        return self._sums.calls


class SummaryStats(BaseModel):
    """What one summarize run cost and how it ended."""

    model_config = _FROZEN

    calls: int = 0
    estimated_prompt_tokens: int = 0
    rounds: int = 0
    precompressed: bool = False  # lines were cut to fit the prompt-token cap before any call
    truncated: bool = False  # the result is a deterministic truncation, not the LLM's final summary
