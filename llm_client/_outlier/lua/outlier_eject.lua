-- outlier.eject — KEYS: one tier's outlier hashes. ARGV: now, allowed (the panic floor),
-- base_ms, max_ms, ttl, then the indexes (1-based) of the targets to eject, worst first.
-- Ejects them in order while fewer than ``allowed`` are out, skipping any out already:
-- ``times`` counts on when the last ejection ended less than max_ms ago (else 1), the
-- period is min(base × times, max), and the counts start afresh.
-- Returns {index, until, times} of each target ejected.
local now, allowed = tonumber(ARGV[1]), tonumber(ARGV[2])
local base, max_ms = tonumber(ARGV[3]), tonumber(ARGV[4])
local untils, times = {}, {}
local out = 0
for i = 1, #KEYS do
  local v = redis.call('HMGET', KEYS[i], 'until', 'times')
  untils[i], times[i] = num(v[1]), num(v[2])
  if now < untils[i] then out = out + 1 end
end
local room = allowed - out
preflight({DEL = {KEYS}, HSET = {KEYS}, PEXPIRE = {KEYS}})
local done = {}
for a = 6, #ARGV do
  if room <= 0 then break end
  local i = tonumber(ARGV[a])
  if now >= untils[i] then
    local t = 1
    if now < untils[i] + max_ms then t = times[i] + 1 end
    local until_ms = now + math.min(base * t, max_ms)
    redis.call('DEL', KEYS[i])
    redis.call('HSET', KEYS[i], 'until', s(until_ms), 'times', s(t), 'at', s(now))
    redis.call('PEXPIRE', KEYS[i], ARGV[5])
    untils[i], times[i] = until_ms, t
    done[#done + 1] = {i, until_ms, t}
    room = room - 1
  end
end
return done
