
-- KEYS: status:completed, status:skipped, status:cancelled (the finished lanes), all,
--       natural-key expiry, then per candidate j: its run hash KEYS[3j + 3], error log
--       KEYS[3j + 4] and its chat's run index KEYS[3j + 5]
-- ARGV: before_ms, limit, natural_key_retention_ms,
--       then per candidate j: its id ARGV[2 + 2j], the chat id the caller read ARGV[3 + 2j]
-- The candidates are what the caller read (the finished lanes, then each run's chat). Every run this
-- script prunes must be one of them, with the chat the caller read: otherwise (a run became
-- old enough since) it prunes nothing and answers "read again" ({0, 1}).
-- The natural-key index keeps the entry until natural_key_retention after the run was
-- enqueued (_PRUNE_NATURAL_KEYS drops it then): the same slice stays a duplicate that long.
local slot = {}
for j = 1, (#ARGV - 3) / 2 do slot[ARGV[2 + 2 * j]] = j end
local LANES, ALL, NK_EXPIRY = 3, KEYS[4], KEYS[5]
local picked = {}
for i = 1, LANES do
  picked[i] = redis.call('ZRANGEBYSCORE', KEYS[i], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
  for _, id in ipairs(picked[i]) do
    local j = slot[id]
    if not j then return {0, 1} end
    local chat = redis.call('HGET', KEYS[3 * j + 3], 'chat_id')
    if chat and chat ~= ARGV[3 + 2 * j] then return {0, 1} end
  end
end
preflight({ZADD = {NK_EXPIRY}, DEL = {KEYS}, ZREM = {KEYS}})
local n = 0
for i = 1, LANES do
  for _, id in ipairs(picked[i]) do
    local j = slot[id]
    local rk = KEYS[3 * j + 3]
    local v = redis.call('HMGET', rk, 'nk', 'created_at', 'chat_id')
    if v[1] then
      redis.call('ZADD', NK_EXPIRY, tonumber(v[2] or '0') + tonumber(ARGV[3]), v[1] .. ' ' .. id)
    end
    redis.call('DEL', rk, KEYS[3 * j + 4])
    redis.call('ZREM', KEYS[i], id)
    redis.call('ZREM', ALL, id)
    if v[3] then redis.call('ZREM', KEYS[3 * j + 5], id) end
    n = n + 1
  end
end
return {n, 0}
