-- KEYS: see helpers.lua. ARGV[3] = max cards. Expires live cards whose TTL passed.
local missing = missing_scopes()
if missing then return missing end
cause = {via = 'maintenance', by = 'maintenance'}
local ids = redis.call('ZRANGEBYSCORE', EXPIRY, '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
preflight({HDEL = {DEDUP}, HSET = {CARDS, HISTORY}, INCR = {VECVER}, SETRANGE = {VECMASK},
  ZREM = {EXPIRY, ACTIVE}})
local n = 0
for _, id in ipairs(ids) do
  local c = load(id)
  if live(c) and not blank(c.exp) and num(c.exp) <= num(now) then
    retire(c, 'expired')
    save(c)
    history_add(c.id, 'expired')
    n = n + 1
  else
    redis.call('ZREM', EXPIRY, id)
  end
end
if vec_changed then redis.call('INCR', VECVER) end
return n
