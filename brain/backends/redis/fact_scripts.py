"""Lua scripts of fact memory. Fact KEYS are (facts, state, hashes, audit) of one user, one hash tag:
`facts` id -> the fact's JSON (never changed), `state` id -> "expired_at|invalid_at|superseded_by" (only for
retired facts), `hashes` content hash -> id of the current fact, `audit` a stream. Beside them, derived in
the scripts (same hash tag): `gen`, a counter every change of current facts increments, and `prov` id ->
the JSON list of the sources merged into a fact later. Audit fields come last in ARGV as name/value
pairs."""

from brain.backends.redis.index_scripts import COMMON, INDEX_ADD

__all__ = ["ADD", "ERASE", "MERGE", "RESTORE", "RETIRE"]

_BASE = """
local fact_base = string.sub(KEYS[1], 1, #KEYS[1] - 6)  -- KEYS[1] is '<base>:facts'
local function changed() redis.call('INCR', fact_base .. ':gen') end
"""

# KEYS: the fact index's docs, facts, state, hashes, audit. ARGV: id, JSON, hash, replaces ('' or id), now,
# invalid_at of the replaced fact, analysis ('': no search entry), the entry's record, ts, length,
# postings, tags, vector, audit pairs... -> {existing id or '', replaced text}. The fact, the retirement
# of the one it replaces, its search entry and its audit event are one write.
ADD = (
    COMMON
    + INDEX_ADD
    + """
local facts, state, hashes, audit = KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local existing = redis.call('HGET', hashes, ARGV[3])
if existing then return {existing, ''} end
if ARGV[7] ~= '' and not current(ARGV[7], true) then return redis.error_reply('BRAIN_STALE') end
local old_text = ''
if ARGV[4] ~= '' then
  local raw = redis.call('HGET', facts, ARGV[4])
  if not raw then return redis.error_reply('BRAIN_MISSING') end
  if redis.call('HEXISTS', state, ARGV[4]) == 1 then return redis.error_reply('BRAIN_RETIRED') end
  local old = cjson.decode(raw)
  redis.call('HSET', state, ARGV[4], ARGV[5] .. '|' .. ARGV[6] .. '|' .. ARGV[1])
  if redis.call('HGET', hashes, old['hash']) == ARGV[4] then redis.call('HDEL', hashes, old['hash']) end
  old_text = old['text']
end
redis.call('HSET', facts, ARGV[1], ARGV[2])
redis.call('HSET', hashes, ARGV[3], ARGV[1])
if ARGV[7] ~= '' then index_add(ARGV[1], ARGV[8], ARGV[9], ARGV[10], ARGV[11], ARGV[12], ARGV[13]) end
redis.call('INCR', base .. ':gen')
local entry = {'fact_id', ARGV[1], 'old_text', old_text}
for i = 14, #ARGV do entry[#entry + 1] = ARGV[i] end
local cap = table.remove(entry); redis.call('XADD', audit, 'MAXLEN', '~', cap, '*', unpack(entry))
return {'', old_text}
"""
)

# ARGV: id, now, audit pairs... -> 1 retired now, 0 it was retired already
RETIRE = (
    _BASE
    + """
local facts, state, hashes, audit = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local raw = redis.call('HGET', facts, ARGV[1])
if not raw then return redis.error_reply('BRAIN_MISSING') end
if redis.call('HEXISTS', state, ARGV[1]) == 1 then return 0 end
local fact = cjson.decode(raw)
redis.call('HSET', state, ARGV[1], ARGV[2] .. '|' .. ARGV[2] .. '|')
if redis.call('HGET', hashes, fact['hash']) == ARGV[1] then redis.call('HDEL', hashes, fact['hash']) end
changed()
local entry = {'fact_id', ARGV[1], 'old_text', fact['text']}
for i = 3, #ARGV do entry[#entry + 1] = ARGV[i] end
local cap = table.remove(entry); redis.call('XADD', audit, 'MAXLEN', '~', cap, '*', unpack(entry))
return 1
"""
)

# ARGV: id, audit pairs... -> 1 restored, 0 it is current, -1 another current fact says the same
RESTORE = (
    _BASE
    + """
local facts, state, hashes, audit = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local raw = redis.call('HGET', facts, ARGV[1])
if not raw then return redis.error_reply('BRAIN_MISSING') end
if redis.call('HEXISTS', state, ARGV[1]) == 0 then return 0 end
local fact = cjson.decode(raw)
if redis.call('HEXISTS', hashes, fact['hash']) == 1 then return -1 end
redis.call('HDEL', state, ARGV[1])
redis.call('HSET', hashes, fact['hash'], ARGV[1])
changed()
local entry = {'fact_id', ARGV[1], 'new_text', fact['text']}
for i = 2, #ARGV do entry[#entry + 1] = ARGV[i] end
local cap = table.remove(entry); redis.call('XADD', audit, 'MAXLEN', '~', cap, '*', unpack(entry))
return 1
"""
)

# KEYS: facts, state, hashes, audit, alias; ARGV: id, text hash, sources (JSON list, '' none), audit
# pairs... -> 1 merged, 0 the fact is retired (nothing written)
MERGE = (
    _BASE
    + """
local facts, state, audit, alias = KEYS[1], KEYS[2], KEYS[4], KEYS[5]
local raw = redis.call('HGET', facts, ARGV[1])
if not raw then return redis.error_reply('BRAIN_MISSING') end
if redis.call('HEXISTS', state, ARGV[1]) == 1 then return 0 end
redis.call('HSET', alias, ARGV[2], ARGV[1])
if ARGV[3] ~= '' then
  local prov = fact_base .. ':prov'
  local seen, merged = {}, cjson.decode(redis.call('HGET', prov, ARGV[1]) or '[]')
  for _, turn in ipairs(cjson.decode(raw)['source_turns'] or {}) do seen[turn] = true end
  for _, turn in ipairs(merged) do seen[turn] = true end
  local grew = false
  for _, turn in ipairs(cjson.decode(ARGV[3])) do
    if not seen[turn] then seen[turn] = true; merged[#merged + 1] = turn; grew = true end
  end
  if grew then redis.call('HSET', prov, ARGV[1], cjson.encode(merged)) end
end
changed()
local entry = {'fact_id', ARGV[1]}
for i = 4, #ARGV do entry[#entry + 1] = ARGV[i] end
local cap = table.remove(entry); redis.call('XADD', audit, 'MAXLEN', '~', cap, '*', unpack(entry))
return 1
"""
)

# KEYS: facts, state, hashes, audit, alias; ARGV: ids -> how many existed. An erasure: the facts go for good,
# with their hash entries, provenance, the aliases naming them and every audit event naming them.
ERASE = (
    _BASE
    + """
local facts, state, hashes, audit, alias = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local gone, named = 0, {}
for _, id in ipairs(ARGV) do
  local raw = redis.call('HGET', facts, id)
  if raw then
    gone = gone + 1
    named[id] = true
    local fact = cjson.decode(raw)
    if redis.call('HGET', hashes, fact['hash']) == id then redis.call('HDEL', hashes, fact['hash']) end
    redis.call('HDEL', facts, id)
    redis.call('HDEL', state, id)
    redis.call('HDEL', fact_base .. ':prov', id)
  end
end
if gone == 0 then return 0 end
changed()
local pairs_ = redis.call('HGETALL', alias)
for i = 1, #pairs_, 2 do
  if named[pairs_[i + 1]] then redis.call('HDEL', alias, pairs_[i]) end
end
for _, entry in ipairs(redis.call('XRANGE', audit, '-', '+')) do
  local fields = entry[2]
  for i = 1, #fields, 2 do
    if (fields[i] == 'fact_id' or fields[i] == 'old_fact_id') and named[fields[i + 1]] then
      redis.call('XDEL', audit, entry[1])
      break
    end
  end
end
return gone
"""
)
