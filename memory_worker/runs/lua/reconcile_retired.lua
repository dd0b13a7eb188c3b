
-- KEYS: retired, retired facts, retired counts, aged (retired_summary.lua),
--       then (add) per run: run hash
-- ARGV: 'remove', now_ms, then ids no longer retired
--   or  'add', now_ms, then per run: id, facts value, aged-at estimate (ms)
-- Maintenance only: brings the summary back in step with the retired index (runs retired
-- by an older release, or removed by something that did not keep the summary).
preflight({HDEL = {KEYS[2], KEYS[3]}, HINCRBY = {KEYS[3]}, HSETNX = {KEYS[2]}, ZADD = {KEYS[4]},
  ZREM = {KEYS[4]}})
local n = 0
if ARGV[1] == 'remove' then
  for i = 3, #ARGV do
    if not redis.call('ZSCORE', KEYS[1], ARGV[i]) then
      n = n + summary_remove(KEYS[2], KEYS[3], KEYS[4], ARGV[i])
    end
  end
  return n
end
for i = 1, (#ARGV - 2) / 3 do
  local id, value, aged_at = ARGV[3 * i], ARGV[3 * i + 1], ARGV[3 * i + 2]
  local rk = KEYS[4 + i]
  if redis.call('ZSCORE', KEYS[1], id) and redis.call('HGET', rk, 'retired') == '1' then
    if redis.call('HEXISTS', rk, 'messages') == 0 then
      summary_age(KEYS[2], KEYS[3], KEYS[4], id, aged_at)
    end
    n = n + summary_add(KEYS[2], KEYS[3], KEYS[4], id, value)
  end
end
return n
