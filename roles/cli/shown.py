"""How the command line shows a stored time: light on purpose (commands that list keys or facts import it)."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["shown_date"]


def shown_date(ts: float | None) -> str:
    """A Unix time as an ISO date and time to the second, in UTC; "-" for none. Pure."""
    return "-" if ts is None else datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds")
