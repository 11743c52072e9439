"""The memory tool's `/memories` tree (Anthropic's memory tool shape) over a scope's memory.

`/memories/blocks/<label>` is a core memory block of the scope (`TieredMemory.core_blocks`): viewed with
line numbers, edited by `str_replace` and `insert` under the same rules and limit as `core_memory_edit`
(the scope's own copy; a replacement is atomic, an insertion applies only to the block as it was viewed).
Blocks are neither created, deleted nor renamed here. Any other path is a text file of at most
`MAX_PASSAGE_BYTES`, stored as an archival passage of the user (so `archival_search` finds it) tagged
`FILE_TAG`, with its path in its metadata. Files are per scope: an agent's key sees and edits its own files,
a user-wide key the user's. A file is rewritten as a new passage before the old one is deleted, so a
failure midway never loses it (a leftover older copy is deleted when the path is next read).
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Sequence
from typing import Any, Literal

from brain.errors import InputError, NotFoundError
from brain.message import check_text
from brain.search.index import SearchIndex
from brain.storage import fence
from brain.storage.index import IndexedDoc
from roles.access import PASSAGE_AGENT, Scope, passage_agent
from roles.memory_edits import insert_at, listing, numbered, replace_once
from roles.memory_paths import ROOT, MemoryPath, parse_path
from roles.service_memory import MAX_PASSAGE_BYTES, TieredMemory

__all__ = ["FILE_TAG", "MAX_FILES", "Command", "MemoryFiles", "perform"]

FILE_TAG = "memory-file"
MAX_FILES = 1_000
"""The most files one scope keeps."""
PATH_FIELD = "memory_path"
Command = Literal["view", "create", "str_replace", "insert", "delete", "rename"]


def _missing(path: MemoryPath) -> NotFoundError:
    return NotFoundError(f"the path {path.text} does not exist; view {ROOT} to see what does")


def _path_tag(scope: Scope, path: MemoryPath) -> str:
    key = f"{scope.agent or ''}\x1f{path.text}".encode()
    return "mf-" + hashlib.sha256(key).hexdigest()[:40]


def _file_text(text: str) -> str:
    if len(text.encode()) > MAX_PASSAGE_BYTES:
        raise InputError(f"a memory file holds at most {MAX_PASSAGE_BYTES:,} bytes (UTF-8)")
    return check_text(text, MAX_PASSAGE_BYTES, "file_text") if text else text


class MemoryFiles:
    """The memory tool over `memory` (core blocks and archival memory). Holds nothing per call."""

    def __init__(self, memory: TieredMemory) -> None:
        self.memory = memory

    # ------------------------------------------------------------------ reading

    def _index(self, scope: Scope) -> SearchIndex:
        return self.memory.tiers.archival(scope.user)

    async def _files(self, scope: Scope, under: MemoryPath | None = None) -> dict[str, list[IndexedDoc]]:
        """The stored copies of the scope's files by path, newest first (more than one copy only after a
        failure midway), those `under` a path only when given."""
        hits, _ = await self._index(scope).search("", tags=[FILE_TAG], limit=2 * MAX_FILES)
        found: dict[str, list[IndexedDoc]] = {}
        for hit in hits:  # newest first
            path = hit.doc.metadata.get(PATH_FIELD)
            if not isinstance(path, str) or passage_agent(hit.doc) != scope.agent:
                continue
            if under is None or under.contains(parse_path(path)):
                found.setdefault(path, []).append(hit.doc)
        return found

    async def _copies(self, scope: Scope, path: MemoryPath) -> list[IndexedDoc]:
        """The stored copies of the file at `path`, newest first."""
        hits, _ = await self._index(scope).search("", tags=[_path_tag(scope, path)], limit=10)
        return [
            h.doc
            for h in hits
            if h.doc.metadata.get(PATH_FIELD) == path.text and passage_agent(h.doc) == scope.agent
        ]

    # ------------------------------------------------------------------ writing

    async def _write(self, scope: Scope, path: MemoryPath, text: str, replaced: Sequence[IndexedDoc]) -> None:
        """Store `text` as the file at `path`, then delete `replaced` (its former copies)."""
        index, tiers = self._index(scope), self.memory.tiers
        ticket = await tiers.backend.erasure.ticket(scope.user)
        doc = IndexedDoc(
            id=uuid.uuid4().hex,
            text=text,
            tags=(FILE_TAG, _path_tag(scope, path)),
            source=scope.actor,
            ts=max([time.time(), *(d.ts + 1e-3 for d in replaced)]),
            metadata={PATH_FIELD: path.text, **({PASSAGE_AGENT: scope.agent} if scope.agent else {})},
        )
        vector = await tiers.vector(index.indexed_text(doc)) if text.strip() else None
        with fence.holding(ticket):
            await index.add(doc, vector)
            for old in replaced:
                await index.delete(old.id)

    async def _delete(self, scope: Scope, docs: Sequence[IndexedDoc]) -> None:
        index = self._index(scope)
        with fence.holding(await self.memory.tiers.backend.erasure.ticket(scope.user)):
            for doc in docs:
                await index.delete(doc.id)

    # ------------------------------------------------------------------ commands

    async def view(self, scope: Scope, path: MemoryPath, view_range: Sequence[int] | None = None) -> str:
        """A file or block with line numbers, or a directory's listing (every file under it)."""
        if path.kind in ("root", "blocks"):
            rows = [
                (f"{ROOT}/blocks/{b.label}", f"{len(b.value)} of {b.limit} characters")
                for b in await self.memory.core_blocks(scope)
            ]
            if path.kind == "root":
                rows += _sizes(await self._files(scope))
            return listing(path.text, rows)
        if path.kind == "block":
            text = await self._block_text(scope, path)
        else:
            copies = await self._copies(scope, path)
            if not copies:
                under = await self._files(scope, path)
                if not under:
                    raise _missing(path)
                return listing(path.text, _sizes(under))
            if len(copies) > 1:
                await self._delete(scope, copies[1:])
            text = copies[0].text
        return f"{path.text}, with line numbers:\n{numbered(text, view_range)}"

    async def _block_text(self, scope: Scope, path: MemoryPath) -> str:
        blocks = {b.label: b for b in await self.memory.core_blocks(scope)}
        if path.label not in blocks:
            raise _missing(path)
        return blocks[path.label].value

    async def create(self, scope: Scope, path: MemoryPath, file_text: str) -> str:
        """A new file at `path` (refused where a file, a directory or a block is)."""
        if path.kind != "file":
            raise InputError(
                f"{path.text} is not a file path: core memory blocks exist already (edit them with "
                "str_replace or insert); files go under /memories, outside /memories/blocks"
            )
        text = _file_text(file_text)
        files = await self._files(scope)
        if path.text in files:
            raise InputError(f"{path.text} exists already: edit it with str_replace or insert, or delete it")
        if any(path.contains(parse_path(p)) or parse_path(p).contains(path) for p in files):
            raise InputError(f"{path.text} is a directory, or lies under a file")
        if len(files) >= MAX_FILES:
            raise InputError(f"there are {MAX_FILES} memory files already: delete or merge some first")
        await self._write(scope, path, text, ())
        return f"created {path.text}"

    async def str_replace(self, scope: Scope, path: MemoryPath, old: str, new: str) -> str:
        """`old` (exactly once in the file or block) replaced by `new`."""
        if path.kind == "block":
            replace_once(await self._block_text(scope, path), old, new)  # unique, or a clear error
            block = await self.memory.replace_in_core_block(scope, path.label, old, new)
            return f"edited {path.text} ({len(block.value)} of {block.limit} characters)"
        copies = await self._file_copies(scope, path)
        await self._write(scope, path, _file_text(replace_once(copies[0].text, old, new)), copies)
        return f"edited {path.text}"

    async def insert(self, scope: Scope, path: MemoryPath, line: int, text: str) -> str:
        """`text` inserted after line `line` (0: at the top) of the file or block."""
        if path.kind == "block":
            current = await self._block_text(scope, path)
            value = insert_at(current, line, text)
            block = await (
                self.memory.replace_in_core_block(scope, path.label, current, value)
                if current  # applies only to the block as it was read: a concurrent edit is never lost
                else self.memory.edit_core_block(scope, path.label, value)
            )
            return f"edited {path.text} ({len(block.value)} of {block.limit} characters)"
        copies = await self._file_copies(scope, path)
        await self._write(scope, path, _file_text(insert_at(copies[0].text, line, text)), copies)
        return f"edited {path.text}"

    async def _file_copies(self, scope: Scope, path: MemoryPath) -> list[IndexedDoc]:
        if path.kind != "file":
            raise InputError(f"{path.text} is a directory, not a file or block")
        copies = await self._copies(scope, path)
        if not copies:
            raise _missing(path)
        return copies

    async def delete(self, scope: Scope, path: MemoryPath) -> str:
        """Delete a file, or a directory with every file under it."""
        if path.kind != "file":
            raise InputError(f"{path.text} cannot be deleted: core memory blocks and {ROOT} itself stay")
        doomed = [d for copies in (await self._files(scope, path)).values() for d in copies]
        doomed += await self._copies(scope, path)
        if not doomed:
            raise _missing(path)
        await self._delete(scope, list({d.id: d for d in doomed}.values()))
        return f"deleted {path.text}"

    async def rename(self, scope: Scope, old: MemoryPath, new: MemoryPath) -> str:
        """Move a file, or a directory with every file under it, to `new` (where nothing is)."""
        if old.kind != "file" or new.kind != "file":
            raise InputError("only files and directories of files are renamed (not blocks, not the root)")
        if old.contains(new):
            raise InputError("new_path must not be old_path or lie under it")
        files = await self._files(scope)
        moving = {p: copies for p, copies in files.items() if old.contains(parse_path(p))}
        if not moving:
            raise _missing(old)
        if any(new.contains(parse_path(p)) or parse_path(p).contains(new) for p in files if p not in moving):
            raise InputError(f"{new.text} exists already, or lies under a file")
        for path, copies in moving.items():
            tail = parse_path(path).parts[len(old.parts) :]
            target = parse_path("/".join((ROOT, *new.parts, *tail)), "new_path")  # within the bounds too
            await self._write(scope, target, copies[0].text, copies)
        return f"renamed {old.text} to {new.text}"


def _sizes(files: dict[str, list[IndexedDoc]]) -> list[tuple[str, str]]:
    return [(path, f"{len(copies[0].text.encode())} bytes") for path, copies in files.items()]


_TAKES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "view": (("path",), ("view_range",)),
    "create": (("path", "file_text"), ()),
    "str_replace": (("path", "old_str", "new_str"), ()),
    "insert": (("path", "insert_line", "insert_text"), ()),
    "delete": (("path",), ()),
    "rename": (("old_path", "new_path"), ()),
}
"""Per command: the arguments it needs, and those it may take besides."""


async def perform(files: MemoryFiles, scope: Scope, command: Command, arguments: dict[str, Any]) -> str:
    """Run one memory tool call: `command` with `arguments` (those given, None for the others); its text.
    `InputError` for an argument the command needs and lacks, or one it does not take."""
    needed, optional = _TAKES[command]
    given = {k for k, v in arguments.items() if v is not None}
    if missing := [k for k in needed if k not in given]:
        raise InputError(f"{command} needs {', '.join(needed)}; missing: {', '.join(missing)}")
    if extra := sorted(given - set(needed) - set(optional)):
        raise InputError(f"{command} takes only {', '.join(needed + optional)}; not: {', '.join(extra)}")
    a = arguments
    if command == "rename":
        return await files.rename(
            scope, parse_path(a["old_path"], "old_path"), parse_path(a["new_path"], "new_path")
        )
    path = parse_path(a["path"])
    if command == "view":
        return await files.view(scope, path, a.get("view_range"))
    if command == "create":
        return await files.create(scope, path, a["file_text"])
    if command == "str_replace":
        return await files.str_replace(scope, path, a["old_str"], a["new_str"])
    if command == "insert":
        return await files.insert(scope, path, a["insert_line"], a["insert_text"])
    return await files.delete(scope, path)
