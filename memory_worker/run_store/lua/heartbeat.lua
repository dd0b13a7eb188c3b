
-- KEYS: workers, worker_runs, pulse, worker_concurrency
-- ARGV: now, ttl_ms, owner, concurrency, pulse_gap_ms, held run ids (comma-separated)
local now = tonumber(ARGV[1])
touch_pulse(KEYS[3], now, tonumber(ARGV[5]))
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('HSET', KEYS[4], ARGV[3], ARGV[4])
if ARGV[6] == '' then
  redis.call('HDEL', KEYS[2], ARGV[3])
else
  redis.call('HSET', KEYS[2], ARGV[3], ARGV[6])
end
return redis.call('ZRANGEBYSCORE', KEYS[1], now, '+inf')
