from __future__ import annotations

import asyncio

import pytest

from brain import run_sync


def test_run_sync_runs_a_coroutine() -> None:
    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    assert run_sync(answer()) == 42


async def test_run_sync_refuses_inside_a_running_loop() -> None:
    async def nothing() -> None:
        return None

    with pytest.raises(RuntimeError, match="use `await` instead"):
        run_sync(nothing())
