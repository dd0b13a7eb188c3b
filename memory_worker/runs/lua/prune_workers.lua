
-- KEYS: workers, worker concurrency, worker runs   ARGV: before_ms
-- A worker gone for longer than the registry's grace leaves all three (its listed runs too:
-- a claim reads them only for an owner still in ``workers``).
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
for _, id in ipairs(ids) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('HDEL', KEYS[2], id)
  redis.call('HDEL', KEYS[3], id)
end
return #ids
