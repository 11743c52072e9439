"""The Chinese word segmenter, jieba, loaded at its first use: importing it takes 0.01-0.1 s of a process's
start (the most where setuptools' `pkg_resources` is installed, which jieba imports to find its files), so
a process that never meets Han text never loads it. Pure functions of their text."""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["in_dictionary", "search_words", "words"]


@functools.cache
def _jieba() -> Any:  # jieba has no types
    import jieba

    jieba.setLogLevel(60)  # jieba reports loading its dictionary at INFO on the root of its own logger
    return jieba


def words(text: str) -> list[str]:
    """The words of `text`, in order (jieba's precise mode)."""
    return list(_jieba().lcut(text))


def search_words(text: str) -> list[str]:
    """jieba's search mode: each word, after the dictionary words of two and three characters inside it."""
    return list(_jieba().cut_for_search(text))


def in_dictionary(word: str) -> bool:
    """Whether jieba's dictionary has `word`."""
    return bool(_jieba().get_FREQ(word))
