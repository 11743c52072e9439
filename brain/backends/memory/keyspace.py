"""`Keyspace`: the in-memory backend's one dict, named as Redis keys are (`brain.keys`), so that a user's
data is found (and erased) by the same patterns on either backend."""

from __future__ import annotations

from collections.abc import Callable
from fnmatch import fnmatchcase
from typing import TypeVar

from brain.errors import ErasedError
from brain.keys import raw_id
from brain.storage import fence

__all__ = ["Keyspace"]

T = TypeVar("T")


class Keyspace:
    """Values by key name. A store keeps one value (a plain Python structure it owns) under each name it
    writes; `matching` finds names by Redis glob patterns."""

    def __init__(self) -> None:
        self._values: dict[str, object] = {}
        self.erasures: dict[bytes, dict[str, int]] = {}  # each user's erasure record (brain.storage.fence)

    def check(self, user_id: str | bytes | None = None) -> None:
        """`ErasedError` when the held ticket (of `user_id`, when the store knows whose write it is) is older
        than an erasure of what it is for: what a fenced script does on Redis."""
        held = fence.applying(user_id)
        if held is None:
            return
        record = self.erasures.get(raw_id(held.user_id), {})
        if any(record.get(field, 0) > held.epoch for field in held.fields):
            raise ErasedError("the memory this work was for was erased meanwhile: nothing was written")

    def get(self, name: str, kind: type[T]) -> T | None:
        value = self._values.get(name)
        return value if isinstance(value, kind) else None

    def setdefault(self, name: str, make: Callable[[], T]) -> T:
        """The value under `name`, made first when there is none."""
        if name not in self._values:
            self._values[name] = make()
        return self._values[name]  # type: ignore[return-value]

    def delete(self, *names: str) -> int:
        """Remove the names; how many existed."""
        return sum(self._values.pop(name, None) is not None for name in names)

    def matching(self, patterns: tuple[str, ...] | list[str]) -> list[str]:
        """The names matching any of the glob `patterns` (`*`, `?`, `[...]` as in Redis SCAN), sorted."""
        return sorted(n for n in self._values if any(fnmatchcase(n, p) for p in patterns))
