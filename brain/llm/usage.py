"""Token usage and latency of LLM calls, aggregated per session."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = ["CallRecord", "SummaryStats", "Usage", "UsageLedger", "UsageTotals"]

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


class UsageLedger:
    """Append-only record of calls, readable by callers at any time."""

    def __init__(self) -> None:
        self._records: list[CallRecord] = []

    def record(self, record: CallRecord) -> None:
        self._records.append(record)

    @property
    def records(self) -> tuple[CallRecord, ...]:
        return tuple(self._records)

    def totals(self, since: int = 0) -> UsageTotals:
        """Totals of the calls from index `since` on (pass an earlier `len(ledger)` to measure a span)."""
        return _sum(self._records[since:])

    def by_model(self) -> dict[str, UsageTotals]:
        return {
            m: _sum([r for r in self._records if r.model == m])
            for m in sorted({r.model for r in self._records})
        }

    def __len__(self) -> int:
        return len(self._records)


def _sum(records: list[CallRecord]) -> UsageTotals:
    return UsageTotals(
        calls=len(records),
        prompt_tokens=sum(r.usage.prompt_tokens for r in records),
        completion_tokens=sum(r.usage.completion_tokens for r in records),
        latency_s=sum(r.latency_s for r in records),
    )


class SummaryStats(BaseModel):
    """What one summarize run cost and how it ended."""

    model_config = _FROZEN

    calls: int = 0
    estimated_prompt_tokens: int = 0
    rounds: int = 0
    precompressed: bool = False  # lines were cut to fit the prompt-token cap before any call
    truncated: bool = False  # the result is a deterministic truncation, not the LLM's final summary
