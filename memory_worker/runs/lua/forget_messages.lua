-- Forget (§14): one chunk of a chat's runs loses messages. Every key is in KEYS.
-- KEYS: [1] queued, [2] retry, [3] leases, [4] retired, [5] status:skipped, [6] counters,
--       [7] parked counts, [8..10] the retired-run summary (facts, counts, aged);
--       then per run: run, run errors, status:<planned status>, parked:<pv>
-- ARGV: [1] now (ms); then per run: id, planned status, action (strip|skip), messages
--       ('' = delete the field), message count, sha1 of the messages planned from, pv
-- A run whose status or messages changed since the plan is left alone and answered
-- in `raced` (the caller plans it again). Returns {changed, raced ids}.
local now = ARGV[1]
local changed, raced = 0, {}
local n = (#KEYS - 10) / 4
preflight({HDEL = {KEYS}, HSET = {KEYS}, ZREM = {KEYS}, DEL = {KEYS}, HINCRBY = {KEYS[6], KEYS[7], KEYS[9]},
  ZADD = {KEYS[5]}})
for i = 0, n - 1 do
  local rk, ek, sk, pk = KEYS[11 + 4 * i], KEYS[12 + 4 * i], KEYS[13 + 4 * i], KEYS[14 + 4 * i]
  local a = 2 + 7 * i
  local id, status, action, msgs, count, sha, pv =
    ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5], ARGV[a + 6]
  local cur = redis.call('HGET', rk, 'messages')
  local cur_sha = ''
  if cur and cur ~= '' then cur_sha = redis.sha1hex(cur) end
  if redis.call('HGET', rk, 'status') ~= status or cur_sha ~= sha then
    raced[#raced + 1] = id
  else
    if msgs == '' then
      redis.call('HDEL', rk, 'messages')
    else
      redis.call('HSET', rk, 'messages', msgs)
    end
    redis.call('HSET', rk, 'message_count', count)
    if action == 'skip' then
      if status ~= 'skipped' then
        redis.call('ZREM', KEYS[1], id)
        redis.call('ZREM', KEYS[2], id)
        redis.call('ZREM', KEYS[3], id)
        redis.call('ZREM', KEYS[4], id)
        summary_remove(KEYS[8], KEYS[9], KEYS[10], id)  -- no longer a retired run to replay
        if redis.call('ZREM', pk, id) == 1 and redis.call('HINCRBY', KEYS[7], pv, -1) <= 0 then
          redis.call('HDEL', KEYS[7], pv)
        end
        redis.call('ZREM', sk, id)
        redis.call('ZADD', KEYS[5], now, id)
        redis.call('HSET', rk, 'status', 'skipped', 'updated_at', now, 'lease_owner', '',
          'lease_token', '', 'leased_until', '', 'next_attempt_at', '', 'retired', '0',
          'skip_reason', 'forgotten')
        redis.call('HINCRBY', KEYS[6], 'skipped:forgotten', 1)
      end
      redis.call('DEL', ek)
    end
    changed = changed + 1
  end
end
return {changed, raced}
