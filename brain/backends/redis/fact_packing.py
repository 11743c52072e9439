"""Packed forms of fact memory's ids in Redis (`brain.backends.redis.facts`). Pure.

- Fact ids and content hashes of 32 lowercase hex digits are b"\\x01" and their 16 bytes (`pack_id`), any
  other as it is: the fields of `facts` (a fact's record), both sides of the content-hash index (`hash`) and
  an audit event's `fact_id`. Older entries (hex) read the same (`unpack_id`; readers look an id or a hash
  up in both forms). The fact scripts convert alike (`LUA`).
- A batch (`batches`): its transcript hash packed the same way as the field; its fact ids b"\\x01" and 16
  bytes per id when every id is 32 hex digits, else their JSON list (older records: JSON, hex field).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TypeVar

from brain.backends.redis.packed_ids import hex_bytes

__all__ = ["LUA", "id_fields", "pack_id", "pack_ids", "pick", "unpack_id", "unpack_ids"]

_T = TypeVar("_T")
_MARK = b"\x01"


def pack_id(value: str) -> bytes:
    """An id or hash as the index stores it."""
    raw = hex_bytes(value)
    return _MARK + raw if raw else value.encode("utf-8", "surrogatepass")


def unpack_id(raw: bytes | str) -> str:
    """The id or hash `pack_id` stored (or an older entry's as it is)."""
    data = raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass")
    if len(data) == 17 and data[:1] == _MARK:
        return data[1:].hex()
    return data.decode("utf-8", "surrogatepass")


def id_fields(ids: Sequence[str]) -> list[bytes]:
    """The fields that may hold each id or hash, packed form first: 2 each (the same twice when it does not
    pack, so that results pair up: `pick`)."""
    return [field for i in ids for field in (pack_id(i), i.encode("utf-8", "surrogatepass"))]


def pick(values: Sequence[_T]) -> list[_T]:
    """Per id, the value an `id_fields` read found: the packed field's, else the older one's."""
    return [
        packed if packed is not None else older
        for packed, older in zip(values[::2], values[1::2], strict=True)
    ]


def pack_ids(ids: Sequence[str]) -> bytes:
    """A batch's fact ids as stored."""
    packed = [hex_bytes(i) for i in ids]
    if all(packed):
        return _MARK + b"".join(packed)
    return json.dumps(list(ids), ensure_ascii=False).encode("utf-8", "surrogatepass")


def unpack_ids(raw: bytes | str) -> list[str]:
    """The fact ids `pack_ids` stored (or an older record's JSON list)."""
    data = raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass")
    if data[:1] == _MARK:
        return [data[i : i + 16].hex() for i in range(1, len(data), 16)]
    return list(json.loads(data))


# In the scripts, after `brain.backends.redis.packed_ids.LUA`: `pack_id`, `unpack_id`; `fact_get` (a fact's
# record by id, or false: the packed field first, then an older hex one); the content-hash index:
# `hash_get` (the id an entry names, unpacked, or false; both forms as `fact_get`), `hash_set`, `hash_drop`
# (both forms, where they name `id`).
LUA = """
local function pack_id(s)
  local raw = hex_bytes(s)
  if raw then return '\\1' .. raw end
  return s
end
local function unpack_id(v)
  if #v == 17 and string.byte(v, 1) == 1 then
    return (string.gsub(string.sub(v, 2), '.', function(c) return string.format('%02x', string.byte(c)) end))
  end
  return v
end
local function hash_get(hashes, h)
  local v = redis.call('HGET', hashes, pack_id(h))
  if not v then v = redis.call('HGET', hashes, h) end
  if v then return unpack_id(v) end
  return false
end
local function fact_get(facts, id)
  local raw = redis.call('HGET', facts, pack_id(id))
  if not raw then raw = redis.call('HGET', facts, id) end
  return raw
end
local function hash_set(hashes, h, id) redis.call('HSET', hashes, pack_id(h), pack_id(id)) end
local function hash_drop(hashes, h, id)
  for _, field in ipairs({pack_id(h), h}) do
    local v = redis.call('HGET', hashes, field)
    if v and unpack_id(v) == id then redis.call('HDEL', hashes, field) end
  end
end
"""
