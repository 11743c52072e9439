"""`KeyedLocks`: one call per key at a time, and a key's lock only while it is held or awaited."""

from __future__ import annotations

import asyncio

import pytest

from roles.locks import KeyedLocks


async def test_calls_with_one_key_run_one_at_a_time_and_the_table_empties() -> None:
    locks, order = KeyedLocks(), list[str]()

    async def call(key: str, name: str) -> None:
        async with locks.hold(key):
            order.append(f"{name} in")
            await asyncio.sleep(0.01)
            order.append(f"{name} out")

    await asyncio.gather(call("a", "1"), call("a", "2"), call("b", "3"))
    assert order.index("1 out") < order.index("2 in")  # the same key: one after the other
    assert order.index("3 in") < order.index("1 out")  # another key: at once
    assert len(locks) == 0


async def test_a_call_cancelled_while_waiting_or_failing_inside_leaves_no_key() -> None:
    locks = KeyedLocks()
    held = asyncio.Event()

    async def holder() -> None:
        async with locks.hold("k"):
            held.set()
            await asyncio.sleep(0.05)

    first = asyncio.create_task(holder())
    await held.wait()
    waiting = asyncio.create_task(locks.hold("k").__aenter__())
    await asyncio.sleep(0.01)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    await first
    assert len(locks) == 0
    with pytest.raises(RuntimeError):
        async with locks.hold("k"):
            raise RuntimeError("inside")
    assert len(locks) == 0
    async with locks.hold("k"):  # and the key is free again
        assert len(locks) == 1
