"""The process's caches of text are emptied together: on demand, by age, and while a runtime is open."""

from __future__ import annotations

import asyncio
import functools
import gc
import time

import pytest

from brain import process_caches
from brain.process_caches import aging, expire, forget, forget_soon, remember


def _cached() -> functools._lru_cache_wrapper[str]:
    @functools.lru_cache(maxsize=8)
    def upper(text: str) -> str:
        return text.upper()

    return upper


def test_forget_empties_every_registered_cache_and_only_those() -> None:
    kept, registered = _cached(), remember(_cached())
    for cache in (kept, registered):
        cache("alice's secret")
    forget()
    assert registered.cache_info().currsize == 0
    assert kept.cache_info().currsize == 1  # never registered: not ours to empty


def test_a_cache_gone_with_its_owner_leaves_the_registry() -> None:
    class Owned:  # e.g. a tokenizer's own cache
        def cache_clear(self) -> None:
            pass

    cache = remember(Owned())
    assert any(isinstance(c, Owned) for c in process_caches._CACHES)
    del cache
    gc.collect()
    assert not any(isinstance(c, Owned) for c in process_caches._CACHES)


def test_expire_empties_only_when_the_last_emptying_is_max_age_old() -> None:
    cache = remember(_cached())
    forget()
    cache("text")
    now = time.monotonic()
    assert not expire(now + process_caches.MAX_AGE / 2)
    assert cache.cache_info().currsize == 1
    assert expire(now + process_caches.MAX_AGE + 1)
    assert cache.cache_info().currsize == 0
    cache("text")
    assert not expire()  # just emptied: the clock starts again


async def test_aging_empties_the_caches_while_open_and_stops_when_closed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(process_caches, "MAX_AGE", 0.05)
    cache = remember(_cached())
    async with aging(every=0.01):
        cache("text")
        for _ in range(200):
            if cache.cache_info().currsize == 0:
                break
            await asyncio.sleep(0.01)
        assert cache.cache_info().currsize == 0
    ticking = [t for t in asyncio.all_tasks() if t.get_name() == "brain.process_caches"]
    assert ticking == []
    cache("text")
    await asyncio.sleep(0.15)
    assert cache.cache_info().currsize == 1  # closed: nobody empties them


async def test_erasures_in_a_burst_empty_the_caches_once_a_gap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process_caches, "MIN_GAP", 0.2)
    cache = remember(_cached())
    monkeypatch.setattr(process_caches, "_emptied", [time.monotonic() - 1.0])  # none for a while
    cache("first")
    forget_soon()
    assert cache.cache_info().currsize == 0  # at once
    emptied: list[float] = []
    monkeypatch.setattr(process_caches, "forget", lambda: emptied.append(time.monotonic()))
    began = time.monotonic()
    for _ in range(5):  # a burst: one emptying, once the gap has passed
        forget_soon()
    assert emptied == []
    await asyncio.sleep(0.4)
    assert len(emptied) == 1 and emptied[0] - began >= 0.15


async def test_a_waiting_emptying_of_a_closed_loop_does_not_block_the_next(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(process_caches, "MIN_GAP", 0.2)
    monkeypatch.setattr(process_caches, "_emptied", [time.monotonic()])
    other = asyncio.new_event_loop()
    monkeypatch.setattr(process_caches, "_due", [(other, other.call_later(10, lambda: None))])
    other.close()  # e.g. an earlier asyncio.run that ended with an emptying pending
    cache = remember(_cached())
    cache("text")
    forget_soon()
    await asyncio.sleep(0.4)
    assert cache.cache_info().currsize == 0
