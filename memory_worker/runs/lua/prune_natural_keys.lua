
-- KEYS: natural keys, natural-key expiry   ARGV: now, limit
local items = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
preflight({HDEL = {KEYS[1]}, ZREM = {KEYS[2]}})
for _, item in ipairs(items) do
  local sp = string.find(item, ' ', 1, true)
  local nk, id = string.sub(item, 1, sp - 1), string.sub(item, sp + 1)
  if redis.call('HGET', KEYS[1], nk) == id then redis.call('HDEL', KEYS[1], nk) end
  redis.call('ZREM', KEYS[2], item)
end
return #items
