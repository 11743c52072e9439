"""Paths of the memory tool (the `/memories` tree of Anthropic's memory tool shape). Pure.

`/memories/blocks/<label>` names a core memory block; any other path under `/memories` names a file (or a
directory: the files under it). A path is refused (`InputError`, never echoing it) unless it is text in
Unicode NFC without control, format (zero-width, bidirectional), private-use, unassigned or lone surrogate
characters, without backslashes, empty, `.` or `..` segments or segments padded with whitespace, and inside
`/memories`. A trailing `/` is dropped.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

from pydantic import BaseModel, ConfigDict

from brain.errors import InputError

__all__ = [
    "BLOCKS",
    "MAX_DEPTH",
    "MAX_PATH_CHARS",
    "MAX_SEGMENT_CHARS",
    "ROOT",
    "MemoryPath",
    "parse_path",
]

ROOT = "/memories"
BLOCKS = "blocks"
"""The directory of core memory blocks under `ROOT`: `/memories/blocks/<label>`."""
MAX_PATH_CHARS = 512
MAX_SEGMENT_CHARS = 128
MAX_DEPTH = 8
"""The most segments under `ROOT` a file path has."""
_LABEL = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})

Kind = Literal["root", "blocks", "block", "file"]


class MemoryPath(BaseModel):
    """A checked path: `kind` (the root, the blocks directory, one block, or a file or directory of files)
    and its segments under `ROOT`."""

    model_config = ConfigDict(frozen=True)

    kind: Kind
    parts: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return "/".join((ROOT, *self.parts))

    @property
    def label(self) -> str:
        """The block's label (a `block` path)."""
        return self.parts[1]

    def contains(self, other: MemoryPath) -> bool:
        """Whether `other` is this path or lies under it."""
        return other.parts[: len(self.parts)] == self.parts


def _character_refused(c: str) -> bool:
    return c == "\\" or unicodedata.category(c) in _REFUSED_CATEGORIES or (c.isspace() and c != " ")


def parse_path(raw: object, what: str = "path") -> MemoryPath:
    """The memory path `raw` names; `InputError` naming `what` (not the value) when it is not one."""
    if not isinstance(raw, str):
        raise InputError(f"{what} must be a string")
    if len(raw) > MAX_PATH_CHARS:
        raise InputError(f"{what} must be at most {MAX_PATH_CHARS} characters")
    if any(_character_refused(c) for c in raw):
        raise InputError(
            f"{what} must not hold control, invisible, bidirectional, private-use or unassigned characters, "
            "backslashes or whitespace other than spaces"
        )
    if unicodedata.normalize("NFC", raw) != raw:
        raise InputError(f"{what} must be in Unicode NFC form")
    text = raw[:-1] if raw.endswith("/") and raw != "/" else raw
    if text != ROOT and not text.startswith(ROOT + "/"):
        raise InputError(f"{what} must be {ROOT} or lie under it, e.g. {ROOT}/notes.md")
    parts = tuple(text[len(ROOT) + 1 :].split("/")) if text != ROOT else ()
    for part in parts:
        if part in ("", ".", ".."):
            raise InputError(f"{what} must not hold empty, '.' or '..' segments")
        if part != part.strip():
            raise InputError(f"{what} must not hold segments that start or end with a space")
        if len(part) > MAX_SEGMENT_CHARS:
            raise InputError(f"{what} must not hold segments over {MAX_SEGMENT_CHARS} characters")
    if len(parts) > MAX_DEPTH:
        raise InputError(f"{what} must be at most {MAX_DEPTH} levels under {ROOT}")
    if not parts:
        return MemoryPath(kind="root")
    if parts[0] != BLOCKS:
        return MemoryPath(kind="file", parts=parts)
    if len(parts) == 1:
        return MemoryPath(kind="blocks", parts=parts)
    if len(parts) > 2 or not _LABEL.fullmatch(parts[1]):
        raise InputError(
            f"{what}: {ROOT}/{BLOCKS}/ holds only core memory blocks, named by label "
            "(1 to 64 letters, digits, '_' or '-')"
        )
    return MemoryPath(kind="block", parts=parts)
