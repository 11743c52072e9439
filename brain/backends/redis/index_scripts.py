"""Lua scripts of a search index namespace in Redis (`brain.backends.redis.index`).

The postings are packed: each document gets a number (`stats.seq`, from 1) when it is added, and a term's
postings are one field of the `post` hash: 5 bytes per document (its number, 4 bytes big-endian, then its
term frequency, capped at 255). Per number, `lens` holds the document's length + 1 (2 bytes, capped; 0: no
document) and `ts` its time (a big-endian double); `tag:<tag>` is a bitmap of numbers; `docs` maps numbers
to records and `num` ids to numbers. A term's postings cost 5 bytes per document instead of a sorted-set
member, a tag one bit, and the namespace keeps a fixed set of keys (plus one per tag, named in `tags`). Ids
stay the public names (`vec` and `vseq` hold ids). The read scripts are `brain.backends.redis.index_reads`'.
"""

from __future__ import annotations

from brain.storage.index import MAX_LENGTH, MAX_TF

__all__ = ["ADD", "COMMON", "DELETE", "ID_OF", "INDEX_ADD", "LAYOUT", "PARTS"]

PARTS = ("docs", "num", "post", "lens", "ts", "stats", "vec", "vseq", "sources", "tags")
"""A namespace's keys besides one bitmap per tag (`tags` names the tags)."""

LAYOUT = "/p2"
"""Appended to the analysis a namespace records: a namespace written by an older layout reads as stale and
is rebuilt (`brain.backends.redis.rebuild`)."""

# Keys inside one index are built in the scripts from the declared `docs` key: they share its hash tag, so
# they live in the same Cluster slot.
COMMON = """
local base = string.sub(KEYS[1], 1, #KEYS[1] - 5)  -- KEYS[1] is '<base>:docs'
local function key(part) return base .. ':' .. part end
local byte = string.byte
-- Whether the index was built by `version`'s analysis; an empty index takes it (`claim`). A namespace being
-- rebuilt (its version starts with '~') belongs to the rebuild alone.
local function current(version, claim)
  local v = redis.call('HGET', key('stats'), 'v')
  if v == version then return true end
  if v and string.sub(v, 1, 1) == '~' then return false end
  if tonumber(redis.call('HGET', key('stats'), 'n') or '0') > 0 then return false end
  if claim then redis.call('HSET', key('stats'), 'v', version) end
  return true
end
"""

INDEX_ADD = (
    """
-- Index one document (after COMMON): 1 added, 0 the id is there (nothing changes).
local function index_add(id, record, ts, length, postings, tags, vector)
  if redis.call('HEXISTS', key('num'), id) == 1 then return 0 end
  if vector ~= '' then
    if redis.call('HEXISTS', key('stats'), 'vgen') == 0 then  -- a new generation of the namespace's vectors
      local now = redis.call('TIME')
      redis.call('HSET', key('stats'), 'vgen', now[1] .. '.' .. now[2])
    end
    redis.call('HSET', key('vec'), id, vector)
    redis.call('ZADD', key('vseq'), redis.call('HINCRBY', key('stats'), 'vseq', 1), id)
  end
  local num = redis.call('HINCRBY', key('stats'), 'seq', 1)
  local len = math.min(tonumber(length), """
    + str(MAX_LENGTH)
    + """)
  redis.call('HSET', key('num'), id, num)
  redis.call('HSET', key('docs'), num, record)
  redis.call('SETRANGE', key('lens'), 2 * (num - 1), struct.pack('>I2', len + 1))
  redis.call('SETRANGE', key('ts'), 8 * (num - 1), struct.pack('>d', tonumber(ts)))
  redis.call('HINCRBY', key('stats'), 'n', 1)
  redis.call('HINCRBY', key('stats'), 'total', len)
  local packed = struct.pack('>I4', num)
  for term, tf in string.gmatch(postings, '(%S+) (%S+)') do
    local held = redis.call('HGET', key('post'), term) or ''
    redis.call('HSET', key('post'), term, held .. packed .. string.char(math.min(tonumber(tf), """
    + str(MAX_TF)
    + """)))
  end
  for tag in string.gmatch(tags, '%S+') do
    redis.call('SETBIT', key('tag:' .. tag), num, 1)
    redis.call('SADD', key('tags'), tag)
  end
  return 1
end
"""
)
"""A Lua function (after `COMMON`) that indexes one document; the index's ADD and the fact store's ADD
use it, so a fact and its search entry are one write."""

ADD = (
    COMMON
    + INDEX_ADD
    + """
-- KEYS: docs; ARGV: id, record, ts, length, postings 'term tf term tf ...', tags 'tag tag ...', vector,
-- analysis, and optionally a time to live in seconds (0: none) that every key of the namespace then gets.
-- Returns 1 (added), 0 (the id is there) or -1 (the index was built by another analysis).
if not current(ARGV[8], true) then return -1 end
local added = index_add(ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7])
local ttl = tonumber(ARGV[9] or '0')
if ttl > 0 then
  for part in string.gmatch('"""
    + " ".join(PARTS)
    + """', '%S+') do redis.call('EXPIRE', key(part), ttl) end
  for _, tag in ipairs(redis.call('SMEMBERS', key('tags'))) do
    redis.call('EXPIRE', key('tag:' .. tag), ttl)
  end
end
return added
"""
)

DELETE = (
    COMMON
    + """
-- KEYS: docs; ARGV: id, terms 'term term ...', tags 'tag tag ...', analysis. Returns 1, 0 (no such id) or
-- -1 (the index was built by another analysis).
if not current(ARGV[4], false) then return -1 end
local num = tonumber(redis.call('HGET', key('num'), ARGV[1]))
if not num then return 0 end
local lens = redis.call('GETRANGE', key('lens'), 2 * (num - 1), 2 * num - 1)
local length = 0
if #lens == 2 then length = math.max(struct.unpack('>I2', lens) - 1, 0) end
redis.call('HDEL', KEYS[1], num)
redis.call('HDEL', key('num'), ARGV[1])
redis.call('SETRANGE', key('lens'), 2 * (num - 1), struct.pack('>I2', 0))
if redis.call('HDEL', key('vec'), ARGV[1]) == 1 then
  redis.call('ZREM', key('vseq'), ARGV[1])
  redis.call('HINCRBY', key('stats'), 'vdel', 1)
end
redis.call('HINCRBY', key('stats'), 'n', -1)
redis.call('HINCRBY', key('stats'), 'total', 0 - length)
local packed = struct.pack('>I4', num)
for term in string.gmatch(ARGV[2], '%S+') do
  local held = redis.call('HGET', key('post'), term)
  if held then
    for i = 1, #held, 5 do
      if string.sub(held, i, i + 3) == packed then
        local rest = string.sub(held, 1, i - 1) .. string.sub(held, i + 5)
        if rest == '' then redis.call('HDEL', key('post'), term)
        else redis.call('HSET', key('post'), term, rest) end
        break
      end
    end
  end
end
for tag in string.gmatch(ARGV[3], '%S+') do
  local bits = key('tag:' .. tag)
  redis.call('SETBIT', bits, num, 0)
  if redis.call('BITCOUNT', bits) == 0 then redis.call('DEL', bits) end
end
return 1
"""
)

ID_OF = """
-- (after COMMON) A document's id by its number, read from its record (remembered for the call).
local known_ids = {}
local function id_of(num)
  local id = known_ids[num]
  if id == nil then
    local record = redis.call('HGET', KEYS[1], num) or '{}'
    id = string.match(record, '^{"id":"([^"\\\\]*)"') or cjson.decode(record)['id'] or ''
    known_ids[num] = id
  end
  return id
end
-- The numbers whose length is recorded (live documents), with their times.
local function live(lens, times)
  local out = {}
  for num = 1, math.floor(#times / 8) do
    local hi, lo = byte(lens, 2 * num - 1, 2 * num)
    if hi and (hi > 0 or lo > 0) then out[#out + 1] = {num, struct.unpack('>d', times, 8 * (num - 1) + 1)} end
  end
  return out
end
-- Whether bit `num` is set in bitmap `bits` (Redis bitmaps: the most significant bit first).
local function bit_set(bits, num)
  local b = byte(bits, math.floor(num / 8) + 1)
  return b ~= nil and math.floor(b / 2 ^ (7 - num % 8)) % 2 == 1
end
"""
