
-- KEYS: run, errors, leases, retry, retired, counters, status:processing, status:failed,
--       retired facts, retired counts, aged, route errors
-- ARGV: token, now, entry, next_attempt_ms ('' = retire), log_max, status_prefix, reason, id,
--       entry code, entry reason ('' = none), workflow ('' = none), route error (JSON; '' =
--       no farm answer)
if redis.call('HGET', KEYS[1], 'lease_token') ~= ARGV[1]
   or redis.call('HGET', KEYS[1], 'status') ~= 'processing' then
  return 0
end
-- The lease's ZREM first: an OOM store takes the failure too (see release.lua).
preflight({ZREM = {KEYS[3], KEYS[7], KEYS[11]}, RPUSH = {KEYS[2]}, LTRIM = {KEYS[2]},
  HSET = {KEYS[1], KEYS[12]}, HINCRBY = {KEYS[6], KEYS[10]}, HDEL = {KEYS[9], KEYS[10]},
  HSETNX = {KEYS[9]}, ZADD = {KEYS[4], KEYS[5], KEYS[8]}})
redis.call('ZREM', KEYS[3], ARGV[8])
local now = tonumber(ARGV[2])
redis.call('RPUSH', KEYS[2], ARGV[3])
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[5]), -1)
set_status(KEYS[1], ARGV[8], KEYS[7], KEYS[8], 'failed', now)
clear_lease(KEYS[1])
redis.call('HINCRBY', KEYS[6], 'failed:' .. ARGV[7], 1)
if ARGV[11] ~= '' and ARGV[12] ~= '' then
  redis.call('HSET', KEYS[12], ARGV[11], ARGV[12])
end
if ARGV[4] == '' then
  redis.call('HSET', KEYS[1], 'retired', '1', 'next_attempt_at', '')
  redis.call('ZADD', KEYS[5], now, ARGV[8])
  redis.call('HINCRBY', KEYS[6], 'retired:' .. ARGV[7], 1)
  local v = redis.call('HMGET', KEYS[1], 'chat_id', 'prompt_version', 'attempts')
  summary_remove(KEYS[9], KEYS[10], KEYS[11], ARGV[8])
  summary_add(KEYS[9], KEYS[10], KEYS[11], ARGV[8], ARGV[9] .. '\t' .. ARGV[10] .. '\t'
    .. (v[1] or '') .. '\t' .. (v[2] or '') .. '\t' .. (v[3] or '0'))
  return 2
end
redis.call('HSET', KEYS[1], 'next_attempt_at', ARGV[4])
redis.call('ZADD', KEYS[4], ARGV[4], ARGV[8])
return 1
