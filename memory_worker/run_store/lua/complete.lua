
-- KEYS: run, leases, counters, status:processing, status:completed
-- ARGV: token, now, result, status_prefix, id
if redis.call('HGET', KEYS[1], 'lease_token') ~= ARGV[1]
   or redis.call('HGET', KEYS[1], 'status') ~= 'processing' then
  return 0
end
set_status(KEYS[1], ARGV[5], KEYS[4], KEYS[5], 'completed', tonumber(ARGV[2]))
clear_lease(KEYS[1])
redis.call('HSET', KEYS[1], 'result', ARGV[3], 'retired', '0')
redis.call('HDEL', KEYS[1], 'messages')
redis.call('ZREM', KEYS[2], ARGV[5])
redis.call('HINCRBY', KEYS[3], 'completed', 1)
return 1
