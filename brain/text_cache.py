"""Caches of pure functions of a text that keep short texts only. A turn's question is analysed once
however many searches of the turn ask, and its phrases recur from turn to turn; a long text gains little
from a cache (its own analysis costs more than a call) and a stream of long, distinct texts (a message may
hold `memory.max_message_bytes`) would pin `maxsize` of them in memory: a text longer than `longest`
characters is computed on every call and kept nowhere."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar, cast

from brain.process_caches import remember

__all__ = ["LONGEST", "text_cache"]

P = ParamSpec("P")
R = TypeVar("R")

LONGEST = 2_000
"""The longest text (in characters) a text cache keeps: a question, a turn, a sentence."""


def text_cache(
    maxsize: int, longest: int = LONGEST
) -> Callable[[Callable[Concatenate[str, P], R]], Callable[Concatenate[str, P], R]]:
    """`functools.lru_cache(maxsize)` for a function whose first argument is a text, keeping only texts of
    at most `longest` characters (the other arguments are part of the key, as lru_cache makes it)."""

    def wrap(function: Callable[Concatenate[str, P], R]) -> Callable[Concatenate[str, P], R]:
        lru = remember(functools.lru_cache(maxsize=maxsize)(function))
        cached = cast("Callable[Concatenate[str, P], R]", lru)  # its arguments are hashable: a key

        @functools.wraps(function)
        def call(text: str, /, *args: P.args, **kwargs: P.kwargs) -> R:
            if len(text) <= longest:
                return cached(text, *args, **kwargs)
            return function(text, *args, **kwargs)

        call.cache_info = lru.cache_info  # type: ignore[attr-defined]
        call.cache_clear = lru.cache_clear  # type: ignore[attr-defined]
        return call

    return wrap
