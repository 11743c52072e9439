"""Small pure helpers of index records: ids as text, tags as an index stores them."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["tag_list", "text"]


def text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def tag_list(tags: Iterable[str]) -> list[str]:
    """Tags as an index stores them: stripped, lower case, without blanks or repeats, sorted. Pure."""
    return sorted({t.strip().lower() for t in tags if t.strip()})
