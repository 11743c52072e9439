"""Lua scripts of fact memory. Fact KEYS are (facts, state, hashes, audit) of one user, one hash tag:
`facts` id -> the fact's JSON (never changed), `state` id -> "expired_at|invalid_at|superseded_by" (only for
retired facts), `hashes` content hash -> id of the current fact, `audit` a stream; ids and hashes packed
(`brain.backends.redis.fact_packing`: `facts` fields, both sides of `hashes`, events' `fact_id`). Beside
them, derived in the scripts (same hash tag): `gen`, a counter every change of current facts increments,
`prov` id -> the sources merged into a fact later, and `src` reference -> the turn ids of a source (a
batch's turns, stored once: facts, their events and their merges name it by reference). Audit fields come
last in ARGV as name/value pairs; a pair '@src', reference .. ids stores a source
(`brain.backends.redis.fact_records`)."""

from brain.backends.redis.fact_packing import LUA as _HASHES
from brain.backends.redis.index_scripts import COMMON, INDEX_ADD
from brain.backends.redis.packed_ids import LUA as PACKED_IDS

__all__ = ["ADD", "ERASE", "MERGE", "RESTORE", "RETIRE"]

# Audit events (after the scripts' own fields, the audit pairs from ARGV[first]). A text that is the subject
# fact's is kept as a mark ('new_is'/'old_is' = 'f'), one that is the replaced fact's (the event's
# `old_fact_id`, `old` = {id, text}) as 'o': an erasure of either fact takes the event, so the reader always
# finds the text. Sources ('@src' pairs) are checked first (`sources(audit, first, false)`: false when a
# reference names other ids) and stored with the event.
_AUDIT = """
local function sources(audit, first, write)
  local fact_src = string.sub(audit, 1, #audit - 5) .. 'src'  -- '<base>:audit' -> '<base>:src'
  for i = first, #ARGV - 1, 2 do
    if ARGV[i] == '@src' then
      local ref, ids = string.sub(ARGV[i + 1], 1, 12), string.sub(ARGV[i + 1], 13)  -- 12 characters
      local cur = redis.call('HGET', fact_src, ref)
      if cur and cur ~= ids then return false end
      if write and not cur then redis.call('HSET', fact_src, ref, ids) end
    end
  end
  return true
end
local function audit_event(audit, first, fields, own, old)
  sources(audit, first, true)
  local old_id, entry = '', {}
  for i = first, #ARGV - 1, 2 do if ARGV[i] == 'old_fact_id' then old_id = ARGV[i + 1] end end
  local function put(name, value)
    if value == '' or name == '@src' then return end
    if name == 'new_text' or name == 'old_text' then
      local mark = string.sub(name, 1, 4) .. 'is'
      if value == own then entry[#entry + 1] = mark; entry[#entry + 1] = 'f'; return end
      if old and old_id == old.id and value == old.text then
        entry[#entry + 1] = mark; entry[#entry + 1] = 'o'; return
      end
    end
    if name == 'fact_id' then value = pack_id(value) end
    entry[#entry + 1] = name; entry[#entry + 1] = value
  end
  for i = 1, #fields, 2 do put(fields[i], fields[i + 1]) end
  for i = first, #ARGV - 1, 2 do put(ARGV[i], ARGV[i + 1]) end
  redis.call('XADD', audit, 'MAXLEN', '~', ARGV[#ARGV], '*', unpack(entry))  -- the cap is the last ARGV
end
"""

# A fact record's text, hash and sources' reference (one-letter names; an older record's full names).
_RECORD = """
local function record(raw)
  local fact = cjson.decode(raw)
  return {text = fact['t'] or fact['text'], hash = fact['h'] or fact['hash'], src = fact['s'] or fact['src']}
end
"""

_BASE = (
    PACKED_IDS  # ADD has it in the index's COMMON
    + """
local fact_base = string.sub(KEYS[1], 1, #KEYS[1] - 6)  -- KEYS[1] is '<base>:facts'
local function changed() redis.call('INCR', fact_base .. ':gen') end
"""
)

# KEYS: the fact index's docs, facts, state, hashes, audit. ARGV: id, JSON, hash, replaces ('' or id), now,
# invalid_at of the replaced fact, analysis ('': no search entry), the entry's record, ts, length,
# postings, tags, vector, audit pairs... -> {existing id or '', replaced text}. The fact, the retirement
# of the one it replaces, its search entry and its audit event are one write.
ADD = (
    COMMON
    + INDEX_ADD
    + _HASHES
    + _AUDIT
    + _RECORD
    + """
local facts, state, hashes, audit = KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local existing = hash_get(hashes, ARGV[3])
if existing then return {existing, ''} end
if ARGV[7] ~= '' and not current(ARGV[7], true) then return redis.error_reply('BRAIN_STALE') end
if not sources(audit, 14, false) then return redis.error_reply('BRAIN_CORRUPT source reference') end
local old_text = ''
if ARGV[4] ~= '' then
  local raw = fact_get(facts, ARGV[4])
  if not raw then return redis.error_reply('BRAIN_MISSING') end
  if redis.call('HEXISTS', state, ARGV[4]) == 1 then return redis.error_reply('BRAIN_RETIRED') end
  local old = record(raw)
  redis.call('HSET', state, ARGV[4], ARGV[5] .. '|' .. ARGV[6] .. '|' .. ARGV[1])
  hash_drop(hashes, old.hash, ARGV[4])
  old_text = old.text
end
redis.call('HSET', facts, pack_id(ARGV[1]), ARGV[2])
hash_set(hashes, ARGV[3], ARGV[1])
if ARGV[7] ~= '' then index_add(ARGV[1], ARGV[8], ARGV[9], ARGV[10], ARGV[11], ARGV[12], ARGV[13]) end
redis.call('INCR', base .. ':gen')
local own = record(ARGV[2]).text
audit_event(audit, 14, {'fact_id', ARGV[1], 'old_text', old_text}, own, {id = ARGV[4], text = old_text})
return {'', old_text}
"""
)

# ARGV: id, now, audit pairs... -> 1 retired now, 0 it was retired already
RETIRE = (
    _BASE
    + _HASHES
    + _AUDIT
    + _RECORD
    + """
local facts, state, hashes, audit = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local raw = fact_get(facts, ARGV[1])
if not raw then return redis.error_reply('BRAIN_MISSING') end
if redis.call('HEXISTS', state, ARGV[1]) == 1 then return 0 end
if not sources(audit, 3, false) then return redis.error_reply('BRAIN_CORRUPT source reference') end
local fact = record(raw)
redis.call('HSET', state, ARGV[1], ARGV[2] .. '|' .. ARGV[2] .. '|')
hash_drop(hashes, fact.hash, ARGV[1])
changed()
audit_event(audit, 3, {'fact_id', ARGV[1], 'old_text', fact.text}, fact.text)
return 1
"""
)

# ARGV: id, audit pairs... -> 1 restored, 0 it is current, -1 another current fact says the same
RESTORE = (
    _BASE
    + _HASHES
    + _AUDIT
    + _RECORD
    + """
local facts, state, hashes, audit = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local raw = fact_get(facts, ARGV[1])
if not raw then return redis.error_reply('BRAIN_MISSING') end
if redis.call('HEXISTS', state, ARGV[1]) == 0 then return 0 end
local fact = record(raw)
if hash_get(hashes, fact.hash) then return -1 end
if not sources(audit, 2, false) then return redis.error_reply('BRAIN_CORRUPT source reference') end
redis.call('HDEL', state, ARGV[1])
hash_set(hashes, fact.hash, ARGV[1])
changed()
audit_event(audit, 2, {'fact_id', ARGV[1], 'new_text', fact.text}, fact.text)
return 1
"""
)

# KEYS: facts, state, hashes, audit, alias; ARGV: id, text hash, the sources' reference ('' none), audit
# pairs... -> 1 merged, 0 the fact is retired (nothing written). `prov` id -> {"r": [references], "t": [turn
# ids an older version merged]} (an older version's JSON list of turn ids is read as "t"); a reference the
# fact or its merges hold already is not added again.
MERGE = (
    _BASE
    + _HASHES
    + _AUDIT
    + _RECORD
    + """
local facts, state, audit, alias = KEYS[1], KEYS[2], KEYS[4], KEYS[5]
local raw = fact_get(facts, ARGV[1])
if not raw then return redis.error_reply('BRAIN_MISSING') end
if redis.call('HEXISTS', state, ARGV[1]) == 1 then return 0 end
if not sources(audit, 4, false) then return redis.error_reply('BRAIN_CORRUPT source reference') end
redis.call('HSET', alias, ARGV[2], ARGV[1])
local fact = record(raw)
if ARGV[3] ~= '' and fact.src ~= ARGV[3] then
  local prov = fact_base .. ':prov'
  local cur = redis.call('HGET', prov, ARGV[1])
  local merged = {r = {}}
  if cur and string.sub(cur, 1, 1) == '[' then merged = {t = cjson.decode(cur), r = {}}
  elseif cur then merged = cjson.decode(cur); merged['r'] = merged['r'] or {} end
  local known = false
  for _, ref in ipairs(merged['r']) do if ref == ARGV[3] then known = true end end
  if not known then
    merged['r'][#merged['r'] + 1] = ARGV[3]
    redis.call('HSET', prov, ARGV[1], cjson.encode(merged))
  end
end
changed()
audit_event(audit, 4, {'fact_id', ARGV[1]}, fact.text)
return 1
"""
)

# KEYS: facts, state, hashes, audit, alias; ARGV: ids -> how many existed. An erasure: the facts go for good,
# with their hash entries, provenance, the aliases naming them, every audit event naming them and the
# sources (`src`) nothing left names.
ERASE = (
    _BASE
    + _HASHES
    + _RECORD
    + """
local facts, state, hashes, audit, alias = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local gone, named, refs = 0, {}, {}
local src, prov = fact_base .. ':src', fact_base .. ':prov'
local function refs_of(text, into)
  for ref in string.gmatch(text or '', '"sr?c?":"([^"]+)"') do into[ref] = true end
  local list = string.match(text or '', '"r":(%b[])')
  for ref in string.gmatch(list or '', '"([^"]+)"') do into[ref] = true end
end
for _, id in ipairs(ARGV) do
  local raw = fact_get(facts, id)
  if raw then
    gone = gone + 1
    named[id] = true
    refs_of(raw, refs)
    refs_of(redis.call('HGET', prov, id), refs)
    local fact = record(raw)
    hash_drop(hashes, fact.hash, id)
    redis.call('HDEL', facts, pack_id(id), id)
    redis.call('HDEL', state, id)
    redis.call('HDEL', prov, id)
  end
end
if gone == 0 then return 0 end
changed()
local pairs_ = redis.call('HGETALL', alias)
for i = 1, #pairs_, 2 do
  if named[pairs_[i + 1]] then redis.call('HDEL', alias, pairs_[i]) end
end
local live = {}
for _, entry in ipairs(redis.call('XRANGE', audit, '-', '+')) do
  local fields, erased, ref = entry[2], false, nil
  for i = 1, #fields, 2 do
    if (fields[i] == 'fact_id' or fields[i] == 'old_fact_id') and named[unpack_id(fields[i + 1])] then
      erased = true
    end
    if fields[i] == 'src' then ref = fields[i + 1] end
  end
  if erased then
    redis.call('XDEL', audit, entry[1])
    if ref then refs[ref] = true end
  elseif ref then
    live[ref] = true
  end
end
if next(refs) then
  for _, raw in ipairs(redis.call('HVALS', facts)) do refs_of(raw, live) end
  for _, raw in ipairs(redis.call('HVALS', prov)) do refs_of(raw, live) end
  for ref in pairs(refs) do if not live[ref] then redis.call('HDEL', src, ref) end end
end
return gone
"""
)
