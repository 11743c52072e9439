"""`UtcTime`: a moment as the HTTP API answers it, ISO 8601 in UTC ("2024-03-01T09:30:00Z")."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator, AwareDatetime, BeforeValidator

__all__ = ["UtcTime", "from_unix", "in_utc"]


def from_unix(value: object) -> object:
    """A number as seconds since the epoch, in UTC (what the store keeps); anything else as given. Pure.
    (Pydantic's own reading of numbers takes large ones for milliseconds: not this.)"""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, UTC)
    return value


def in_utc(moment: datetime) -> datetime:
    """The same moment in UTC. Pure."""
    return moment.astimezone(UTC)


UtcTime = Annotated[AwareDatetime, BeforeValidator(from_unix), AfterValidator(in_utc)]
"""A moment with its zone, kept in UTC: made from Unix seconds or an ISO time with a zone; in JSON an ISO
8601 string ending in "Z"."""
