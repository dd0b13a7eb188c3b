-- KEYS: workers, worker_runs (and the store's pulse, pulse.lua), worker_concurrency,
--       worker_info
-- ARGV: now, ttl_ms, owner, concurrency, pulse_gap_ms, held run ids (comma-separated),
--       keep listed (1: a claim of the owner's is in flight — add to its listed runs, since
--       the claim may have listed one the held ids cannot know yet; 0: replace them),
--       info (JSON for the console's workers page; '' = leave it)
local now = tonumber(ARGV[1])
local held = ARGV[6]
if ARGV[7] == '1' then
  local listed = redis.call('HGET', KEYS[2], ARGV[3]) or ''
  local seen = {}
  for id in string.gmatch(held, '[^,]+') do seen[id] = true end
  for id in string.gmatch(listed, '[^,]+') do
    if not seen[id] then
      seen[id] = true
      held = (held == '') and id or (held .. ',' .. id)
    end
  end
end
local writes = touch_pulse(tonumber(redis.call('HGET', KEYS[2], PULSE_AT) or ''), now,
  tonumber(ARGV[5]))
preflight({ZADD = {KEYS[1]}, HSET = {KEYS[2], KEYS[3], KEYS[4]}, HDEL = {KEYS[2]}})
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('HSET', KEYS[3], ARGV[3], ARGV[4])
if ARGV[8] and ARGV[8] ~= '' then redis.call('HSET', KEYS[4], ARGV[3], ARGV[8]) end
if held == '' then
  redis.call('HDEL', KEYS[2], ARGV[3])
else
  writes[#writes + 1] = ARGV[3]
  writes[#writes + 1] = held
end
if #writes > 0 then redis.call('HSET', KEYS[2], unpack(writes)) end
return redis.call('ZRANGEBYSCORE', KEYS[1], now, '+inf')
