-- breaker.renew — KEYS: hash; ARGV: generation, now, lease_ms, ttl.
-- Extends the current probe's lease; returns 1, or 0 when the permit is no longer current.
local h = KEYS[1]
local v = redis.call('HMGET', h, 'opened', 'gen', 'probe_until')
if num(v[1]) == 0 or num(v[2]) ~= tonumber(ARGV[1]) or num(v[3]) <= 0 then return 0 end
redis.call('HSET', h, 'probe_until', s(tonumber(ARGV[2]) + tonumber(ARGV[3])))
redis.call('PEXPIRE', h, ARGV[4])
return 1
