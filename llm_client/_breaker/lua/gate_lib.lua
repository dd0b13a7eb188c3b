-- The admission of one target beyond its breaker (llm_client._gateway.model: check, take),
-- shared by breaker.acquire and walk.begin. ``v`` is the target's HMGET of, in order:
-- opened, gen, open_until, probe_until, cool_until, tat, tok_day, tok_used, lw, ls, lc, ps, pc.
-- ``lim``: {max_in_flight, rate interval µs, rate tolerance µs, tokens_per_day}, 0 = none.
local DAY_MS = 86400000

-- Refusal ('' = admitted) and ms until it may be worth asking again (0 = unknown). Takes
-- nothing; drops expired slots once the in-flight check is reached.
local function gate_check(v, slots, lim, now)
  local cool = num(v[5])
  if cool > now then return 'cooling', cool - now end
  if lim[4] > 0 then
    local day = math.floor(now / DAY_MS)
    if num(v[7]) == day and num(v[8]) >= lim[4] then return 'tokens', (day + 1) * DAY_MS - now end
  end
  if lim[1] > 0 then
    redis.call('ZREMRANGEBYSCORE', slots, '-inf', s(now))
    if redis.call('ZCARD', slots) >= lim[1] then return 'in_flight', 0 end
  end
  if lim[2] > 0 then
    local ahead = num(v[6]) - now * 1000 - lim[3]
    if ahead > 0 then return 'rate', math.ceil(ahead / 1000) end
  end
  return '', 0
end

-- What an admitted call takes: the next rate tick (added to ``set``, the caller's HSET)
-- and a slot leased for ``lease`` ms. Returns 1 when a slot was taken.
local function gate_take(v, slots, lim, now, slot, lease, slots_ttl, set)
  if lim[2] > 0 then
    set[#set + 1] = 'tat'
    set[#set + 1] = s(math.max(num(v[6]), now * 1000) + lim[2])
  end
  if lim[1] > 0 then
    redis.call('ZADD', slots, s(now + lease), slot)
    redis.call('PEXPIRE', slots, slots_ttl)
    return 1
  end
  return 0
end
