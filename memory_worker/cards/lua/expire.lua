-- KEYS[1] = expiry zset. ARGV[3] = max cards. Expires live cards whose TTL passed.
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
local n = 0
for _, id in ipairs(ids) do
  local c = load(id)
  if live(c) and not blank(c.exp) and num(c.exp) <= num(now) then
    retire(c, 'expired')
    save(c)
    n = n + 1
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
if vec_changed then redis.call('INCR', key('vecver')) end
return n
