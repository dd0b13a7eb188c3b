-- breaker.record — KEYS: hash, window, in-flight slots[, success counter].
-- ARGV: 1 generation, 2 outcome, 3 now, 4 failure_threshold, 5 rate_min_calls,
-- 6 rate_window_ms, 7 rate_threshold, 8 cooldown_ms, 9 cooldown_max_ms, 10 hash ttl,
-- 11 window ttl, 12 slot ('' = none), 13 cool_ms (0 = none), 14 elapsed_ms (-1 = none),
-- 15 latency window ms, 16 latency bucket field, 17 tokens, 18 counter field ('' = none),
-- 19 calls (a folded record: that many plain successes of one generation and one latency
-- bucket, ARGV 14 and 17 their sums, ARGV 3 the latest; llm_client._breaker.carry.fold).
-- With the counter, a success also counts itself there (the attempt metrics, in the same
-- round trip), whatever the generation. Returns the transition ("opened", "reopened",
-- "closed") or "".
-- Whatever the generation (they are facts about the target, not the breaker's business):
-- the attempt's slot is freed, a Retry-After cools the target (never shortening a longer
-- cooling), and a success's latency (two windows + a histogram bucket) and tokens (today's,
-- UTC) are noted. Every field change goes out in one HSET at the end.
-- A closed breaker's success (most calls) costs HMGET, HSET and ZADD (one ZADD for a
-- folded record's calls): it sets the TTLs only when ``ttl_at`` says they may be missing
-- or a window old (module docstring).
local h, w = KEYS[1], KEYS[2]
preflight({ZREM = {KEYS[3]}, HINCRBY = {KEYS[4]}, HSET = {h}, PEXPIRE = {h, w}, DEL = {w}, ZADD = {w},
  ZREMRANGEBYSCORE = {w}})
if ARGV[12] ~= '' then redis.call('ZREM', KEYS[3], ARGV[12]) end
local calls = tonumber(ARGV[19] or '1')
if KEYS[4] and ARGV[2] == 'success' then redis.call('HINCRBY', KEYS[4], ARGV[18], calls) end
local now = tonumber(ARGV[3])
local window_ms = tonumber(ARGV[6])
local v = redis.call('HMGET', h, 'opened', 'gen', 'consec', 'trips', 'ttl_at', 'seq',
  'cool_until', 'lw', 'ls', 'lc', 'ps', 'pc', ARGV[16], 'tok_day', 'tok_used')
local gen, consec, trips = num(v[2]), num(v[3]), num(v[4])
local outcome = ARGV[2]
local set = {}
local function put(field, value)
  set[#set + 1] = field
  set[#set + 1] = value
end
local function flush(expire)
  if #set == 0 then return end
  redis.call('HSET', h, unpack(set))
  if expire then redis.call('PEXPIRE', h, ARGV[10]) end
end

local cool = now + tonumber(ARGV[13])
if cool > now and cool > num(v[7]) then put('cool_until', s(cool)) end
local elapsed = tonumber(ARGV[14])
if outcome == 'success' and elapsed >= 0 then
  local lw, ls, lc, ps, pc = num(v[8]), num(v[9]), num(v[10]), num(v[11]), num(v[12])
  local index = math.floor(now / tonumber(ARGV[15]))
  if index == lw + 1 then
    lw, ls, lc, ps, pc = index, elapsed, calls, ls, lc
  elseif index > lw + 1 then
    lw, ls, lc, ps, pc = index, elapsed, calls, 0, 0
  else  -- this window (or a worker whose clock is behind): the current one
    ls, lc = ls + elapsed, lc + calls
  end
  put('lw', s(lw)); put('ls', s(ls)); put('lc', s(lc)); put('ps', s(ps)); put('pc', s(pc))
  put(ARGV[16], s(num(v[13]) + calls))
  local tokens = tonumber(ARGV[17])
  if tokens > 0 then
    local day = math.floor(now / 86400000)
    if num(v[14]) == day then tokens = num(v[15]) + tokens end
    put('tok_day', s(day)); put('tok_used', s(tokens))
  end
end
if tonumber(ARGV[1]) ~= gen then
  flush(true)
  return ''
end

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
-- reader prunes by time (the rate rule right below, breaker.view). Adds ``calls`` entries
-- (a failure is never folded: 1) in one ZADD. Returns whether a 16th call is among them.
local function add_call(failed)
  local first = num(v[6])
  local seq = first + calls
  put('seq', s(seq))
  local lazy = math.floor(seq / 16) > math.floor(first / 16)
  if failed == '1' or lazy then
    redis.call('ZREMRANGEBYSCORE', w, '-inf', s(now - window_ms))
  end
  local members = {}
  for i = first + 1, seq do
    members[#members + 1] = s(now)
    members[#members + 1] = s(i) .. ':' .. failed
  end
  redis.call('ZADD', w, unpack(members))
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
      put('consec', '0')
      put('ttl_at', s(now))
      flush(true)
      return ''
    end
    -- Set at ttl_at: the hash outlives it by a week plus a window, the window by two
    -- windows (plus margin), so both outlive this call by their own spans.
    if lazy then redis.call('PEXPIRE', w, ARGV[11]) end
    if consec ~= 0 then put('consec', '0') end
    flush(false)
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
      put('opened', '1'); put('gen', s(gen + 1)); put('consec', s(consec))
      put('trips', s(trips)); put('opened_at', s(now))
      put('open_until', s(now + cooldown(trips))); put('probe_until', '0')
      put('ttl_at', s(now))
      transition = 'opened'
    else
      put('consec', s(consec)); put('gen', s(gen)); put('ttl_at', s(now))
    end
  else
    flush(true)  -- neutral / not charged: only the gate's changes (a Retry-After)
    return ''
  end
else
  gen = gen + 1
  if outcome == 'success' then
    -- ttl_at 0: the next success gives the window this DEL removes its TTL again.
    put('opened', '0'); put('gen', s(gen)); put('consec', '0'); put('trips', '0')
    put('opened_at', '0'); put('open_until', '0'); put('probe_until', '0'); put('ttl_at', '0')
    redis.call('DEL', w)
    transition = 'closed'
  elseif outcome == 'failure' then
    trips = trips + 1
    put('gen', s(gen)); put('consec', s(consec + 1)); put('trips', s(trips))
    put('open_until', s(now + cooldown(trips))); put('probe_until', '0')
    transition = 'reopened'
  else
    put('gen', s(gen)); put('probe_until', '0')
  end
end
flush(true)
return transition
