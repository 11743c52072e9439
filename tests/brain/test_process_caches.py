"""The process's caches of text are emptied together: on demand, by age, and while a runtime is open."""

from __future__ import annotations

import asyncio
import functools
import gc
import time

import pytest

from brain import process_caches
from brain.process_caches import aging, expire, forget, remember


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
