"""Pure helpers of the LangGraph store adapter: how an item (namespace, key, value, times, expiry) is kept
as a search-index document, and read back."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from brain.errors import InputError
from brain.search.index import IndexedDoc

__all__ = ["ItemRecord", "doc_id", "expired", "indexed_text", "namespace_tag", "record_doc", "value_json"]

ItemRecord = dict[str, Any]
"""A stored item's metadata: `ns`, `key`, `value`, `created_at`, `updated_at` (ISO), `expires_at` (epoch
seconds or None) and `ttl` (minutes or None)."""


def _digest(parts: Sequence[str]) -> str:
    return hashlib.sha256(json.dumps(list(parts), ensure_ascii=False).encode()).hexdigest()


def doc_id(namespace: Sequence[str], key: str) -> str:
    """The document id of `(namespace, key)`: a digest, so any namespace and key fit. Pure."""
    return _digest([*namespace, "\x00", key])[:40]


def namespace_tag(prefix: Sequence[str]) -> str:
    """The tag every item under namespace `prefix` carries (one per prefix of its namespace). Pure."""
    return "ns" + _digest(prefix)[:24]


def value_json(value: dict[str, Any]) -> dict[str, Any]:
    """`value` if it comes back equal from JSON (what the store keeps), else `InputError`. Pure."""
    try:
        data = json.loads(json.dumps(value))
    except (TypeError, ValueError) as exc:
        raise InputError(f"a store value must be JSON: {exc}") from exc
    if not isinstance(data, dict) or data != value:
        raise InputError("a store value must be a dict that survives a JSON round trip")
    return data


def _leaves(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for v in value.values() for text in _leaves(v)]
    if isinstance(value, list):
        return [text for v in value for text in _leaves(v)]
    return []


def indexed_text(value: dict[str, Any], fields: Sequence[str] | None) -> str:
    """The text search sees: every string in `value`, or the values at `fields` (LangGraph's paths,
    e.g. `"memory"`, `"notes[*].text"`). Pure but for LangGraph's path reader."""
    if fields is None or list(fields) == ["$"]:
        return "\n".join(_leaves(value))
    from langgraph.store.base.embed import get_text_at_path

    return "\n".join(text for path in fields for text in get_text_at_path(value, path))


def expired(record: ItemRecord, now: float) -> bool:
    expires = record.get("expires_at")
    return expires is not None and float(expires) <= now


def record_doc(
    namespace: Sequence[str],
    key: str,
    value: dict[str, Any],
    *,
    text: str,
    created_at: str,
    now: float,
    ttl: float | None,
) -> IndexedDoc:
    """The document of an item written at `now` (epoch seconds) that expires `ttl` minutes later. Pure."""
    record: ItemRecord = {
        "ns": list(namespace),
        "key": key,
        "value": value,
        "created_at": created_at,
        "updated_at": datetime.fromtimestamp(now, UTC).isoformat(),
        "expires_at": None if ttl is None else now + ttl * 60,
        "ttl": ttl,
    }
    tags = tuple(namespace_tag(namespace[:n]) for n in range(1, len(namespace) + 1))
    return IndexedDoc(id=doc_id(namespace, key), text=text, tags=tags, ts=now, metadata=record)
