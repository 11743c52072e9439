"""Lua scripts of the Redis memory store. KEYS are always (meta, turns, ids, knowledge, hidden, usage,
pending) of one conversation, hash-tagged into one Cluster slot. Errors the store maps: BRAIN_CONFLICT,
BRAIN_CORRUPT and BRAIN_SCHEMA.

The ids hash: a message id of 32 lowercase hex digits is kept as its 16 bytes and a 4-byte big-endian
sequence number, appended to the value of the field named by its first hex digit (16 buckets: a small chat's
hash stays a listpack, a large one's entries cost ~20 bytes each); any other id (and any id an older version
stored) as field 't:<id>' -> sequence number; knowledge ids as 'k:<id>' -> 0. The
pending text of a turn in progress (`last_talk`) is a string key of its own, deleted when the turn is done
(older versions kept it in the meta hash as 'last_talk': read, and removed when next set or cleared)."""

from brain.backends.redis.packed_ids import LUA as PACKED_IDS

__all__ = ["COMMIT_SUMMARY", "DROP_TEXT", "HIDE", "LOAD", "SET_TITLE", "WRITE"]

# Creates the meta hash of a new conversation; checks the schema version of an existing one.
# ARGV[2]: schema version, ARGV[3]: user_id, ARGV[4]: chat_id, ARGV[7]: now (both scripts place them so).
INIT = """
local v = redis.call('HGET', KEYS[1], 'v')
if v and not tonumber(v) then return redis.error_reply('BRAIN_CORRUPT schema version is not a number') end
if v and tonumber(v) > tonumber(ARGV[2]) then return redis.error_reply('BRAIN_SCHEMA ' .. v) end
if not v then
  redis.call('HSET', KEYS[1], 'v', ARGV[2], 'user_id', ARGV[3], 'chat_id', ARGV[4], 'created_at', ARGV[7],
    'summary', '', 'summary_upto', 0, 'window_tokens', 0, 'version', 0, 'title', '')
end
"""

# ARGV: ttl, schema version, user_id, chat_id, pending ('set' or ''), last_talk, now, window_turns,
#       knowledge_items -> {meta fields, start index, window records, knowledge, length, hidden seqs,
#       the user's erasure count (0 on Cluster), whether the conversation existed before, pending text
#       (false: none)}
# With 'set', last_talk is saved first (creating the conversation): one round trip for a turn's start.
# An 8th key (standalone servers only) is the user's erasure record: its count is the turn's ticket, read
# in the same atomic call that may create the conversation. A 9th (after it) is the user's cold-archive
# marker (`brain.keys.archived_key`): while it is there, BRAIN_ARCHIVED before anything is written.
LOAD = (
    """
if #KEYS > 8 then
  if redis.call('HGET', KEYS[9], 'state') then return redis.error_reply('BRAIN_ARCHIVED') end
  table.remove(KEYS, 9)
end
local epoch = 0
if #KEYS > 7 then epoch = tonumber(redis.call('HGET', KEYS[8], 'n') or '0'); table.remove(KEYS, 8) end
local existed = redis.call('EXISTS', KEYS[1])
if ARGV[5] == 'set' then
"""
    + INIT
    + """
  redis.call('SET', KEYS[7], ARGV[6])
  redis.call('HDEL', KEYS[1], 'last_talk')
  redis.call('HSET', KEYS[1], 'updated_at', ARGV[7])
  redis.call('HINCRBY', KEYS[1], 'version', 1)
end
local meta, turns, knowledge = KEYS[1], KEYS[2], KEYS[4]
local m = redis.call('HGETALL', meta)
if #m == 0 then return {{}, 0, {}, {}, 0, {}, epoch, existed, false} end
local upto = tonumber(redis.call('HGET', meta, 'summary_upto') or '0')
if not upto then return redis.error_reply('BRAIN_CORRUPT summary_upto is not a number') end
local len = redis.call('LLEN', turns)
local start = math.max(upto, len - tonumber(ARGV[8]))
local w = redis.call('LRANGE', turns, start, -1)
local k = {}
if tonumber(ARGV[9]) > 0 then k = redis.call('LRANGE', knowledge, -tonumber(ARGV[9]), -1) end
local ttl = tonumber(ARGV[1])
if ttl > 0 then for _, key in ipairs(KEYS) do redis.call('EXPIRE', key, ttl) end end
return {m, start, w, k, len, redis.call('SMEMBERS', KEYS[5]), epoch, existed, redis.call('GET', KEYS[7])}
"""
)

# ARGV: ttl, schema version, user_id, chat_id, last_talk op (set/clear/""), last_talk, now,
#       n, n x (id, packed id (16 bytes, '' for an id that is not 32 hex digits), record, tokens),
#       k, k x (id, record), usage calls, prompt tokens, completion tokens
#       -> {version, added, window_tokens, length, seqs...}
WRITE = (
    INIT
    + PACKED_IDS
    + """
local meta, turns, ids, knowledge = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local function seq_of(id, packed)
  if packed ~= '' then
    local bucket = redis.call('HGET', ids, string.sub(id, 1, 1))
    local p = bucket and bucket_at(bucket, packed)
    if p then
      local a, b, c, d = string.byte(bucket, p + 16, p + 19)
      return ((a * 256 + b) * 256 + c) * 256 + d
    end
  end
  return redis.call('HGET', ids, 't:' .. id)
end
local function remember(id, packed, seq)
  if packed == '' then redis.call('HSET', ids, 't:' .. id, seq); return end
  local field = string.sub(id, 1, 1)
  local s = string.char(math.floor(seq / 16777216) % 256, math.floor(seq / 65536) % 256,
    math.floor(seq / 256) % 256, seq % 256)
  redis.call('HSET', ids, field, (redis.call('HGET', ids, field) or '') .. packed .. s)
end
local i = 8
local n = tonumber(ARGV[i]); i = i + 1
local out = {0, 0, 0, 0}
local added, tokens = 0, 0
for j = 1, n do
  local id, packed, rec, tok = ARGV[i], ARGV[i + 1], ARGV[i + 2], tonumber(ARGV[i + 3]); i = i + 4
  local seq = seq_of(id, packed)
  if not seq then
    seq = redis.call('RPUSH', turns, rec)
    remember(id, packed, seq)
    added, tokens = added + 1, tokens + tok
  end
  out[#out + 1] = tonumber(seq)
end
local nk = tonumber(ARGV[i]); i = i + 1
local usage = i + 2 * nk  -- after the knowledge: calls, prompt tokens, completion tokens
for j = 1, nk do
  if redis.call('HSETNX', ids, 'k:' .. ARGV[i], 0) == 1 then
    redis.call('RPUSH', knowledge, ARGV[i + 1]); added = added + 1
  end
  i = i + 2
end
if tonumber(ARGV[usage]) > 0 then
  redis.call('HINCRBY', meta, 'usage_calls', ARGV[usage])
  redis.call('HINCRBY', meta, 'usage_prompt_tokens', ARGV[usage + 1])
  redis.call('HINCRBY', meta, 'usage_completion_tokens', ARGV[usage + 2])
end
-- then the usage per model (model, calls, prompt, completion), into the chat's usage rows (KEYS[6])
i = usage + 3
local models = tonumber(ARGV[i] or '0')
for j = 1, models do
  local model = ARGV[i + 1]
  redis.call('HINCRBY', KEYS[6], 'calls|' .. model, ARGV[i + 2])
  redis.call('HINCRBY', KEYS[6], 'prompt|' .. model, ARGV[i + 3])
  redis.call('HINCRBY', KEYS[6], 'completion|' .. model, ARGV[i + 4])
  i = i + 4
end
if models > 0 then redis.call('HSETNX', KEYS[6], 'id', ARGV[4]) end
if ARGV[5] == 'set' then redis.call('SET', KEYS[7], ARGV[6])
elseif ARGV[5] == 'clear' then redis.call('DEL', KEYS[7]) end
if ARGV[5] ~= '' then redis.call('HDEL', meta, 'last_talk') end
out[3] = redis.call('HINCRBY', meta, 'window_tokens', tokens)
out[4] = redis.call('LLEN', turns)
redis.call('HSET', meta, 'updated_at', ARGV[7])
out[1] = redis.call('HINCRBY', meta, 'version', 1)
out[2] = added
local ttl = tonumber(ARGV[1])
if ttl > 0 then for _, key in ipairs(KEYS) do redis.call('EXPIRE', key, ttl) end end
return out
"""
)

# ARGV: summary, upto, expected_upto, tokens summarized, now, ttl -> version
COMMIT_SUMMARY = """
local meta, turns = KEYS[1], KEYS[2]
if redis.call('EXISTS', meta) == 0 then return redis.error_reply('BRAIN_CONFLICT conversation is gone') end
local upto = tonumber(redis.call('HGET', meta, 'summary_upto') or '0')
if not upto then return redis.error_reply('BRAIN_CORRUPT summary_upto is not a number') end
if upto ~= tonumber(ARGV[3]) then return redis.error_reply('BRAIN_CONFLICT summary moved to ' .. upto) end
local len = redis.call('LLEN', turns)
if tonumber(ARGV[2]) > len or tonumber(ARGV[2]) < upto then
  return redis.error_reply('BRAIN_CONFLICT summary would reach turn ' .. ARGV[2] .. ' of ' .. len)
end
redis.call('HSET', meta, 'summary', ARGV[1], 'summary_upto', ARGV[2], 'updated_at', ARGV[5])
if redis.call('HINCRBY', meta, 'window_tokens', 0 - tonumber(ARGV[4])) < 0 then
  redis.call('HSET', meta, 'window_tokens', 0)
end
local version = redis.call('HINCRBY', meta, 'version', 1)
local ttl = tonumber(ARGV[6])
if ttl > 0 then for _, key in ipairs(KEYS) do redis.call('EXPIRE', key, ttl) end end
return version
"""

# ARGV: title, ttl -> version
SET_TITLE = """
if redis.call('EXISTS', KEYS[1]) == 0 then
  return redis.error_reply('BRAIN_CONFLICT conversation does not exist')
end
redis.call('HSET', KEYS[1], 'title', ARGV[1])
local version = redis.call('HINCRBY', KEYS[1], 'version', 1)
local ttl = tonumber(ARGV[2])
if ttl > 0 then for _, key in ipairs(KEYS) do redis.call('EXPIRE', key, ttl) end end
return version
"""

# ARGV: ttl, seqs... -> version
HIDE = """
if redis.call('EXISTS', KEYS[1]) == 0 then
  return redis.error_reply('BRAIN_CONFLICT conversation does not exist')
end
local len = redis.call('LLEN', KEYS[2])
local upto = tonumber(redis.call('HGET', KEYS[1], 'summary_upto') or '0') or 0
for i = 2, #ARGV do
  local seq = tonumber(ARGV[i])
  if not seq or seq < 1 or seq > len then return redis.error_reply('BRAIN_CONFLICT no turn ' .. ARGV[i]) end
end
local tokens = 0
for i = 2, #ARGV do
  local seq = tonumber(ARGV[i])
  if redis.call('SADD', KEYS[5], seq) == 1 and seq > upto then
    local ok, record = pcall(cjson.decode, redis.call('LINDEX', KEYS[2], seq - 1))
    if ok and type(record) == 'table' and tonumber(record['tok']) then
      tokens = tokens + tonumber(record['tok'])
    end
  end
end
if redis.call('HINCRBY', KEYS[1], 'window_tokens', 0 - tokens) < 0 then
  redis.call('HSET', KEYS[1], 'window_tokens', 0)
end
local version = redis.call('HINCRBY', KEYS[1], 'version', 1)
local ttl = tonumber(ARGV[1])
if ttl > 0 then for _, key in ipairs(KEYS) do redis.call('EXPIRE', key, ttl) end end
return version
"""

# ARGV: upto, ttl -> turns whose text was dropped now
# Retention: the records of turns (dropped_upto, upto] are rewritten in place (LSET) as stubs keeping the
# record's version, tokens, and the message's id, role, sender, cause and time, flagged "dropped"; the meta's
# dropped_upto moves to upto. Refused past summary_upto: no turn loses its text before the summary has it.
DROP_TEXT = """
local meta, turns = KEYS[1], KEYS[2]
if redis.call('EXISTS', meta) == 0 then return redis.error_reply('BRAIN_CONFLICT conversation is gone') end
local upto = tonumber(ARGV[1])
local summarized = tonumber(redis.call('HGET', meta, 'summary_upto') or '0')
local done = tonumber(redis.call('HGET', meta, 'dropped_upto') or '0')
if not summarized or not done then return redis.error_reply('BRAIN_CORRUPT summary_upto or dropped_upto') end
if upto > summarized then
  return redis.error_reply('BRAIN_CONFLICT the summary reaches turn ' .. summarized .. ', not ' .. upto)
end
if upto <= done then return 0 end
local records = redis.call('LRANGE', turns, done, upto - 1)
for i, raw in ipairs(records) do
  local ok, record = pcall(cjson.decode, raw)
  if not ok or type(record) ~= 'table' or type(record['msg']) ~= 'table' then
    return redis.error_reply('BRAIN_CORRUPT turn ' .. (done + i) .. ' is not a turn record')
  end
  if not record['dropped'] then
    local m = record['msg']
    local stub = {id = m['id'], role = m['role'], sent_from = m['sent_from'], cause_by = m['cause_by'],
      created_at = m['created_at'], content = ''}
    redis.call('LSET', turns, done + i - 1,
      cjson.encode({v = record['v'], tok = record['tok'], dropped = true, msg = stub}))
  end
end
redis.call('HSET', meta, 'dropped_upto', upto)  -- not updated_at: retention is not the user's activity
redis.call('HINCRBY', meta, 'version', 1)
local ttl = tonumber(ARGV[2])
if ttl > 0 then for _, key in ipairs(KEYS) do redis.call('EXPIRE', key, ttl) end end
return #records
"""
