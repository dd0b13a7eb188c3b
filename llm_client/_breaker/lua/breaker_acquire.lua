-- breaker.acquire — KEYS: hash, failopen permit; ARGV: now, lease_ms, mode, failopen_px, ttl.
-- mode "normal": closed → shared permit; open → probe only after the cooldown, one at a time.
-- mode "failopen": like normal, but during the cooldown the probe is granted when the
-- workflow's fleet-wide fail-open permit (SET NX PX) is free, which it then takes.
-- Any probe granted with failopen_px > 0 also holds the workflow's fail-open permit for
-- that long: a route's half-open probe is that interval's probe, no fail-open on top.
-- Returns {granted, generation, probe, failopen_taken}.
local h = KEYS[1]
local now = tonumber(ARGV[1])
local v = redis.call('HMGET', h, 'opened', 'gen', 'open_until', 'probe_until')
local gen = num(v[2])
if num(v[1]) == 0 then return {1, gen, 0, 0} end
if num(v[4]) > now then return {0, gen, 0, 0} end
local taken = 0
if now < num(v[3]) then
  if ARGV[3] ~= 'failopen' then return {0, gen, 0, 0} end
  if not redis.call('SET', KEYS[2], s(now), 'NX', 'PX', ARGV[4]) then return {0, gen, 0, 0} end
  taken = 1
end
gen = gen + 1
redis.call('HSET', h, 'gen', s(gen), 'probe_until', s(now + tonumber(ARGV[2])))
redis.call('PEXPIRE', h, ARGV[5])
if taken == 0 and tonumber(ARGV[4]) > 0 then
  redis.call('SET', KEYS[2], s(now), 'PX', ARGV[4])
end
return {1, gen, 1, taken}
