"""Ids of 32 lower-case hex digits (uuids, as brain-assistant makes them) kept as their 16 bytes, in Python
and in the Lua scripts: message ids in a conversation's ids hash, document ids in a search index's `num`
hash, fact ids and content hashes in fact memory. A bucket is a run of 20-byte entries: the 16 bytes and
a 4-byte big-endian number. Pure."""

from __future__ import annotations

import re

__all__ = ["LUA", "hex_bytes"]

_HEX = re.compile(r"[0-9a-f]{32}")


def hex_bytes(value: str) -> bytes:
    """The 16 bytes of an id of 32 lower-case hex digits; b"" for any other id (kept as text)."""
    return bytes.fromhex(value) if len(value) == 32 and _HEX.fullmatch(value) else b""


LUA = """
-- The 16 bytes of an id of 32 lower-case hex digits, else nil (as `hex_bytes` in Python).
local function hex_bytes(s)
  if #s ~= 32 or string.find(s, '[^0-9a-f]') then return nil end
  return (string.gsub(s, '..', function(c) return string.char(tonumber(c, 16)) end))
end
-- Where the entry of 16-byte `raw` starts in `bucket` (20-byte entries), else nil.
local function bucket_at(bucket, raw)
  local from = 1
  while true do
    local at = string.find(bucket, raw, from, true)
    if not at or (at - 1) % 20 == 0 then return at end
    from = at + 1
  end
end
"""
"""`hex_bytes` and `bucket_at` for a script (once per script)."""
