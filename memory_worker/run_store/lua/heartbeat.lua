-- KEYS: workers, worker_runs (and the store's pulse, pulse.lua), worker_concurrency
-- ARGV: now, ttl_ms, owner, concurrency, pulse_gap_ms, held run ids (comma-separated)
local now = tonumber(ARGV[1])
local writes = touch_pulse(tonumber(redis.call('HGET', KEYS[2], PULSE_AT) or ''), now,
  tonumber(ARGV[5]))
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('HSET', KEYS[3], ARGV[3], ARGV[4])
if ARGV[6] == '' then
  redis.call('HDEL', KEYS[2], ARGV[3])
else
  writes[#writes + 1] = ARGV[3]
  writes[#writes + 1] = ARGV[6]
end
if #writes > 0 then redis.call('HSET', KEYS[2], unpack(writes)) end
return redis.call('ZRANGEBYSCORE', KEYS[1], now, '+inf')
