"""Cutting a sequence into bounded batches (embedding requests, extraction batches). Pure."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["cut"]


def cut(sizes: Sequence[int], max_items: int, max_total: int) -> list[range]:
    """Consecutive index ranges over `sizes`, each of at most `max_items` items whose sizes add up to at
    most `max_total` (an item larger than `max_total` alone is a range of its own)."""
    if max_items < 1:
        raise ValueError("max_items must be at least 1")
    ranges: list[range] = []
    start, total = 0, 0
    for index, size in enumerate(sizes):
        if index > start and (index - start >= max_items or total + size > max_total):
            ranges.append(range(start, index))
            start, total = index, 0
        total += size
    if start < len(sizes):
        ranges.append(range(start, len(sizes)))
    return ranges
