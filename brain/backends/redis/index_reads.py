"""Read scripts of a search index namespace in Redis (`brain.backends.redis.index`), over the packed layout
of `brain.backends.redis.index_scripts`: documents by id, BM25 ranking, the ids a filter allows, ids by time.
"""

from __future__ import annotations

from brain.backends.redis.index_scripts import COMMON, ID_OF

__all__ = ["ALLOWED", "BY_TIME", "DOCS", "SEARCH", "SEARCH_SPAN"]

DOCS = (
    COMMON
    + """
-- KEYS: docs; ARGV: ids. Returns each id's record, or false for an id that is not there.
local out = {}
for i, id in ipairs(ARGV) do
  local num = num_of(id)
  out[i] = num and redis.call('HGET', KEYS[1], num) or false
end
return out
"""
)

_TIMED = """
-- (after COMMON and ID_OF) The namespace's packed lengths and times, each read once in a call; the live
-- numbers timed within [t0, t1] with their times.
local lens_held, times_held = nil, nil
local function lens_read()
  lens_held = lens_held or redis.call('GET', key('lens')) or ''
  return lens_held
end
local function times_read()
  times_held = times_held or redis.call('GET', key('ts')) or ''
  return times_held
end
local function timed(t0, t1)
  local out = {}
  for _, entry in ipairs(live(lens_read(), times_read())) do
    if entry[2] >= t0 and entry[2] <= t1 then out[#out + 1] = entry end
  end
  return out
end
"""

ALLOWED = (
    COMMON
    + ID_OF
    + _TIMED
    + """
-- KEYS: docs; ARGV: start, end ('' for an open end of an undated filter: no time filter), tags... Returns
-- the ids carrying one of the tags (any, without tags) and timed within [start, end] (any, undated).
local wanted = {}
for i = 3, #ARGV do wanted[#wanted + 1] = ARGV[i] end
local allowed = tagged(wanted)
local out = {}
if ARGV[1] ~= '' then
  for _, entry in ipairs(timed(tonumber(ARGV[1]), tonumber(ARGV[2]))) do
    if not allowed or allowed[entry[1]] then out[#out + 1] = id_of(entry[1]) end
  end
  return out
end
local lens = lens_read()
for num in pairs(allowed or {}) do
  local hi, lo = byte(lens, 2 * num - 1, 2 * num)
  if hi and (hi > 0 or lo > 0) then out[#out + 1] = id_of(num) end
end
return out
"""
)

BY_TIME = (
    COMMON
    + ID_OF
    + _TIMED
    + """
-- KEYS: docs; ARGV: start, end. Returns the ids timed within [start, end], newest first (equal times: the
-- greatest id first).
local found = timed(tonumber(ARGV[1]), tonumber(ARGV[2]))
table.sort(found, function(x, y)
  if x[2] == y[2] then return id_of(x[1]) > id_of(y[1]) end
  return x[2] > y[2]
end)
local out = {}
for i, entry in ipairs(found) do out[i] = id_of(entry[1]) end
return out
"""
)

_RANK = """
-- (after COMMON, ID_OF and _TIMED) BM25 in three steps. `scored`: every document posted under a term, with
-- its score, in the order first met; `best`: the best `k` of them kept by `allowed` (a set, or nil: all)
-- and timed within [t0, t1] (unbounded: any time), with how many were kept; `paged`: one page of those.
local function scored(terms, weights, per_term, k1, b, n, lens)
  local avg = tonumber(redis.call('HGET', key('stats'), 'total') or '0') / n
  local scores, order = {}, {}
  local t = 0
  for term in string.gmatch(terms, '%S+') do
    t = t + 1
    local held = redis.call('HGET', key('post'), term)
    if held then
      local _, df = struct.unpack('>I4I4', held)
      local idf = (weights[t] or 1) * math.log(1 + (n - df + 0.5) / (df + 0.5))
      local nums, tfs = postings(held)
      local take = per_term > 0 and per_term or df + per_term  -- as a sorted set's range 0 .. per_term - 1
      local all, least, room = take >= df, 256, 0  -- else: every tf above `least`, and `room` of it
      if not all and take > 0 then
        local counts = {}
        for _, tf in ipairs(tfs) do counts[tf] = (counts[tf] or 0) + 1 end
        local above = 0
        for tf = 255, 1, -1 do
          local c = counts[tf]
          if c then
            if above + c >= take then least, room = tf, take - above; break end
            above = above + c
          end
        end
      end
      for j = #nums, 1, -1 do  -- the latest added first: they win ties at `least`
        local tf = tfs[j]
        local use = all or tf > least
        if not use and tf == least and room > 0 then use = true; room = room - 1 end
        if use then
          local num = nums[j]
          local hi, lo = byte(lens, 2 * num - 1, 2 * num)
          if hi and (hi > 0 or lo > 0) then  -- else the document was removed (without these postings)
            local len = hi * 256 + lo - 1
            local s = idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avg))
            if scores[num] == nil then order[#order + 1] = num; scores[num] = s
            else scores[num] = scores[num] + s end
          end
        end
      end
    end
  end
  return scores, order
end
local function before(x, y)  -- whether hit x ranks before hit y: higher score, then smaller id
  if x[2] == y[2] then return id_of(x[1]) < id_of(y[1]) end
  return x[2] > y[2]
end
local function time_of(num)
  local times = times_read()
  if #times >= 8 * num then return struct.unpack('>d', times, 8 * (num - 1) + 1) end
  return 0
end
local function best(scores, order, allowed, t0, t1, k)
  local timed = t0 > -1e300 or t1 < 1e300
  local total, kept = 0, {}  -- `kept`: the best k so far, a heap with the last at its root
  local function sift(i)
    local size = #kept
    while true do
      local l, r, m = 2 * i, 2 * i + 1, i
      if l <= size and before(kept[m], kept[l]) then m = l end
      if r <= size and before(kept[m], kept[r]) then m = r end
      if m == i then return end
      kept[i], kept[m] = kept[m], kept[i]
      i = m
    end
  end
  for _, num in ipairs(order) do
    local ok = true
    if timed then
      local ts = time_of(num)
      ok = ts >= t0 and ts <= t1
    end
    if ok and allowed then ok = allowed[num] == true end
    if ok then
      total = total + 1
      local hit = {num, scores[num]}
      if #kept < k then
        kept[#kept + 1] = hit
        local i = #kept
        while i > 1 and before(kept[math.floor(i / 2)], kept[i]) do
          local p = math.floor(i / 2)
          kept[i], kept[p] = kept[p], kept[i]
          i = p
        end
      elseif k > 0 and before(hit, kept[1]) then
        kept[1] = hit
        sift(1)
      end
    end
  end
  table.sort(kept, before)
  return total, kept
end
local function paged(out, kept, offset)  -- appends id, score of the hits after `offset`
  for i = offset + 1, #kept do
    out[#out + 1] = id_of(kept[i][1]); out[#out + 1] = tostring(kept[i][2])
  end
  return out
end
local function tags_of(spaced)
  local wanted = {}
  for tag in string.gmatch(spaced, '%S+') do wanted[#wanted + 1] = tag end
  return tagged(wanted)
end
local function weights_of(spaced)
  local weights = {}
  for w in string.gmatch(spaced or '', '%S+') do weights[#weights + 1] = tonumber(w) end
  return weights
end
-- A search of ARGV as SEARCH lays it out: nil when the index was built by another analysis; else the
-- namespace's generation, its document count and (with documents) the scores and their order.
local function searched()
  if not current(ARGV[10], false) then return nil end
  local generation = tonumber(redis.call('GET', key('gen')) or '0')
  local n = tonumber(redis.call('HGET', key('stats'), 'n') or '0')
  if n == 0 then return generation, 0 end
  local lens = lens_read()
  local per_term, k1, b = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
  local scores, order = scored(ARGV[1], weights_of(ARGV[11]), per_term, k1, b, n, lens)
  return generation, n, scores, order
end
"""

SEARCH = (
    COMMON
    + ID_OF
    + _TIMED
    + _RANK
    + """
-- KEYS: docs; ARGV: terms 'a b ...', tags 'x y ...', per_term, k1, b, start_ts, end_ts, offset, limit,
-- analysis, and optionally the terms' weights 'wa wb ...' (1 each when absent). Returns
-- {total, generation, document count, id, score, ...}, or {-1} when the index was built by another
-- analysis; the generation is the namespace's change counter `<base>:gen` (fact memory's, read in the same
-- atomic call; 0 where none is kept).
local generation, n, scores, order = searched()
if generation == nil then return {-1} end
if n == 0 then return {0, generation, 0} end
local offset, limit = tonumber(ARGV[8]), tonumber(ARGV[9])
local t0, t1 = tonumber(ARGV[6]), tonumber(ARGV[7])
local total, kept = best(scores, order, tags_of(ARGV[2]), t0, t1, offset + limit)
return paged({total, generation, n}, kept, offset)
"""
)

SEARCH_SPAN = (
    COMMON
    + ID_OF
    + _TIMED
    + _RANK
    + """
-- KEYS: docs; ARGV: as SEARCH's (its offset ignored, its limit the depth), then low, high. One search of a
-- question naming a period [low, high]: the first `depth` of the ranking within the filters [start, end]
-- and of the ranking within the period, the ids of the period (those carrying one of the tags, when
-- given) and the namespace's document count. Returns {generation, n, total, hits, total within, hits
-- within, period ids, then each ranking's id, score pairs and the period's ids}, or {-1} when the index
-- was built by another analysis.
local generation, n, scores, order = searched()
if generation == nil then return {-1} end
if n == 0 then return {generation, 0, 0, 0, 0, 0, 0} end
local allowed, depth = tags_of(ARGV[2]), tonumber(ARGV[9])
local low, high = tonumber(ARGV[12]), tonumber(ARGV[13])
local total, kept = best(scores, order, allowed, tonumber(ARGV[6]), tonumber(ARGV[7]), depth)
local inside, within = best(scores, order, allowed, low, high, depth)
local period = {}
for _, entry in ipairs(timed(low, high)) do
  if not allowed or allowed[entry[1]] then period[#period + 1] = id_of(entry[1]) end
end
local out = paged(paged({generation, n, total, #kept, inside, #within, #period}, kept, 0), within, 0)
for _, id in ipairs(period) do out[#out + 1] = id end
return out
"""
)
