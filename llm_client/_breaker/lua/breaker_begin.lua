-- walk.begin — the walk's first round trip: snapshot + the first permit.
-- KEYS: the route's target hashes in route order, then the workflow's fail-open permit;
-- ARGV: now, lease_ms, failopen_px, ttl, probes (1/0).
-- Orders the targets as the walker does (closed first, then the open ones when probes
-- are allowed) and takes the first permit ``breaker.acquire`` (mode normal) would grant,
-- in that order. Returns {granted index or 0, generation, probe, {closed flags}}.
local n = #KEYS - 1
local now = tonumber(ARGV[1])
local states, order, flags = {}, {}, {}
for i = 1, n do
  states[i] = redis.call('HMGET', KEYS[i], 'opened', 'gen', 'open_until', 'probe_until')
  if num(states[i][1]) == 0 then flags[i] = 1; order[#order + 1] = i else flags[i] = 0 end
end
if ARGV[5] == '1' then
  for i = 1, n do if flags[i] == 0 then order[#order + 1] = i end end
end
for _, i in ipairs(order) do
  local v = states[i]
  local gen = num(v[2])
  if num(v[1]) == 0 then return {i, gen, 0, flags} end
  if num(v[4]) <= now and now >= num(v[3]) then
    gen = gen + 1
    redis.call('HSET', KEYS[i], 'gen', s(gen), 'probe_until', s(now + tonumber(ARGV[2])))
    redis.call('PEXPIRE', KEYS[i], ARGV[4])
    if tonumber(ARGV[3]) > 0 then
      redis.call('SET', KEYS[n + 1], s(now), 'PX', ARGV[3])
    end
    return {i, gen, 1, flags}
  end
end
return {0, 0, 0, flags}
