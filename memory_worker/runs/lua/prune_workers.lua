
-- KEYS: workers, worker concurrency, worker runs, worker info   ARGV: before_ms
-- A worker gone for longer than the registry's grace leaves all four (its listed runs too:
-- a claim reads them only for an owner still in ``workers``).
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
for _, id in ipairs(ids) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('HDEL', KEYS[2], id)
  redis.call('HDEL', KEYS[3], id)
  redis.call('HDEL', KEYS[4], id)
end
return #ids
