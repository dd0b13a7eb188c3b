
-- KEYS: run, leases   ARGV: token, until_ms, id
-- Answer: 1 renewed; 0 the lease is someone else's; 2 an operator cancelled the run (§13).
local v = redis.call('HMGET', KEYS[1], 'lease_token', 'status')
if v[2] == 'cancelled' then return 2 end
if v[1] ~= ARGV[1] or v[2] ~= 'processing' then
  return 0
end
preflight({HSET = {KEYS[1]}, ZADD = {KEYS[2]}})
redis.call('HSET', KEYS[1], 'leased_until', ARGV[2])
redis.call('ZADD', KEYS[2], 'XX', ARGV[2], ARGV[3])
return 1
