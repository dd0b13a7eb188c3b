
-- KEYS: run, leases, queued, counters, retry, hourly, status:processing, status:failed,
-- status:queued, route errors
-- ARGV: token, now, reason, status_prefix, id, hourly_keep_hours, release entry (one-line
-- JSON), release log keep, workflow ('' = none), route error (JSON; '' = no farm answer)
if redis.call('HGET', KEYS[1], 'lease_token') ~= ARGV[1]
   or redis.call('HGET', KEYS[1], 'status') ~= 'processing' then
  return 0
end
-- Out of memory (§7): Redis refuses a script's first write when it is one that grows
-- memory, and lets a script that has written finish. The lease's ZREM goes first, so an OOM
-- store still takes the release: the run goes back uncharged (claims stay refused).
preflight({ZREM = {KEYS[2], KEYS[7]}, HSET = {KEYS[1], KEYS[10]}, HINCRBY = {KEYS[1], KEYS[4], KEYS[6]},
  HDEL = {KEYS[6]}, ZADD = {KEYS[3], KEYS[5], KEYS[8], KEYS[9]}})
redis.call('ZREM', KEYS[2], ARGV[5])
local attempts = tonumber(redis.call('HGET', KEYS[1], 'attempts') or '0')
if attempts > 0 then attempts = attempts - 1 end
clear_lease(KEYS[1])
redis.call('HINCRBY', KEYS[1], 'releases', 1)
-- the run's release history: one entry a line, the newest `keep`. Twin: model.append_release.
local lines = {}
for line in string.gmatch(redis.call('HGET', KEYS[1], 'release_log') or '', '[^\n]+') do
  lines[#lines + 1] = line
end
lines[#lines + 1] = ARGV[7]
local first = math.max(1, #lines - tonumber(ARGV[8]) + 1)
redis.call('HSET', KEYS[1], 'release_log', table.concat(lines, '\n', first, #lines))
if ARGV[9] ~= '' and ARGV[10] ~= '' then
  redis.call('HSET', KEYS[10], ARGV[9], ARGV[10])
end
redis.call('HINCRBY', KEYS[4], 'released:' .. ARGV[3], 1)
count_hour(KEYS[6], 'released', tonumber(ARGV[2]), tonumber(ARGV[6]))
-- cap accounting (§7): a replayed run that has not failed since its replay (no
-- attempt kept since the replay reset them to 0) goes back to the replay lane — status
-- failed, due now — and stays outside the queued cap through any number of releases.
if redis.call('HGET', KEYS[1], 'uncapped') == '1' and attempts == 0 then
  set_status(KEYS[1], ARGV[5], KEYS[7], KEYS[8], 'failed', tonumber(ARGV[2]))
  redis.call('HSET', KEYS[1], 'attempts', 0, 'next_attempt_at', ARGV[2])
  redis.call('ZADD', KEYS[5], ARGV[2], ARGV[5])
  return 1
end
set_status(KEYS[1], ARGV[5], KEYS[7], KEYS[9], 'queued', tonumber(ARGV[2]))
redis.call('HSET', KEYS[1], 'attempts', attempts, 'next_attempt_at', '')
redis.call('ZADD', KEYS[3], redis.call('HGET', KEYS[1], 'qscore'), ARGV[5])
return 1
