"""The text side of the memory tool: numbered views, exact replacement, line insertion, directory listings.
Pure: each takes text and gives text, or raises `InputError` saying what to fix (never echoing the text it
was given)."""

from __future__ import annotations

from collections.abc import Sequence

from brain.errors import InputError

__all__ = ["insert_at", "listing", "numbered", "replace_once"]


def _lines(text: str) -> list[str]:
    return text.split("\n") if text else []


def numbered(text: str, view_range: Sequence[int] | None = None) -> str:
    """`text` with its line numbers (`     7\\tline`), all of it or lines `view_range` = [first, last]
    (1-based, both included; last -1: to the end)."""
    lines = _lines(text)
    first, last = 1, len(lines)
    if view_range is not None:
        if len(view_range) != 2:
            raise InputError("view_range is two line numbers: [first, last] (last -1: to the end)")
        first, last = view_range[0], (len(lines) if view_range[1] == -1 else view_range[1])
        if not 1 <= first <= max(len(lines), 1) or not first <= last <= len(lines):
            raise InputError(
                f"view_range must lie within the {len(lines)} lines: 1 <= first <= last <= {len(lines)}"
            )
    return "\n".join(f"{n:6d}\t{lines[n - 1]}" for n in range(first, last + 1))


def replace_once(text: str, old: str, new: str) -> str:
    """`text` with `old` (non-empty, matched exactly) replaced by `new`; `InputError` unless `old` occurs
    exactly once (naming the lines where it occurs)."""
    if not old:
        raise InputError("old_str must not be empty")
    count = text.count(old)
    if count == 0:
        raise InputError("no replacement was made: old_str does not occur verbatim (view the file first)")
    if count > 1:
        starts, at = [], text.find(old)
        while at != -1:
            starts.append(text.count("\n", 0, at) + 1)
            at = text.find(old, at + 1)
        lines = ", ".join(map(str, dict.fromkeys(starts)))
        raise InputError(
            f"no replacement was made: old_str occurs {count} times (lines {lines}); make it unique"
        )
    return text.replace(old, new, 1)


def insert_at(text: str, line: int, insert: str) -> str:
    """`text` with `insert` (its own lines) after line `line` (0: at the top)."""
    lines = _lines(text)
    if not 0 <= line <= len(lines):
        raise InputError(f"insert_line must be from 0 to {len(lines)} (the lines of the file)")
    return "\n".join([*lines[:line], *insert.split("\n"), *lines[line:]])


def listing(directory: str, entries: Sequence[tuple[str, str]]) -> str:
    """A directory's listing: a heading, then each (path, size) as `size\\tpath`, by path."""
    heading = f"The memory files and blocks under {directory}:"
    rows = [f"{size}\t{path}" for path, size in sorted(entries)]
    return "\n".join([heading, *rows]) if rows else f"{heading}\n(empty)"
