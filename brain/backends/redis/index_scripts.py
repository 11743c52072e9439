"""Write scripts of a search index namespace in Redis (`brain.backends.redis.index`): the packed layout.

Each document gets a number (`stats.seq`, from 1) when it is added; `num` maps ids to numbers (uuid ids
packed 20 bytes each into 256 buckets) and `docs` numbers to records. A term's postings are one field of the
`post` hash: a head (last number, count) and per document a varint of its number's gap, with its term
frequency when over 1: about a byte per posting. A tag's documents are postings of a reserved term. Per
number, `lens` holds the document's length + 1 (2 bytes; 0: no document) and `ts` its time (a double).
The namespace keeps a fixed set of keys (`PARTS`); ids stay the public names (`vec`, `vseq` hold ids).
The read scripts are `brain.backends.redis.index_reads`'.
"""

from __future__ import annotations

from brain.backends.redis.packed_ids import LUA as PACKED_IDS
from brain.storage.index import MAX_LENGTH, MAX_TF

__all__ = ["ADD", "COMMON", "DELETE", "ID_OF", "INDEX_ADD", "LAYOUT", "PARTS"]

PARTS = ("docs", "num", "post", "lens", "ts", "stats", "vec", "vseq", "sources")
"""Every key of a namespace."""

LAYOUT = "/p4"
"""Appended to the analysis a namespace records: a namespace written by an older layout reads as stale and
is rebuilt (`brain.backends.redis.rebuild`)."""

# Keys inside one index are built in the scripts from the declared `docs` key: they share its hash tag, so
# they live in the same Cluster slot.
COMMON = (
    PACKED_IDS
    + """
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
-- Ids to numbers, in `num`: a 32-character lower-case hex id (a uuid's) is packed with its number
-- (16 + 4 bytes) into one of 256 buckets (field: a 0xFF byte, never in UTF-8, and the id's first two
-- characters); any other id is a field of its own.
local function id_slot(id)
  local raw = hex_bytes(id)
  if not raw then return id, nil end
  return '\\255' .. string.sub(id, 1, 2), raw
end
local function num_of(id)
  local field, raw = id_slot(id)
  local held = redis.call('HGET', key('num'), field)
  if not held or not raw then return held and tonumber(held) or nil end
  local at = bucket_at(held, raw)
  return at and struct.unpack('>I4', held, at + 16) or nil
end
local function set_num(id, num)
  local field, raw = id_slot(id)
  if not raw then redis.call('HSET', key('num'), field, num); return end
  local held = redis.call('HGET', key('num'), field) or ''
  redis.call('HSET', key('num'), field, held .. raw .. struct.pack('>I4', num))
end
local function del_num(id)
  local field, raw = id_slot(id)
  if not raw then redis.call('HDEL', key('num'), field); return end
  local held = redis.call('HGET', key('num'), field)
  local at = held and bucket_at(held, raw)
  if not at then return end
  local rest = string.sub(held, 1, at - 1) .. string.sub(held, at + 20)
  if rest == '' then redis.call('HDEL', key('num'), field)
  else redis.call('HSET', key('num'), field, rest) end
end
-- A term's postings in `post`: an 8-byte head (its last number, its count), then per document, oldest
-- first, a varint of (the gap from the previous number * 2 + 1 when its tf is over 1), then that tf.
local function varint(v)
  local out = ''
  while v >= 128 do out = out .. string.char(v % 128 + 128); v = (v - v % 128) / 128 end
  return out .. string.char(v)
end
local function posting(gap, tf)
  if tf > 1 then return varint(gap * 2 + 1) .. string.char(tf) end
  return varint(gap * 2)
end
local function postings(held)  -- numbers, tfs and each entry's first byte, oldest first
  local nums, tfs, at = {}, {}, {}
  local pos, num, size = 9, 0, #held
  while pos <= size do
    at[#at + 1] = pos
    local v, scale, b = 0, 1, 128
    while b >= 128 do b = byte(held, pos); pos = pos + 1; v = v + (b % 128) * scale; scale = scale * 128 end
    local tf = 1
    if v % 2 == 1 then tf = byte(held, pos); pos = pos + 1 end
    num = num + (v - v % 2) / 2
    nums[#nums + 1] = num; tfs[#tfs + 1] = tf
  end
  return nums, tfs, at
end
-- A tag's documents are postings too, of the term TAG .. tag (a 0xFF byte: no analysed term has it).
local TAG = '\\255'
local function post_add(term, num, tf)  -- numbers only grow: a new posting goes last
  tf = math.min(tf, """
    + str(MAX_TF)
    + """)
  local held = redis.call('HGET', key('post'), term)
  local count, entry = 1, posting(num, tf)
  if held then
    local last, n = struct.unpack('>I4I4', held)
    count, entry = n + 1, string.sub(held, 9) .. posting(num - last, tf)
  end
  redis.call('HSET', key('post'), term, struct.pack('>I4I4', num, count) .. entry)
end
local function post_remove(term, num)
  local held = redis.call('HGET', key('post'), term)
  if not held then return end
  local nums, tfs, at = postings(held)
  for i = 1, #nums do
    if nums[i] == num then
      if #nums == 1 then redis.call('HDEL', key('post'), term); return end
      local before = nums[i - 1] or 0
      local tail = ''
      if i < #nums then  -- the next entry's gap now reaches back to the entry before this one
        tail = posting(nums[i + 1] - before, tfs[i + 1]) .. string.sub(held, at[i + 2] or #held + 1)
      end
      local last = nums[#nums]
      if i == #nums then last = before end
      local head = struct.pack('>I4I4', last, #nums - 1)
      redis.call('HSET', key('post'), term, head .. string.sub(held, 9, at[i] - 1) .. tail)
      return
    end
  end
end
"""
)

INDEX_ADD = (
    """
-- Index one document (after COMMON): 1 added, 0 the id is there (nothing changes).
local function index_add(id, record, ts, length, postings, tags, vector)
  if num_of(id) then return 0 end
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
  set_num(id, num)
  redis.call('HSET', key('docs'), num, record)
  redis.call('SETRANGE', key('lens'), 2 * (num - 1), struct.pack('>I2', len + 1))
  redis.call('SETRANGE', key('ts'), 8 * (num - 1), struct.pack('>d', tonumber(ts)))
  redis.call('HINCRBY', key('stats'), 'n', 1)
  redis.call('HINCRBY', key('stats'), 'total', len)
  for term, tf in string.gmatch(postings, '(%S+) (%S+)') do post_add(term, num, tonumber(tf)) end
  for tag in string.gmatch(tags, '%S+') do post_add(TAG .. tag, num, 1) end
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
local num = num_of(ARGV[1])
if not num then return 0 end
local lens = redis.call('GETRANGE', key('lens'), 2 * (num - 1), 2 * num - 1)
local length = 0
if #lens == 2 then length = math.max(struct.unpack('>I2', lens) - 1, 0) end
redis.call('HDEL', KEYS[1], num)
del_num(ARGV[1])
redis.call('SETRANGE', key('lens'), 2 * (num - 1), struct.pack('>I2', 0))
if redis.call('HDEL', key('vec'), ARGV[1]) == 1 then
  redis.call('ZREM', key('vseq'), ARGV[1])
  redis.call('HINCRBY', key('stats'), 'vdel', 1)
end
redis.call('HINCRBY', key('stats'), 'n', -1)
redis.call('HINCRBY', key('stats'), 'total', 0 - length)
for term in string.gmatch(ARGV[2], '%S+') do post_remove(term, num) end
for tag in string.gmatch(ARGV[3], '%S+') do post_remove(TAG .. tag, num) end
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
-- The numbers carrying one of `tags` (a set), or nil without tags.
local function tagged(tags)
  if #tags == 0 then return nil end
  local found = {}
  for _, tag in ipairs(tags) do
    local held = redis.call('HGET', key('post'), TAG .. tag)
    if held then for _, num in ipairs((postings(held))) do found[num] = true end end
  end
  return found
end
"""
