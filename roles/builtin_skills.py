"""Skills shipped with brain-assistant, for use in YAML (`entry: roles.builtin_skills:NAME`)."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["current_time"]


def current_time() -> str:
    """The current date and time in UTC, ISO 8601."""
    return datetime.now(UTC).isoformat(timespec="seconds")
