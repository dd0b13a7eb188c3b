-- breaker.acquire — KEYS: hash, failopen permit, in-flight slots.
-- ARGV: now, lease_ms, mode, failopen_px, ttl, slot, slot ttl, then the target's limits
-- (max_in_flight, rate interval µs, rate tolerance µs, tokens_per_day; 0 = none).
-- mode "normal": closed → shared permit; open → probe only after the cooldown, one at a time.
-- mode "failopen": like normal, but during the cooldown the probe is granted when the
-- workflow's fleet-wide fail-open permit (SET NX PX) is free, which it then takes.
-- Any probe granted with failopen_px > 0 also holds the workflow's fail-open permit for
-- that long: a route's half-open probe is that interval's probe, no fail-open on top.
-- The breaker refuses first ('open'); then the gate (gate_lib.lua: cooling, tokens,
-- in_flight, rate); nothing is taken unless both admit. A slot is leased for lease_ms.
-- Returns {granted, generation, probe, failopen_taken, refusal, ready_ms, slotted}.
local h = KEYS[1]
local now = tonumber(ARGV[1])
local v = redis.call('HMGET', h, 'opened', 'gen', 'open_until', 'probe_until', 'cool_until',
  'tat', 'tok_day', 'tok_used')
local gen = num(v[2])
local opened = num(v[1]) == 1
if opened and (num(v[4]) > now or (now < num(v[3]) and ARGV[3] ~= 'failopen')) then
  return {0, gen, 0, 0, 'open', 0, 0}
end
preflight({HSET = {h}, PEXPIRE = {h, KEYS[3]}, SET = {KEYS[2]}, ZADD = {KEYS[3]},
  ZREMRANGEBYSCORE = {KEYS[3]}})
local lim = {tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11])}
local refusal, ready = gate_check(v, KEYS[3], lim, now)
if refusal ~= '' then return {0, gen, 0, 0, refusal, ready, 0} end
local taken = 0
if opened and now < num(v[3]) then
  if not redis.call('SET', KEYS[2], s(now), 'NX', 'PX', ARGV[4]) then
    return {0, gen, 0, 0, 'open', 0, 0}
  end
  taken = 1
end
local set = {}
local slotted = gate_take(v, KEYS[3], lim, now, ARGV[6], tonumber(ARGV[2]), ARGV[7], set)
local probe = 0
if opened then
  gen = gen + 1
  probe = 1
  set[#set + 1] = 'gen'
  set[#set + 1] = s(gen)
  set[#set + 1] = 'probe_until'
  set[#set + 1] = s(now + tonumber(ARGV[2]))
  if taken == 0 and tonumber(ARGV[4]) > 0 then
    redis.call('SET', KEYS[2], s(now), 'PX', ARGV[4])
  end
end
if #set > 0 then
  redis.call('HSET', h, unpack(set))
  redis.call('PEXPIRE', h, ARGV[5])
end
return {1, gen, probe, taken, '', 0, slotted}
