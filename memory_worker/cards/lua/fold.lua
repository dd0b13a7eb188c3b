-- KEYS: see helpers.lua. ARGV[3] = plan JSON {groups, demote_delta, epoch?}, ARGV[4..] = vectors.
local missing = missing_scopes()
if missing then return missing end
local plan = cjson.decode(ARGV[3])
-- §14: a merge read before a forget of the chat writes nothing (its text may hold forgotten facts)
if not blank(plan.epoch) and num(redis.call('GET', FORGET)) > num(plan.epoch) then
  return cjson.encode({folded = 0, rewritten = 0, demoted = 0, stamped = 0, forgotten = true})
end
cause = {via = 'maintenance', by = 'maintenance'}
local function blob(i) if blank(i) then return nil end return ARGV[3 + tonumber(i)] end
local delta = num(plan.demote_delta)
local counts = {folded = 0, rewritten = 0, demoted = 0, stamped = 0}
preflight({HDEL = {DEDUP}, HSET = {CARDS, DEDUP, HISTORY, META}, INCR = {VECVER, VECRW},
  RPUSH = {VECIDS}, SADD = {SCOPES}, SETRANGE = {VEC, VECMASK}, ZADD = {EXPIRY, ACTIVE},
  ZREM = {EXPIRY, ACTIVE}})
for _, g in ipairs(plan.groups) do
  vec_model = ''
  if type(g.model) == 'string' then vec_model = g.model end
  local s = load(g.survivor)
  if live(s) then
    for _, id in ipairs(g.absorbed) do
      local c = load(id)
      if live(c) and c.id ~= s.id then
        fold(c, s)
        s = load(s.id)
        counts.folded = counts.folded + 1
      end
    end
    if not blank(g.text) then
      s = rewrite(s, g.text, g.h, blob(g.vec))
      counts.rewritten = counts.rewritten + 1
    end
  end
  for _, id in ipairs(g.demote) do
    local c = load(id)
    if live(c) then
      c.conf = fmt(math.max(0, num(c.conf) - delta))
      c.updated = now
      save(c)
      counts.demoted = counts.demoted + 1
    end
  end
  for _, id in ipairs(g.stamp) do
    local c = load(id)
    if c then
      c.merge_at = now
      save(c)
      counts.stamped = counts.stamped + 1
    end
  end
end
if vec_changed then redis.call('INCR', VECVER) end
counts.refused = vec_refused
return cjson.encode(counts)
