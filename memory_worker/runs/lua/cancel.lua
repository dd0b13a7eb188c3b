-- Cancel one run (§13): taken out for good, whatever lane it waits in or works in.
-- KEYS: [1] queued, [2] retry, [3] leases, [4] retired, [5] counters, [6] parked counts,
--       [7..9] the retired-run summary (facts, counts, aged), [10] status:cancelled,
--       [11] run, [12] run errors, [13] status:<the status read>, [14] parked:<the version
--       read>, [15] the run's kept extraction
-- ARGV: [1] now (ms), [2] id, [3] the status read, [4] the prompt version read ('' = none),
--       [5] the error-log entry that records the cancel (JSON), [6] error log max
-- Answer {outcome, status before}: 'cancelled'; 'already' (cancelled before); 'finished'
-- (completed or skipped: nothing left to cancel); 'missing'; 'raced' (status or version moved
-- since the caller read them, so KEYS[13..14] may be the wrong ones: read again and call again).
-- A processing run loses its lease here: its owner's renewal answers "cancelled", and its
-- completion, failure and release are refused (status); its card write is refused by the
-- card store's mark (cards/lua/cancel_mark.lua), set before this script runs.
local rk, id, now = KEYS[11], ARGV[2], ARGV[1]
local v = redis.call('HMGET', rk, 'status', 'prompt_version')
local status, pv = v[1], v[2] or ''
if not status then return {'missing', ''} end
if status == 'cancelled' then return {'already', status} end
if status == 'completed' or status == 'skipped' then return {'finished', status} end
if status ~= ARGV[3] or pv ~= ARGV[4] then return {'raced', status} end
-- Out of memory (§7): the first write grows memory, so an OOM store refuses the whole step.
preflight({ZADD = {KEYS[10]}, ZREM = {KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[9], KEYS[13], KEYS[14]},
  HDEL = {KEYS[6], KEYS[7], KEYS[8], rk}, HINCRBY = {KEYS[5], KEYS[6], KEYS[8]}, DEL = {KEYS[15]},
  RPUSH = {KEYS[12]}, LTRIM = {KEYS[12]}, HSET = {rk}})
redis.call('ZADD', KEYS[10], now, id)
redis.call('ZREM', KEYS[13], id)
redis.call('ZREM', KEYS[1], id)
redis.call('ZREM', KEYS[2], id)
redis.call('ZREM', KEYS[3], id)
redis.call('ZREM', KEYS[4], id)
summary_remove(KEYS[7], KEYS[8], KEYS[9], id)  -- no longer a retired run a filter replays
if redis.call('ZREM', KEYS[14], id) == 1 and redis.call('HINCRBY', KEYS[6], pv, -1) <= 0 then
  redis.call('HDEL', KEYS[6], pv)
end
redis.call('DEL', KEYS[15])
redis.call('RPUSH', KEYS[12], ARGV[5])
redis.call('LTRIM', KEYS[12], -tonumber(ARGV[6]), -1)
redis.call('HSET', rk, 'status', 'cancelled', 'updated_at', now, 'lease_owner', '',
  'lease_token', '', 'leased_until', '', 'next_attempt_at', '', 'retired', '0')
redis.call('HDEL', rk, 'uncapped')
redis.call('HINCRBY', KEYS[5], 'cancelled:' .. status, 1)
return {'cancelled', status}
