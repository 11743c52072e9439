"""Lua scripts of the fact queue (`brain.backends.redis.queue`): its keys share one slot (`brain.keys`:
the stream, dead letters, tries, overflow and counters).

The bounds: the stream holds at most `max` entries. A push that finds it full, or finds chats already
waiting in the overflow, is coalesced there instead: one record per chat (`queue_chat_field` -> "<upto>
<user b64> <chat b64>", the highest `upto` kept), which is enough since the worker reads a chat's turns up to
its entry's `upto`; counted as `deferred`. The overflow holds at most `max` chats too: a new chat past that
is refused and counted as `dropped` (its turns wait for its next queued turn). `done` says when there is
room again and chats in the overflow, and the queue moves them into the stream (`REFILL`). Dead letters
past their cap go oldest first (by their entry id: whose turns waited longest), counted as
`dead_trimmed`. `then_push` adds the push to a chat's write script (standalone servers: one round trip)."""

__all__ = ["DONE", "PARK", "PUSH", "REFILL", "REQUEUE", "TRIED", "then_push"]

# (stream, overflow, max, user, chat, upto, field, record) -> 1 queued, 2 coalesced in the overflow, 0 refused
_ENQUEUE = """
local function enqueue(stream, overflow, max, user, chat, upto, field, record)
  local waiting = redis.call('HLEN', overflow)
  if waiting == 0 and redis.call('XLEN', stream) < max then
    redis.call('XADD', stream, '*', 'user', user, 'chat', chat, 'upto', upto)
    return 1
  end
  local held = redis.call('HGET', overflow, field)
  if held then
    if tonumber(string.match(held, '^(%S+)')) < tonumber(upto) then
      redis.call('HSET', overflow, field, record)
    end
    return 2
  end
  if waiting < max then
    redis.call('HSET', overflow, field, record)
    return 2
  end
  return 0
end
"""

# (stream, overflow, counts, max, user, chat, upto, field, record) -> as enqueue, counted
_PUSH = (
    _ENQUEUE
    + """
local function push(stream, overflow, counts, max, user, chat, upto, field, record)
  local done = enqueue(stream, overflow, max, user, chat, upto, field, record)
  if done == 2 then redis.call('HINCRBY', counts, 'deferred', 1) end
  if done == 0 then redis.call('HINCRBY', counts, 'dropped', 1) end
  return done
end
"""
)

# KEYS: stream, overflow, counts; ARGV: max, user, chat, upto, field, record -> as enqueue
PUSH = (
    _PUSH
    + """
return push(KEYS[1], KEYS[2], KEYS[3], tonumber(ARGV[1]), ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6])
"""
)


def then_push(body: str) -> str:
    """A script running `body` (a chat's write, whose reply's 4th item is the chat's turn count), then
    pushing the chat up to that count as `PUSH` does. Its last 3 KEYS (stream, overflow, counts) and last 5
    ARGV (max, user, chat, field, the overflow record after its count) are the push's, taken off before
    `body` runs. The reply: `body`'s, headed by 1 when the push ran, 0 when it failed (a script error
    caught: the write stands, the caller pushes again apart); a refusal of `body` is returned as it is."""
    return (
        _PUSH
        + """
local queue, entry = {}, {}
for i = 3, 1, -1 do queue[i] = table.remove(KEYS) end
for i = 5, 1, -1 do entry[i] = table.remove(ARGV) end
local function write()
"""
        + body
        + """
end
local out = write()
if out['err'] then return out end
local upto = tostring(out[4])
local ok = pcall(push, queue[1], queue[2], queue[3], tonumber(entry[1]), entry[2], entry[3], upto, entry[4],
  upto .. entry[5])
table.insert(out, 1, ok and 1 or 0)
return out
"""
    )


# KEYS: stream, overflow; ARGV: group, max, entry ids... -> {entries deleted, 1 when chats wait with room}
DONE = """
local gone = 0
for i = 3, #ARGV do
  redis.call('XACK', KEYS[1], ARGV[1], ARGV[i])
  gone = gone + redis.call('XDEL', KEYS[1], ARGV[i])
end
local room = redis.call('XLEN', KEYS[1]) < tonumber(ARGV[2])
return {gone, (room and redis.call('HLEN', KEYS[2]) > 0) and 1 or 0}
"""

# KEYS: stream, overflow; ARGV: max, then per chat: field, user, chat -> how many moved into the stream
REFILL = """
local moved = 0
for i = 2, #ARGV, 3 do
  if redis.call('XLEN', KEYS[1]) >= tonumber(ARGV[1]) then break end
  local held = redis.call('HGET', KEYS[2], ARGV[i])
  if held then
    local upto = string.match(held, '^(%S+)')
    redis.call('XADD', KEYS[1], '*', 'user', ARGV[i + 1], 'chat', ARGV[i + 2], 'upto', upto)
    redis.call('HDEL', KEYS[2], ARGV[i])
    moved = moved + 1
  end
end
return moved
"""

# KEYS: dead letters, stream, tries, counts; ARGV: group, letter id, record, tries field, cap, entry ids...
PARK = """
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
for i = 6, #ARGV do
  redis.call('XACK', KEYS[2], ARGV[1], ARGV[i])
  redis.call('XDEL', KEYS[2], ARGV[i])
end
redis.call('HDEL', KEYS[3], ARGV[4])
local over = redis.call('HLEN', KEYS[1]) - tonumber(ARGV[5])
if over > 0 then
  local ids = {}
  for _, id in ipairs(redis.call('HKEYS', KEYS[1])) do
    if id ~= ARGV[2] then
      local ms, seq = string.match(id, '^(%d+)-(%d+)$')
      ids[#ids + 1] = {tonumber(ms) or 0, tonumber(seq) or 0, id}
    end
  end
  table.sort(ids, function(a, b) return a[1] < b[1] or (a[1] == b[1] and a[2] < b[2]) end)
  over = math.min(over, #ids)
  for i = 1, over do redis.call('HDEL', KEYS[1], ids[i][3]) end
  redis.call('HINCRBY', KEYS[4], 'dead_trimmed', over)
end
return 1
"""

# KEYS: tries; ARGV: field
TRIED = "return redis.call('HINCRBY', KEYS[1], ARGV[1], 1)"

# KEYS: dead letters, stream, tries, overflow; ARGV: max, then per letter: its id, user, chat, upto, field,
# record -> how many were queued (a letter that finds stream and overflow full stays a letter)
REQUEUE = (
    _ENQUEUE
    + """
local count, max = 0, tonumber(ARGV[1])
for i = 2, #ARGV, 6 do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 1 then
    local f = ARGV[i + 4]
    if enqueue(KEYS[2], KEYS[4], max, ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], f, ARGV[i + 5]) > 0 then
      redis.call('HDEL', KEYS[1], ARGV[i])
      redis.call('HDEL', KEYS[3], f)
      count = count + 1
    end
  end
end
return count
"""
)
