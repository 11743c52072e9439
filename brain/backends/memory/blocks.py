"""Block storage in memory: `MemoryCoreBlockStore` (core blocks per scope, under `brain.keys.core_key`) and
`MemoryBlockSession` (one session's history FIFO, archive and state, under the session's `blocks_base`).

Every method runs without awaiting, so each one is atomic for the other tasks of the event loop, as the
Redis backend's scripts are for its clients.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from brain.backends.memory.keyspace import Keyspace
from brain.errors import InputError
from brain.keys import blocks_base, core_key
from brain.storage.blocks import Block, BlockLimitError, Record

__all__ = ["MemoryBlockSession", "MemoryCoreBlockStore"]


class _Scope(dict[str, Block]):
    """One scope's blocks by label."""


class MemoryCoreBlockStore:
    """A `CoreBlockStore` in a `Keyspace`: one `_Scope` under each scope's `core_key`."""

    def __init__(self, space: Keyspace, prefix: str) -> None:
        self._space = space
        self.prefix = prefix

    def _name(self, scope: str | bytes) -> str:
        return core_key(self.prefix, scope)

    async def create(self, scope: str | bytes, block: Block, *, replace: bool = False) -> Block:
        self._space.check()
        name = self._name(scope)
        if len(block.value) > block.limit:
            raise _limit_error(block.label, block.limit, len(block.value), 0)
        blocks = self._space.setdefault(name, _Scope)
        if block.label in blocks and not replace:
            raise InputError(f"block {block.label!r} exists already")
        blocks[block.label] = block
        return block

    async def set(self, scope: str | bytes, label: str, value: str) -> Block:
        self._space.check()
        return self._edit(scope, label, lambda _: value)

    async def append(self, scope: str | bytes, label: str, text: str) -> Block:
        self._space.check()
        return self._edit(scope, label, lambda value: f"{value}\n{text}" if value else text)

    async def replace(self, scope: str | bytes, label: str, old: str, new: str) -> Block:
        self._space.check()

        def swap(value: str) -> str:
            if not old or old not in value:
                raise InputError(
                    f"the text to replace was not found in block {label!r}; it must match exactly"
                )
            return value.replace(old, new, 1)

        return self._edit(scope, label, swap)

    def _edit(self, scope: str | bytes, label: str, change: Callable[[str], str]) -> Block:
        blocks = self._space.get(self._name(scope), _Scope)
        block = blocks.get(label) if blocks is not None else None
        if blocks is None or block is None:
            raise InputError(f"there is no core memory block {label!r}")
        if block.read_only:
            raise InputError(f"block {label!r} is read-only")
        value = change(block.value)
        if len(value) > block.limit:
            raise _limit_error(label, block.limit, len(value), len(block.value))
        blocks[label] = block.model_copy(update={"value": value})
        return blocks[label]

    async def list(self, scope: str | bytes) -> list[Block]:
        blocks = self._space.get(self._name(scope), _Scope) or _Scope()
        return [blocks[label] for label in sorted(blocks)]

    async def delete(self, scope: str | bytes, label: str) -> bool:
        self._space.check()
        name = self._name(scope)
        blocks = self._space.get(name, _Scope)
        if blocks is None or blocks.pop(label, None) is None:
            return False
        if not blocks:
            self._space.delete(name)
        return True

    async def drop(self, scope: str | bytes) -> int:
        name = self._name(scope)
        count = len(self._space.get(name, _Scope) or ())
        self._space.delete(name)
        return count


def _limit_error(label: str, limit: int, wanted: int, current: int) -> BlockLimitError:
    return BlockLimitError(
        f"block {label!r} holds at most {limit} characters; this edit would make it {wanted} "
        f"({limit - current} characters of room left); shorten it or replace old content"
    )


@dataclass
class _Session:
    """A session's three parts, each as Redis holds it: stored records (JSON bytes), JSON state fields."""

    active: list[bytes] = field(default_factory=list)
    archived: list[bytes] = field(default_factory=list)
    state: dict[str, str] = field(default_factory=dict)

    def parts(self) -> int:
        """How many of the three hold something (each would be a Redis key)."""
        return sum(bool(part) for part in (self.active, self.archived, self.state))


class MemoryBlockSession:
    """A `BlockSessionStore` in a `Keyspace`: one `_Session` under `<blocks_base>:session`, removed when
    all three of its parts are empty."""

    def __init__(self, space: Keyspace, prefix: str, user_id: str | bytes, chat_id: str | bytes) -> None:
        self._space = space
        base = blocks_base(prefix, user_id, chat_id)
        self._name = f"{base}:session"
        self.vectors_base = f"{base}:vec"

    def _session(self) -> _Session:
        return self._space.get(self._name, _Session) or _Session()

    def _write(self, session: _Session) -> None:
        if session.parts():
            self._space.setdefault(self._name, lambda: session)
        else:
            self._space.delete(self._name)

    async def append(self, records: Sequence[Record]) -> None:
        self._space.check()
        if records:
            session = self._session()
            session.active.extend(r.model_dump_json().encode() for r in records)
            self._write(session)

    async def active(self) -> tuple[list[Record], list[bytes]]:
        raws = list(self._session().active)
        return [Record.model_validate_json(raw) for raw in raws], raws

    async def flush(self, head: bytes, count: int) -> int | None:
        self._space.check()
        if count < 0:
            raise InputError(f"a flush moves a count of records, not {count}")
        session = self._session()
        if not session.active or session.active[0] != head:
            return None
        session.archived.extend(session.active[:count])
        del session.active[:count]
        self._write(session)
        return len(session.archived)

    async def archived(self, start: int, stop: int = -1) -> list[Record]:
        return [Record.model_validate_json(raw) for raw in _lrange(self._session().archived, start, stop)]

    async def archived_count(self) -> int:
        return len(self._session().archived)

    async def get_state(self, field: str) -> Any:
        raw = self._session().state.get(field)
        return None if raw is None else json.loads(raw)

    async def set_state(self, field: str, value: Any) -> None:
        self._space.check()
        data = json.dumps(value, ensure_ascii=False)
        session = self._session()
        session.state[field] = data
        self._write(session)

    async def claim(self, field: str, expected: int, new: int) -> bool:
        self._space.check()
        session = self._session()
        if session.state.get(field, "0") != str(expected):
            return False
        session.state[field] = str(new)
        self._write(session)
        return True

    async def drop_tail(self, exchanges: int) -> int:
        self._space.check()
        session = self._session()
        records = session.active
        users, cut = 0, len(records)
        # As the Redis script: count user messages from the newest, stopping at the exchanges-th one.
        for i in range(len(records) - 1, -1, -1):
            if _role(records[i]) == "user":
                users, cut = users + 1, i
                if users == exchanges:
                    break
        removed = len(records) - cut
        if removed:
            del records[cut:]
            self._write(session)
        return removed

    async def replace_answer(self, record: Record) -> bool:
        self._space.check()
        session = self._session()
        if not session.active or _role(session.active[-1]) != "assistant":
            return False
        session.active[-1] = record.model_dump_json().encode()
        return True

    async def drop(self) -> int:
        parts = self._session().parts()
        self._space.delete(self._name)
        return parts


def _role(raw: bytes) -> object:
    try:
        record = json.loads(raw)
    except ValueError:
        return None
    message = record.get("message") if isinstance(record, dict) else None
    return message.get("role") if isinstance(message, dict) else None


def _lrange(items: list[bytes], start: int, stop: int) -> list[bytes]:
    """`items[start..stop]` with LRANGE's rules: inclusive stop, negative indexes from the end, clamped."""
    size = len(items)
    start = max(start + size, 0) if start < 0 else start
    stop = stop + size if stop < 0 else min(stop, size - 1)
    return items[start : stop + 1] if start <= stop else []
