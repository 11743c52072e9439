"""How fact memory's records look in Redis (`brain.backends.redis.fact_scripts`). Pure.

- A fact: its JSON without its id (the hash field names it) and without default-valued fields, under
  one-letter names (`SHORT`: "t" the text, "h" the hash, "s" its sources' reference); older records: the
  full names, `"src": <reference>` (or every field, `source_turns` inline): read the same.
- A source (the turn ids a batch was extracted from): stored once under its reference, the first 9 bytes
  of its SHA-256 in base64url (12 characters; older ones: 16, read the same): b"\\x01" and 16 bytes per id
  when every id is 32 lowercase hex digits, else their JSON list. Facts, their audit events and their
  merges name it by reference.
- An audit event: `src` (a reference) instead of the `source_turns` JSON of older events; a text that is the
  subject fact's (or the replaced fact's) as a mark, `new_is`/`old_is` = "f" (or "o"), read back from the
  fact (`event_texts`).
- Merged provenance (`prov`): {"r": [references], "t": [turn ids merged by an older version]}, or an older
  version's JSON list of turn ids.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from brain.errors import StoreError
from brain.search.filters import text
from brain.storage.facts import AuditEntry, AuditEvent, Fact

__all__ = [
    "SHORT",
    "audit_args",
    "build_fact",
    "decode_sources",
    "encode_sources",
    "event_refs",
    "fact_json",
    "load_event",
    "load_fact",
    "load_merged",
    "merged_refs",
    "record_refs",
    "text_ids",
]

_HEX = re.compile(r"[0-9a-f]{32}")
_PACKED = b"\x01"

SHORT = {
    "text": "t",
    "category": "c",
    "agent_id": "g",
    "run_id": "r",
    "valid_at": "v",
    "invalid_at": "i",
    "created_at": "a",
    "expired_at": "x",
    "superseded_by": "b",
    "hash": "h",
    "key": "k",
    "value": "u",
    "src": "s",
}
"""A fact record's names: the full name -> the one a record stores (a record with "t" uses them)."""
_LONG = {short: name for name, short in SHORT.items()}


def encode_sources(ids: Sequence[str]) -> tuple[str, bytes]:
    """(reference, stored value) of a source's turn ids."""
    if all(len(i) == 32 and _HEX.fullmatch(i) for i in ids):
        value = _PACKED + b"".join(bytes.fromhex(i) for i in ids)
    else:
        value = json.dumps(list(ids), ensure_ascii=False, separators=(",", ":")).encode(
            "utf-8", "surrogatepass"
        )
    return base64.urlsafe_b64encode(hashlib.sha256(value).digest()[:9]).decode(), value


def decode_sources(value: bytes) -> tuple[str, ...]:
    """The turn ids of a stored source."""
    if value[:1] == _PACKED:
        return tuple(value[i : i + 16].hex() for i in range(1, len(value), 16))
    return tuple(json.loads(value))


def fact_json(fact: Fact) -> str:
    """A fact's record: without its id, its sources and default-valued fields (`hash` and `text` always:
    the scripts read them)."""
    data = fact.model_dump(mode="json", exclude_defaults=True, exclude={"id", "source_turns"})
    data["hash"] = fact.hash
    if fact.source_turns:
        data["src"] = encode_sources(fact.source_turns)[0]
    short = {SHORT.get(name, name): value for name, value in data.items()}
    return json.dumps(short, ensure_ascii=False, separators=(",", ":"))


def audit_args(entry: AuditEntry, *own: str, also: Sequence[tuple[str, ...]] = ()) -> list[str | bytes]:
    """An audit entry as the fact scripts take it: name/value pairs (empty fields and the script's `own`
    left out), its sources as a reference (`src`), then '@src' pairs storing its sources and `also`'s."""
    fields = entry.model_dump(exclude={*own, "source_turns"})
    out: list[str | bytes] = [part for key, value in fields.items() if value for part in (key, str(value))]
    stored: dict[str, bytes] = {}
    for ids in (entry.source_turns, *also):
        if ids:
            ref, value = encode_sources(ids)
            stored[ref] = value
            if ids is entry.source_turns:
                out += ["src", ref]
    for ref, value in stored.items():
        out += ["@src", ref.encode() + value]
    return out


def load_fact(raw: bytes | str) -> dict[str, Any]:
    """A fact record's JSON object under the full names (`StoreError` when it is not one)."""
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise StoreError(f"corrupt fact record: {exc}; it was left as it is") from exc
    if not isinstance(data, dict):
        raise StoreError("corrupt fact record: not an object; it was left as it is")
    if "t" in data:
        return {_LONG[name] if name in _LONG else str(name): value for name, value in data.items()}
    return data


def load_merged(raw: bytes | str | None) -> dict[str, list[str]]:
    """Merged provenance as {"r": references, "t": turn ids}."""
    if not raw:
        return {}
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise StoreError(f"corrupt fact provenance: {exc}; it was left as it is") from exc
    return {"t": data} if isinstance(data, list) else data if isinstance(data, dict) else {}


def record_refs(record: Mapping[str, Any]) -> list[str]:
    return [record["src"]] if isinstance(record.get("src"), str) else []


def merged_refs(merged: Mapping[str, list[str]]) -> list[str]:
    return list(merged.get("r") or [])


def build_fact(
    fact_id: str,
    record: Mapping[str, Any],
    state: bytes | str | None,
    merged: Mapping[str, list[str]],
    sources: Mapping[str, tuple[str, ...]],
) -> Fact:
    """The fact a record, its retired state, its merged provenance and the sources they name hold."""
    data = dict(record)
    data.setdefault("id", fact_id)
    ref = data.pop("src", None)
    try:
        own = tuple(data.pop("source_turns", ())) + (_sources(sources, ref) if ref else ())
        seen, added = set(own), []
        for turn in [
            *(merged.get("t") or ()),
            *(t for r in merged_refs(merged) for t in _sources(sources, r)),
        ]:
            if turn not in seen:
                seen.add(turn)
                added.append(turn)
        fact = Fact.model_validate({**data, "source_turns": (*own, *added)})
        if not state:
            return fact
        expired, invalid, superseded = text(state).split("|")
        return fact.model_copy(
            update={
                "expired_at": float(expired),
                "invalid_at": fact.invalid_at if fact.invalid_at is not None else float(invalid),
                "superseded_by": superseded or None,
            }
        )
    except (ValidationError, ValueError, TypeError) as exc:
        raise StoreError(f"corrupt fact record: {exc}; it was left as it is") from exc


def _sources(sources: Mapping[str, tuple[str, ...]], ref: str) -> tuple[str, ...]:
    if ref not in sources:
        raise StoreError(f"fact source {ref!r} is missing; the records were left as they are")
    return sources[ref]


def event_refs(fields: Mapping[str, str]) -> list[str]:
    return [fields["src"]] if "src" in fields else []


def text_ids(fields: Mapping[str, str]) -> list[str]:
    """The facts whose texts an event's marks name."""
    return [_marked(fields, mark) for mark in ("new_is", "old_is") if mark in fields]


def _marked(fields: Mapping[str, str], mark: str) -> str:
    return fields.get("old_fact_id", "") if fields[mark] == "o" else fields.get("fact_id", "")


def load_event(
    entry_id: str,
    fields: Mapping[str, str],
    texts: Mapping[str, str],
    sources: Mapping[str, tuple[str, ...]],
) -> AuditEvent:
    """An audit event from its stream entry (decoded), the texts of the facts it marks (`text_ids`) and
    the sources it names."""
    data = dict(fields)
    for mark, name in (("new_is", "new_text"), ("old_is", "old_text")):
        if mark in data:
            data[name] = texts.get(_marked(fields, mark), "")
            del data[mark]
    ref = data.pop("src", None)
    source = tuple(json.loads(data.pop("source_turns", "[]") or "[]"))
    if ref:
        source = _sources(sources, ref)
    return AuditEvent(id=entry_id, at=int(entry_id.split("-")[0]) / 1000, source_turns=source, **data)
