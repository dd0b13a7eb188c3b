
-- KEYS: nk, queued, leases, daily, run, all, status:queued, counters, parked counts, the chat's runs,
--       then the hash of each processing run the caller read (ARGV[10..9 + ARGV[9]])
-- ARGV: nk, id, now, max_queued, max_daily, daily_ttl, bypass_caps, qscore,
--       n (processing ids given), processing ids..., fields...
-- A full queue needs the processing runs' hashes: without them (or when a run was claimed
-- since the caller read them) the script answers 'check' and writes nothing; the caller
-- reads the leases and calls again with their hashes.
local given = tonumber(ARGV[9])
preflight({HINCRBY = {KEYS[8]}, HSET = {KEYS[1], KEYS[5]}, INCR = {KEYS[4]}, EXPIRE = {KEYS[4]},
  ZADD = {KEYS[2], KEYS[6], KEYS[7], KEYS[10]}})
local existing = redis.call('HGET', KEYS[1], ARGV[1])
if existing then
  redis.call('HINCRBY', KEYS[8], 'enqueue:duplicate', 1)
  return {'duplicate', existing}
end
if ARGV[7] ~= '1' then
  -- queued (parked ones included) + processing ...
  local active = redis.call('ZCARD', KEYS[2]) + redis.call('ZCARD', KEYS[3])
  for _, n in ipairs(redis.call('HVALS', KEYS[9])) do active = active + tonumber(n) end
  if active >= tonumber(ARGV[4]) then
    -- ... minus replayed runs being processed: they stay outside the cap until they
    -- complete or fail again (§7). Only counted when full: O(processing runs).
    local slot = {}
    for i = 1, given do slot[ARGV[9 + i]] = i end
    for _, id in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
      local i = slot[id]
      if not i then return {'check', ''} end
      local v = redis.call('HMGET', KEYS[10 + i], 'uncapped', 'attempts')
      if v[1] == '1' and tonumber(v[2] or '0') <= 1 then active = active - 1 end
    end
  end
  if active >= tonumber(ARGV[4]) then
    redis.call('HINCRBY', KEYS[8], 'enqueue:queue_full', 1)
    return {'queue_full', ''}
  end
  if tonumber(redis.call('GET', KEYS[4]) or '0') >= tonumber(ARGV[5]) then
    redis.call('HINCRBY', KEYS[8], 'enqueue:daily_cap', 1)
    return {'daily_cap', ''}
  end
end
local fields = {}
for i = 10 + given, #ARGV do fields[#fields + 1] = ARGV[i] end
redis.call('HSET', KEYS[5], unpack(fields))
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[8], ARGV[2])
redis.call('ZADD', KEYS[6], ARGV[3], ARGV[2])
redis.call('ZADD', KEYS[10], ARGV[3], ARGV[2])
redis.call('ZADD', KEYS[7], ARGV[3], ARGV[2])
if ARGV[7] ~= '1' then
  redis.call('INCR', KEYS[4])
  redis.call('EXPIRE', KEYS[4], ARGV[6])
end
redis.call('HINCRBY', KEYS[8], 'enqueue:enqueued', 1)
return {'enqueued', ARGV[2]}
