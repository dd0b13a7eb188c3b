
-- KEYS: queued, retry, leases, parked:<version>, parked counts, run, status:queued,
--       status:failed, status:processing, counters
-- ARGV: id, version, bucket (1 queued, 2 retry, 3 expired lease), now
-- A run of a version this worker does not know leaves the shared queue for its
-- version's set; from a retry or a dead worker's lease it waits there as queued
-- (attempts kept: a crash still spent one).
local b = tonumber(ARGV[3])
if redis.call('HGET', KEYS[6], 'prompt_version') ~= ARGV[2]
   or not redis.call('ZSCORE', KEYS[b], ARGV[1]) then
  return 0
end
preflight({ZREM = {KEYS[b], KEYS[6 + b]}, ZADD = {KEYS[4], KEYS[7]}, HINCRBY = {KEYS[5], KEYS[10]},
  HSET = {KEYS[6]}})
redis.call('ZREM', KEYS[b], ARGV[1])
redis.call('ZADD', KEYS[4], redis.call('HGET', KEYS[6], 'qscore'), ARGV[1])
redis.call('HINCRBY', KEYS[5], ARGV[2], 1)
if b ~= 1 then
  redis.call('ZREM', KEYS[6 + b], ARGV[1])
  redis.call('ZADD', KEYS[7], ARGV[4], ARGV[1])
  redis.call('HSET', KEYS[6], 'status', 'queued', 'updated_at', ARGV[4], 'next_attempt_at', '',
    'lease_owner', '', 'lease_token', '', 'leased_until', '')
end
redis.call('HINCRBY', KEYS[10], 'parked:prompt_version', 1)
return 1
