-- KEYS: retired, retry, status:failed, counters, status:skipped,
--       retired facts, retired counts, aged (retired_summary.lua), status:cancelled,
--       then per run: run hash, error log
-- ARGV: now, scope, log_max, then per run: id, available_at_ms, replay entry
-- Scope 'run' (one run by id, §13): a failed run with attempts to reset, a skipped run or a
-- cancelled one.
local now = ARGV[1]
local replayed = {}
local n = (#KEYS - 9) / 2
preflight({ZREM = {KEYS[1], KEYS[5], KEYS[8], KEYS[9]}, HSET = {KEYS}, RPUSH = {KEYS}, LTRIM = {KEYS},
  HDEL = {KEYS[6], KEYS[7]}, HINCRBY = {KEYS[4], KEYS[7]}, ZADD = {KEYS[2], KEYS[3]}})
for i = 1, n do
  local rk, ek = KEYS[8 + 2 * i], KEYS[9 + 2 * i]
  local id, at, entry = ARGV[1 + 3 * i], ARGV[2 + 3 * i], ARGV[3 + 3 * i]
  local v = redis.call('HMGET', rk, 'status', 'retired', 'attempts')
  local ok
  local failed = v[1] == 'failed' and tonumber(v[3] or '0') > 0
  if ARGV[2] == 'skipped' then
    ok = v[1] == 'skipped'
  elseif ARGV[2] == 'run' then
    ok = failed or v[1] == 'skipped' or v[1] == 'cancelled'
  else
    ok = failed and (ARGV[2] ~= 'retired' or v[2] == '1')
  end
  if ok and redis.call('HEXISTS', rk, 'messages') == 1 then
    if v[1] == 'skipped' then
      -- no version: the worker that claims it runs it under its own (newer) one
      redis.call('ZREM', KEYS[5], id)
      redis.call('HSET', rk, 'status', 'failed', 'prompt_version', '')
    elseif v[1] == 'cancelled' then
      redis.call('ZREM', KEYS[9], id)
      redis.call('HSET', rk, 'status', 'failed')
    end
    redis.call('RPUSH', ek, entry)
    redis.call('LTRIM', ek, -tonumber(ARGV[3]), -1)
    -- uncapped: outside the queued cap until it completes or fails again (run_store.py)
    redis.call('HSET', rk, 'attempts', 0, 'retired', '0', 'next_attempt_at', at,
      'updated_at', now, 'uncapped', '1')
    redis.call('ZREM', KEYS[1], id)
    summary_remove(KEYS[6], KEYS[7], KEYS[8], id)
    redis.call('ZADD', KEYS[2], at, id)
    redis.call('ZADD', KEYS[3], now, id)
    redis.call('HINCRBY', KEYS[4], 'replayed', 1)
    replayed[#replayed + 1] = id
  end
end
return replayed
