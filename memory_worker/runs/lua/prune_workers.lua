
-- KEYS: workers, worker concurrency, worker runs, worker info, worker completed
-- ARGV: before_ms
-- A worker gone for longer than the registry's grace leaves all five (its listed runs too:
-- a claim reads them only for an owner still in ``workers``).
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
preflight({ZREM = {KEYS[1]}, HDEL = {KEYS[2], KEYS[3], KEYS[4], KEYS[5]}})
for _, id in ipairs(ids) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('HDEL', KEYS[2], id)
  redis.call('HDEL', KEYS[3], id)
  redis.call('HDEL', KEYS[4], id)
  redis.call('HDEL', KEYS[5], id)
end
return #ids
