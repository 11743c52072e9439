"""What a search index stores and returns: frozen records, no behaviour."""

from __future__ import annotations

import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Hit", "IndexedDoc"]


class IndexedDoc(BaseModel):
    """A stored passage or turn: text with tags, source and a timestamp (seconds since the epoch)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1, max_length=256)
    text: str
    tags: tuple[str, ...] = ()
    source: str = ""
    ts: float = Field(default_factory=time.time)
    metadata: dict[str, Any] = Field(default_factory=dict)


class Hit(BaseModel):
    model_config = ConfigDict(frozen=True)

    doc: IndexedDoc
    score: float
