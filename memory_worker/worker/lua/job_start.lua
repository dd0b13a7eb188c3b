-- arq's job start (WATCH / EXISTS / ZSCORE / MULTI PSETEX EXEC) in one step; a tick is also
-- marked running (until the heartbeat's expiry) and started (until the in-progress lease ends).
-- SET NX takes the in-progress key first (a start: 4 commands; one lost to another worker: 1)
-- and gives it back if the job is no longer due (atomic: nobody sees the key in between).
-- KEYS: in-progress key, arq queue, running ticks, started ticks.
-- ARGV: job id, now ms, in-progress ms, running expiry ms (0: not a tick).
preflight({SET = {KEYS[1]}, DEL = {KEYS[1]}, ZADD = {KEYS[3], KEYS[4]}})
if not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[3]) then return false end
local score = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not score or tonumber(score) > tonumber(ARGV[2]) then
  redis.call('DEL', KEYS[1])
  return false
end
if tonumber(ARGV[4]) > 0 then
  redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
  redis.call('ZADD', KEYS[4], tonumber(ARGV[2]) + tonumber(ARGV[3]), ARGV[1])
end
return score
