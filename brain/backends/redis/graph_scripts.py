"""Lua scripts of graph memory. KEYS are (`<graph base>:ent`, the facts' audit stream); every other key is
built from the first, inside the same hash tag: `ent` id -> entity JSON, `names` name key -> id, `rel` id ->
relation JSON (never changed), `rstate` id -> "expired_at|invalid_at" (retired relations only), `cur`
"source|relation|target" -> id of the current relation, `adj:<id>` relation ids touching an entity,
`men:<id>` ids of the facts and turns naming it, `dm` document id -> the entities it names."""

__all__ = ["ENTITIES", "MENTION", "RELATE", "RESTORE", "RETIRE"]

COMMON = """
local base = string.sub(KEYS[1], 1, #KEYS[1] - 4)  -- KEYS[1] is '<base>:ent'
local function key(part) return base .. ':' .. part end
-- a relation's "source|relation|target", the key of `cur`
local function statement(raw)
  local r = cjson.decode(raw)
  return r['source'] .. '|' .. r['relation'] .. '|' .. r['target']
end
"""

# ARGV: groups of 5 (name key, new id, JSON of a new entity, JSON list of alias keys, JSON list of aliases)
# -> the id of each entity: the one a name or alias key already names (aliases merged in), or the new one.
ENTITIES = (
    COMMON
    + """
local ids = {}
for i = 1, #ARGV, 5 do
  local keys = cjson.decode(ARGV[i + 3])
  local id = redis.call('HGET', key('names'), ARGV[i])
  for _, k in ipairs(keys) do
    if id then break end
    id = redis.call('HGET', key('names'), k)
  end
  if id then
    local entity = cjson.decode(redis.call('HGET', KEYS[1], id))
    local known = {}
    for _, a in ipairs(entity['aliases']) do known[a] = true end
    known[entity['name']] = true
    for _, a in ipairs(cjson.decode(ARGV[i + 4])) do
      if not known[a] then table.insert(entity['aliases'], a); known[a] = true end
    end
    redis.call('HSET', KEYS[1], id, cjson.encode(entity))
  else
    id = ARGV[i + 1]
    redis.call('HSETNX', KEYS[1], id, ARGV[i + 2])  -- created meanwhile under the same id: kept
  end
  redis.call('HSETNX', key('names'), ARGV[i], id)
  for _, k in ipairs(keys) do redis.call('HSETNX', key('names'), k, id) end
  ids[#ids + 1] = id
end
return ids
"""
)

# ARGV: pairs (entity id, document id) -> how many mentions were new
MENTION = (
    COMMON
    + """
local new = 0
for i = 1, #ARGV, 2 do
  if redis.call('SADD', key('men:' .. ARGV[i]), ARGV[i + 1]) == 1 then
    new = new + 1
    local had = redis.call('HGET', key('dm'), ARGV[i + 1])
    redis.call('HSET', key('dm'), ARGV[i + 1], had and (had .. ' ' .. ARGV[i]) or ARGV[i])
  end
end
return new
"""
)

# ARGV: id, JSON, "source|relation|target", source id, target id, audit pairs... -> '' added, or the id of
# the current relation that says the same (nothing changes)
RELATE = (
    COMMON
    + """
local existing = redis.call('HGET', key('cur'), ARGV[3])
if existing then return existing end
redis.call('HSET', key('rel'), ARGV[1], ARGV[2])
redis.call('HSET', key('cur'), ARGV[3], ARGV[1])
redis.call('SADD', key('adj:' .. ARGV[4]), ARGV[1])
redis.call('SADD', key('adj:' .. ARGV[5]), ARGV[1])
local entry = {'fact_id', ARGV[1], 'subject', 'relation'}
for i = 6, #ARGV do entry[#entry + 1] = ARGV[i] end
redis.call('XADD', KEYS[2], '*', unpack(entry))
return ''
"""
)

# ARGV: id, now, invalid_at ('' = now), audit pairs... -> 1 retired now, 0 already, -1 no such relation
RETIRE = (
    COMMON
    + """
local raw = redis.call('HGET', key('rel'), ARGV[1])
if not raw then return -1 end
if redis.call('HEXISTS', key('rstate'), ARGV[1]) == 1 then return 0 end
local invalid = ARGV[3] ~= '' and ARGV[3] or ARGV[2]
redis.call('HSET', key('rstate'), ARGV[1], ARGV[2] .. '|' .. invalid)
local k = statement(raw)
if redis.call('HGET', key('cur'), k) == ARGV[1] then redis.call('HDEL', key('cur'), k) end
local entry = {'fact_id', ARGV[1], 'subject', 'relation'}
for i = 4, #ARGV do entry[#entry + 1] = ARGV[i] end
redis.call('XADD', KEYS[2], '*', unpack(entry))
return 1
"""
)

# ARGV: id, audit pairs... -> 1 restored, 0 it is current, -1 no such relation, -2 a current one says the same
RESTORE = (
    COMMON
    + """
local raw = redis.call('HGET', key('rel'), ARGV[1])
if not raw then return -1 end
if redis.call('HEXISTS', key('rstate'), ARGV[1]) == 0 then return 0 end
local k = statement(raw)
if redis.call('HEXISTS', key('cur'), k) == 1 then return -2 end
redis.call('HDEL', key('rstate'), ARGV[1])
redis.call('HSET', key('cur'), k, ARGV[1])
local entry = {'fact_id', ARGV[1], 'subject', 'relation'}
for i = 2, #ARGV do entry[#entry + 1] = ARGV[i] end
redis.call('XADD', KEYS[2], '*', unpack(entry))
return 1
"""
)
