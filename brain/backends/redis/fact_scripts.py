"""Lua scripts of fact memory. KEYS are always (facts, state, hashes, audit) of one user, one hash tag:
`facts` id -> the fact's JSON (never changed), `state` id -> "expired_at|invalid_at|superseded_by" (only for
retired facts), `hashes` content hash -> id of the current fact, `audit` a stream. Audit fields come last in
ARGV as name/value pairs."""

__all__ = ["ADD", "ERASE", "RESTORE", "RETIRE"]

# ARGV: id, JSON, hash, replaces ('' or id), now, audit pairs... -> {existing id or '', replaced text}
ADD = """
local facts, state, hashes, audit = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local existing = redis.call('HGET', hashes, ARGV[3])
if existing then return {existing, ''} end
local old_text = ''
if ARGV[4] ~= '' then
  local raw = redis.call('HGET', facts, ARGV[4])
  if not raw then return redis.error_reply('BRAIN_MISSING') end
  if redis.call('HEXISTS', state, ARGV[4]) == 1 then return redis.error_reply('BRAIN_RETIRED') end
  local old = cjson.decode(raw)
  redis.call('HSET', state, ARGV[4], ARGV[5] .. '|' .. ARGV[5] .. '|' .. ARGV[1])
  if redis.call('HGET', hashes, old['hash']) == ARGV[4] then redis.call('HDEL', hashes, old['hash']) end
  old_text = old['text']
end
redis.call('HSET', facts, ARGV[1], ARGV[2])
redis.call('HSET', hashes, ARGV[3], ARGV[1])
local entry = {'fact_id', ARGV[1], 'old_text', old_text}
for i = 6, #ARGV do entry[#entry + 1] = ARGV[i] end
redis.call('XADD', audit, '*', unpack(entry))
return {'', old_text}
"""

# ARGV: id, now, audit pairs... -> 1 retired now, 0 it was retired already
RETIRE = """
local facts, state, hashes, audit = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local raw = redis.call('HGET', facts, ARGV[1])
if not raw then return redis.error_reply('BRAIN_MISSING') end
if redis.call('HEXISTS', state, ARGV[1]) == 1 then return 0 end
local fact = cjson.decode(raw)
redis.call('HSET', state, ARGV[1], ARGV[2] .. '|' .. ARGV[2] .. '|')
if redis.call('HGET', hashes, fact['hash']) == ARGV[1] then redis.call('HDEL', hashes, fact['hash']) end
local entry = {'fact_id', ARGV[1], 'old_text', fact['text']}
for i = 3, #ARGV do entry[#entry + 1] = ARGV[i] end
redis.call('XADD', audit, '*', unpack(entry))
return 1
"""

# ARGV: id, audit pairs... -> 1 restored, 0 it is current, -1 another current fact says the same
RESTORE = """
local facts, state, hashes, audit = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local raw = redis.call('HGET', facts, ARGV[1])
if not raw then return redis.error_reply('BRAIN_MISSING') end
if redis.call('HEXISTS', state, ARGV[1]) == 0 then return 0 end
local fact = cjson.decode(raw)
if redis.call('HEXISTS', hashes, fact['hash']) == 1 then return -1 end
redis.call('HDEL', state, ARGV[1])
redis.call('HSET', hashes, fact['hash'], ARGV[1])
local entry = {'fact_id', ARGV[1], 'new_text', fact['text']}
for i = 2, #ARGV do entry[#entry + 1] = ARGV[i] end
redis.call('XADD', audit, '*', unpack(entry))
return 1
"""

# KEYS: facts, state, hashes, audit, alias; ARGV: ids -> how many existed. An erasure: the facts go for good,
# with their hash entries, the aliases naming them and every audit event naming them.
ERASE = """
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
  end
end
if gone == 0 then return 0 end
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
