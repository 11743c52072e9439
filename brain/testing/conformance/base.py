"""What every suite shares: the `backend` fixture a test module provides, and how stream-like ids order."""

from __future__ import annotations

import pytest

from brain.storage.backend import Backend

__all__ = ["BackendSuite", "id_order"]


class BackendSuite:
    """A suite over one `Backend`. Subclass it in a test module and override the `backend` fixture: a
    `Backend` whose `prefix` no other test uses (or an empty one)."""

    @pytest.fixture
    def backend(self) -> Backend:
        raise NotImplementedError("override the backend fixture")


def id_order(entry_id: str) -> tuple[int, int]:
    """An audit event's or a queue entry's id, "<milliseconds>-<n>", as a sortable pair. Pure."""
    ms, n = entry_id.split("-")
    return int(ms), int(n)
