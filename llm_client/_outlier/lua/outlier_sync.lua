-- outlier.sync — count a walker's outcomes, then read each target's window and standing.
-- KEYS: the targets' outlier hashes. ARGV: now, bucket_ms, buckets, ttl, then per target
-- the successes and failures to add (0 0: read only). A slot holding an older bucket
-- restarts (fields b<slot>, s<slot>, f<slot>). Returns per target
-- {successes, failures, ejected until, times} over the buckets of the window ending now.
local now, bucket_ms, n = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local bucket = math.floor(now / bucket_ms)
local fields = {'until', 'times'}
for slot = 0, n - 1 do
  fields[#fields + 1] = 'b' .. slot
  fields[#fields + 1] = 's' .. slot
  fields[#fields + 1] = 'f' .. slot
end
preflight({HINCRBY = {KEYS}, HSET = {KEYS}, PEXPIRE = {KEYS}})
local out = {}
for i = 1, #KEYS do
  local ds, df = tonumber(ARGV[3 + 2 * i]), tonumber(ARGV[4 + 2 * i])
  if ds > 0 or df > 0 then
    local slot = bucket % n
    if num(redis.call('HGET', KEYS[i], 'b' .. slot)) == bucket then
      redis.call('HINCRBY', KEYS[i], 's' .. slot, ds)
      redis.call('HINCRBY', KEYS[i], 'f' .. slot, df)
    else
      redis.call('HSET', KEYS[i], 'b' .. slot, s(bucket), 's' .. slot, s(ds), 'f' .. slot, s(df))
    end
    redis.call('PEXPIRE', KEYS[i], ARGV[4])
  end
  local v = redis.call('HMGET', KEYS[i], unpack(fields))
  local ok, bad = 0, 0
  for slot = 0, n - 1 do
    local b = v[3 + 3 * slot]
    if b and tonumber(b) > bucket - n and tonumber(b) <= bucket then
      ok = ok + num(v[4 + 3 * slot])
      bad = bad + num(v[5 + 3 * slot])
    end
  end
  out[i] = {ok, bad, num(v[1]), num(v[2])}
end
return out
