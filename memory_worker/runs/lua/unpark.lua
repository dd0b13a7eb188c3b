
-- KEYS: parked:<version>, queued, parked counts   ARGV: version, limit
local back = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1, 'WITHSCORES')
preflight({ZADD = {KEYS[2]}, ZREM = {KEYS[1]}, HINCRBY = {KEYS[3]}, HDEL = {KEYS[3]}})
for i = 1, #back, 2 do
  redis.call('ZADD', KEYS[2], back[i + 1], back[i])
  redis.call('ZREM', KEYS[1], back[i])
end
if redis.call('HINCRBY', KEYS[3], ARGV[1], -#back / 2) <= 0 then
  redis.call('HDEL', KEYS[3], ARGV[1])
end
return #back / 2
