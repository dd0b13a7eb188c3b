-- breaker.record — KEYS: hash, window[, success counter]; ARGV: generation, outcome, now,
-- failure_threshold, rate_min_calls, rate_window_ms, rate_threshold, cooldown_ms,
-- cooldown_max_ms, hash ttl, window ttl[, counter field]. With the counter, a success also
-- counts itself there (the attempt metrics, in the same round trip), whatever the generation.
-- Returns the transition ("opened", "reopened", "closed") or "".
-- A closed breaker's success (most calls) costs HMGET, HINCRBY seq and ZADD: it sets the
-- TTLs only when ``ttl_at`` says they may be missing or a window old (module docstring).
local h, w = KEYS[1], KEYS[2]
if KEYS[3] and ARGV[2] == 'success' then redis.call('HINCRBY', KEYS[3], ARGV[12], 1) end
local now = tonumber(ARGV[3])
local window_ms = tonumber(ARGV[6])
local v = redis.call('HMGET', h, 'opened', 'gen', 'consec', 'trips', 'ttl_at')
local gen, consec, trips = num(v[2]), num(v[3]), num(v[4])
if tonumber(ARGV[1]) ~= gen then return '' end
local outcome = ARGV[2]

local function cooldown(t)
  local e = t - 1
  if e < 0 then e = 0 end
  if e >= 32 then return tonumber(ARGV[9]) end
  local c = tonumber(ARGV[8]) * (2 ^ e)
  if c > tonumber(ARGV[9]) then return tonumber(ARGV[9]) end
  return c
end

-- A failure prunes the window before counting it; a success (most calls) prunes every
-- 16th call only: the stale entries it leaves are older than the window, which every
-- reader prunes by time (the rate rule right below, breaker.view). Returns whether
-- this is a 16th call.
local function add_call(failed)
  local seq = redis.call('HINCRBY', h, 'seq', 1)
  local lazy = seq % 16 == 0
  if failed == '1' or lazy then
    redis.call('ZREMRANGEBYSCORE', w, '-inf', s(now - window_ms))
  end
  redis.call('ZADD', w, s(now), s(seq) .. ':' .. failed)
  return lazy
end

local transition = ''
if num(v[1]) == 0 then
  if outcome == 'success' then
    local lazy = add_call('0')
    local ttl_at = num(v[5])
    if ttl_at == 0 or math.abs(now - ttl_at) >= window_ms then
      -- Both TTLs may be missing (new hash, window deleted by a close) or a window old
      -- (or the mark is a window ahead: a worker whose clock is off keeps the TTLs right,
      -- at the old cost).
      redis.call('PEXPIRE', w, ARGV[11])
      redis.call('PEXPIRE', h, ARGV[10])
      redis.call('HSET', h, 'consec', '0', 'ttl_at', s(now))
      return ''
    end
    -- Set at ttl_at: the hash outlives it by a week plus a window, the window by two
    -- windows (plus margin), so both outlive this call by their own spans.
    if lazy then redis.call('PEXPIRE', w, ARGV[11]) end
    if consec ~= 0 then redis.call('HSET', h, 'consec', '0') end
    return ''
  elseif outcome == 'failure' then
    add_call('1')
    redis.call('PEXPIRE', w, ARGV[11])
    consec = consec + 1
    local trip = consec >= tonumber(ARGV[4])
    if not trip then
      local calls = redis.call('ZRANGE', w, 0, -1)
      if #calls >= tonumber(ARGV[5]) then
        local failures = 0
        for _, m in ipairs(calls) do
          if string.sub(m, -2) == ':1' then failures = failures + 1 end
        end
        trip = failures / #calls > tonumber(ARGV[7])
      end
    end
    if trip then
      trips = trips + 1
      redis.call('HSET', h, 'opened', '1', 'gen', s(gen + 1), 'consec', s(consec),
        'trips', s(trips), 'opened_at', s(now), 'open_until', s(now + cooldown(trips)),
        'probe_until', '0', 'ttl_at', s(now))
      transition = 'opened'
    else
      redis.call('HSET', h, 'consec', s(consec), 'gen', s(gen), 'ttl_at', s(now))
    end
  else
    return ''
  end
else
  gen = gen + 1
  if outcome == 'success' then
    -- ttl_at 0: the next success gives the window this DEL removes its TTL again.
    redis.call('HSET', h, 'opened', '0', 'gen', s(gen), 'consec', '0', 'trips', '0',
      'opened_at', '0', 'open_until', '0', 'probe_until', '0', 'ttl_at', '0')
    redis.call('DEL', w)
    transition = 'closed'
  elseif outcome == 'failure' then
    trips = trips + 1
    redis.call('HSET', h, 'gen', s(gen), 'consec', s(consec + 1), 'trips', s(trips),
      'open_until', s(now + cooldown(trips)), 'probe_until', '0')
    transition = 'reopened'
  else
    redis.call('HSET', h, 'gen', s(gen), 'probe_until', '0')
  end
end
redis.call('PEXPIRE', h, ARGV[10])
return transition
