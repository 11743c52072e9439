"""The deadlines of a streamed reply, one timer per stream."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest

from brain.llm.pace import Pace

pytestmark = pytest.mark.serial  # deadlines of 0.1 s, chunks 0.05 s apart


async def _chunks(delays: list[float]) -> AsyncIterator[int]:
    for i, delay in enumerate(delays):
        await asyncio.sleep(delay)
        yield i


async def _read(pace: Pace, delays: list[float], work: float = 0.0) -> list[int]:
    got, pending = [], aiter(_chunks(delays))
    try:
        while True:
            with pace:
                chunk = await anext(pending, None)
            if chunk is None:
                return got
            pace.arrived()
            got.append(chunk)
            await asyncio.sleep(work)  # the consumer's own work: never under a deadline
    finally:
        pace.close()


async def test_a_late_first_chunk_is_a_timeout_of_the_first_deadline() -> None:
    pace = Pace(0.1, 5)
    started = time.perf_counter()
    with pytest.raises(TimeoutError):
        await _read(pace, [0.5])
    assert pace.late == "first" and time.perf_counter() - started < 0.3


async def test_a_stall_between_chunks_is_a_timeout_of_the_gap() -> None:
    pace = Pace(5, 0.1)
    got: list[int] = []

    async def read() -> None:
        pending = aiter(_chunks([0.0, 0.02, 0.5]))
        while True:
            with pace:
                got.append(await anext(pending))
            pace.arrived()

    with pytest.raises(TimeoutError):
        await read()
    assert pace.late == "gap" and got == [0, 1]


async def test_a_steady_stream_longer_than_each_deadline_and_a_slow_consumer_are_not_cut() -> None:
    assert await _read(Pace(0.1, 0.1), [0.05] * 10) == list(range(10))  # 0.5 s in all
    assert await _read(Pace(0.1, 0.1), [0.0] * 3, work=0.3) == [0, 1, 2]


async def test_another_cancellation_stays_a_cancellation() -> None:
    task = asyncio.create_task(_read(Pace(5, 5), [1.0]))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
