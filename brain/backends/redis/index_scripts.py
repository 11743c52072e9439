"""Lua scripts of a search index namespace in Redis (`brain.backends.redis.index`)."""

from __future__ import annotations

__all__ = ["ADD", "COMMON", "DELETE", "INDEX_ADD", "SEARCH"]

# Keys inside one index are built in the scripts from the declared `docs` key: they share its hash tag, so
# they live in the same Cluster slot; passing hundreds of posting keys per call would cost more than the work.
COMMON = """
local base = string.sub(KEYS[1], 1, #KEYS[1] - 5)  -- KEYS[1] is '<base>:docs'
local function key(part) return base .. ':' .. part end
-- Whether the index was built by `version`'s analysis; an empty index takes it (`claim`).
local function current(version, claim)
  local v = redis.call('HGET', key('stats'), 'v')
  if v == version then return true end
  if tonumber(redis.call('HGET', key('stats'), 'n') or '0') > 0 then return false end
  if claim then redis.call('HSET', key('stats'), 'v', version) end
  return true
end
"""

INDEX_ADD = """
-- Index one document (after COMMON): 1 added, 0 the id is there (nothing changes).
local function index_add(id, record, ts, length, postings, tags, vector)
  if redis.call('HEXISTS', key('docs'), id) == 1 then return 0 end
  if vector ~= '' then
    if redis.call('HEXISTS', key('stats'), 'vgen') == 0 then  -- a new generation of the namespace's vectors
      local now = redis.call('TIME')
      redis.call('HSET', key('stats'), 'vgen', now[1] .. '.' .. now[2])
    end
    redis.call('HSET', key('vec'), id, vector)
    redis.call('ZADD', key('vseq'), redis.call('HINCRBY', key('stats'), 'vseq', 1), id)
  end
  redis.call('HSET', key('docs'), id, record)
  redis.call('HSET', key('len'), id, length)
  redis.call('ZADD', key('time'), ts, id)
  redis.call('HINCRBY', key('stats'), 'n', 1)
  redis.call('HINCRBY', key('stats'), 'total', length)
  for term, tf in string.gmatch(postings, '(%S+) (%S+)') do
    redis.call('ZADD', key('post:' .. term), tf, id)
  end
  for tag in string.gmatch(tags, '%S+') do redis.call('SADD', key('tag:' .. tag), id) end
  return 1
end
"""
"""A Lua function (after `COMMON`) that indexes one document; the index's ADD and the fact store's ADD
use it, so a fact and its search entry are one write."""

ADD = (
    COMMON
    + INDEX_ADD
    + """
-- KEYS: docs; ARGV: id, record, ts, length, postings 'term tf term tf ...', tags 'tag tag ...', vector,
-- analysis. Returns 1 (added), 0 (the id is there) or -1 (the index was built by another analysis).
if not current(ARGV[8], true) then return -1 end
return index_add(ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7])
"""
)

DELETE = (
    COMMON
    + """
-- KEYS: docs; ARGV: id, terms 'term term ...', tags 'tag tag ...', analysis. Returns 1, 0 (no such id) or
-- -1 (the index was built by another analysis).
if not current(ARGV[4], false) then return -1 end
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
local length = tonumber(redis.call('HGET', key('len'), ARGV[1]) or '0')
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', key('len'), ARGV[1])
if redis.call('HDEL', key('vec'), ARGV[1]) == 1 then
  redis.call('ZREM', key('vseq'), ARGV[1])
  redis.call('HINCRBY', key('stats'), 'vdel', 1)
end
redis.call('ZREM', key('time'), ARGV[1])
redis.call('HINCRBY', key('stats'), 'n', -1)
redis.call('HINCRBY', key('stats'), 'total', 0 - length)
for term in string.gmatch(ARGV[2], '%S+') do redis.call('ZREM', key('post:' .. term), ARGV[1]) end
for tag in string.gmatch(ARGV[3], '%S+') do redis.call('SREM', key('tag:' .. tag), ARGV[1]) end
return 1
"""
)

SEARCH = (
    COMMON
    + """
-- KEYS: docs; ARGV: terms 'a b ...', tags 'x y ...', per_term, k1, b, start_ts, end_ts, offset, limit,
-- analysis, and optionally the terms' weights 'wa wb ...' (1 each when absent). Returns
-- {total, id, score, ...}, or {-1} when the index was built by another analysis.
if not current(ARGV[10], false) then return {-1} end
local weights = {}
for w in string.gmatch(ARGV[11] or '', '%S+') do weights[#weights + 1] = tonumber(w) end
local per_term, k1, b = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local t0, t1, offset, limit = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])
local n = tonumber(redis.call('HGET', key('stats'), 'n') or '0')
if n == 0 then return {0} end
local avg = tonumber(redis.call('HGET', key('stats'), 'total') or '0') / n
local lens = key('len')
local scores, order = {}, {}
local t = 0
for term in string.gmatch(ARGV[1], '%S+') do
  t = t + 1
  local postings_key = key('post:' .. term)
  local df = redis.call('ZCARD', postings_key)
  if df > 0 then
    local idf = (weights[t] or 1) * math.log(1 + (n - df + 0.5) / (df + 0.5))
    local postings = redis.call('ZREVRANGE', postings_key, 0, per_term - 1, 'WITHSCORES')
    for j = 1, #postings, 2 do
      local id, tf = postings[j], tonumber(postings[j + 1])
      local len = tonumber(redis.call('HGET', lens, id) or avg)
      local s = idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avg))
      if scores[id] == nil then order[#order + 1] = id; scores[id] = s else scores[id] = scores[id] + s end
    end
  end
end
local tags = {}
for tag in string.gmatch(ARGV[2], '%S+') do tags[#tags + 1] = key('tag:' .. tag) end
local times = key('time')
local hits = {}
for _, id in ipairs(order) do
  local ok = true
  if t0 > -1e300 or t1 < 1e300 then
    local ts = tonumber(redis.call('ZSCORE', times, id) or '0')
    ok = ts >= t0 and ts <= t1
  end
  if ok and #tags > 0 then
    ok = false
    for _, tag_key in ipairs(tags) do
      if redis.call('SISMEMBER', tag_key, id) == 1 then ok = true; break end
    end
  end
  if ok then hits[#hits + 1] = {id, scores[id]} end
end
table.sort(hits, function(x, y) if x[2] == y[2] then return x[1] < y[1] end return x[2] > y[2] end)
local out = {#hits}
for i = offset + 1, math.min(offset + limit, #hits) do
  out[#out + 1] = hits[i][1]; out[#out + 1] = tostring(hits[i][2])
end
return out
"""
)
