-- breaker.renew — KEYS: hash, in-flight slots; ARGV: generation, now, lease_ms, ttl, probe (1/0),
-- slot ('' = none), slot ttl. Extends the current probe's lease and the attempt's slot;
-- returns 1 while either is still the attempt's, 0 once neither is.
local h = KEYS[1]
local now, lease = tonumber(ARGV[2]), tonumber(ARGV[3])
preflight({HSET = {h}, PEXPIRE = {h, KEYS[2]}, ZADD = {KEYS[2]}})
local current = 0
if ARGV[5] == '1' then
  local v = redis.call('HMGET', h, 'opened', 'gen', 'probe_until')
  if num(v[1]) ~= 0 and num(v[2]) == tonumber(ARGV[1]) and num(v[3]) > 0 then
    redis.call('HSET', h, 'probe_until', s(now + lease))
    redis.call('PEXPIRE', h, ARGV[4])
    current = 1
  end
end
if ARGV[6] ~= '' and redis.call('ZSCORE', KEYS[2], ARGV[6]) then
  redis.call('ZADD', KEYS[2], s(now + lease), ARGV[6])
  redis.call('PEXPIRE', KEYS[2], ARGV[7])
  current = 1
end
return current
