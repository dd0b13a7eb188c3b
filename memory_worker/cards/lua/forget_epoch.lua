-- Forget (§14): raise a chat's forget epoch to ARGV[1] (never lower it).
-- KEYS[1] = the chat's forget epoch. Returns the epoch now in force.
local have = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
local want = tonumber(ARGV[1]) or 0
if want > have then
  redis.call('SET', KEYS[1], ARGV[1])
  return want
end
return have
