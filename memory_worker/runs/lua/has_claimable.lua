
-- KEYS: queued, retry, leases, parked:<own version>   ARGV: now
if redis.call('ZCARD', KEYS[1]) > 0 or redis.call('ZCARD', KEYS[4]) > 0 then return 1 end
if #redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, 1) > 0 then return 1 end
if #redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ARGV[1], 'LIMIT', 0, 1) > 0 then return 2 end
return 0
