-- walk.begin — the walk's first round trip: snapshot + the first permit.
-- KEYS: the route's target hashes in the walker's order, the workflow's fail-open permit,
-- then the targets' in-flight slot sets (same order).
-- ARGV: now, lease_ms, failopen_px, ttl, probes (1/0), slot, slot ttl, then per target its
-- limits (max_in_flight, rate interval µs, rate tolerance µs, tokens_per_day; 0 = none).
-- Tries the targets as the walker does (when probes are allowed, the open ones whose
-- half-open probe is due first; then the closed ones in the given order; then, with
-- probes, the other open ones) and takes the first permit ``breaker.acquire`` (mode
-- normal) would grant, in that order. Returns {granted index or 0, generation, probe,
-- slotted, {flags: 1 closed, 2 probe due, 0 open}, {refusal of each target tried before it, '' otherwise},
-- {per target: lw, ls, lc, ps, pc, cool_until}} (the stats as read, for the next walk's order).
local n = (#KEYS - 1) / 2
local now = tonumber(ARGV[1])
local states, order, flags, refusals, stats = {}, {}, {}, {}, {}
for i = 1, n do
  local v = redis.call('HMGET', KEYS[i], 'opened', 'gen', 'open_until', 'probe_until',
    'cool_until', 'tat', 'tok_day', 'tok_used', 'lw', 'ls', 'lc', 'ps', 'pc')
  states[i] = v
  refusals[i] = ''
  for f = 9, 13 do stats[#stats + 1] = num(v[f]) end
  stats[#stats + 1] = num(v[5])
  if num(v[1]) == 0 then
    flags[i] = 1
  elseif num(v[4]) <= now and now >= num(v[3]) then
    flags[i] = 2
  else
    flags[i] = 0
  end
end
if ARGV[5] == '1' then
  for i = 1, n do if flags[i] == 2 then order[#order + 1] = i end end
end
for i = 1, n do if flags[i] == 1 then order[#order + 1] = i end end
if ARGV[5] == '1' then
  for i = 1, n do if flags[i] == 0 then order[#order + 1] = i end end
end
preflight({HSET = {KEYS}, PEXPIRE = {KEYS}, SET = {KEYS[n + 1]}, ZADD = {KEYS}, ZREMRANGEBYSCORE = {KEYS}})
for _, i in ipairs(order) do
  local v = states[i]
  local gen = num(v[2])
  local opened = num(v[1]) == 1
  local refusal = 'open'
  if not (opened and (num(v[4]) > now or now < num(v[3]))) then
    local at = 7 + (i - 1) * 4
    local lim = {tonumber(ARGV[at + 1]), tonumber(ARGV[at + 2]), tonumber(ARGV[at + 3]),
      tonumber(ARGV[at + 4])}
    local slots = KEYS[n + 1 + i]
    refusal = gate_check(v, slots, lim, now)
    if refusal == '' then
      local set = {}
      local slotted = gate_take(v, slots, lim, now, ARGV[6], tonumber(ARGV[2]), ARGV[7], set)
      local probe = 0
      if opened then
        gen = gen + 1
        probe = 1
        set[#set + 1] = 'gen'
        set[#set + 1] = s(gen)
        set[#set + 1] = 'probe_until'
        set[#set + 1] = s(now + tonumber(ARGV[2]))
        if tonumber(ARGV[3]) > 0 then
          redis.call('SET', KEYS[n + 1], s(now), 'PX', ARGV[3])
        end
      end
      if #set > 0 then
        redis.call('HSET', KEYS[i], unpack(set))
        redis.call('PEXPIRE', KEYS[i], ARGV[4])
      end
      return {i, gen, probe, slotted, flags, refusals, stats}
    end
  end
  refusals[i] = refusal
end
return {0, 0, 0, 0, flags, refusals, stats}
