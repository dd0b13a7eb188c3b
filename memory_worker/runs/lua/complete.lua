
-- KEYS: run, leases, counters, status:processing, status:completed
-- ARGV: token, now, result, status_prefix, id
-- set_status + clear_lease (set_status.lua) with the run hash written once: 8 commands.
local rk, id, now = KEYS[1], ARGV[5], tonumber(ARGV[2])
local held = redis.call('HMGET', rk, 'lease_token', 'status')
if held[1] ~= ARGV[1] or held[2] ~= 'processing' then
  return 0
end
redis.call('ZREM', KEYS[4], id)
redis.call('ZADD', KEYS[5], now, id)
redis.call('HSET', rk, 'status', 'completed', 'updated_at', now,
  'lease_owner', '', 'lease_token', '', 'leased_until', '', 'result', ARGV[3], 'retired', '0')
redis.call('HDEL', rk, 'messages')
redis.call('ZREM', KEYS[2], id)
redis.call('HINCRBY', KEYS[3], 'completed', 1)
return 1
