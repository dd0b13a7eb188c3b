-- Forget (§14): one chunk of a user's memory leaves a chat. Every key is in KEYS.
-- KEYS: [1] cards, [2] dedup, [3] expiry, [4] links, [5] vec, [6] vecids, [7] vecmask,
--       [8] vecver, [9] vecrw, [10] meta, [11] episodes, [12] authors, [13] scopes,
--       then the active:<scope> and episode:<run> keys the plan names by index.
-- ARGV[1] = plan JSON: cards [[id, updated stamp, KEYS index of active:<sk>, sk]],
--   links [fields], episodes [[run id, KEYS index]], authors [fields].
-- A card updated since the plan is left alone (answered in `raced`). A card's vector
-- row is swap-removed: the last row moves into the hole (its card's `row` follows) and
-- the freed last row is zeroed, so no byte of a removed row remains (a big string is
-- never copied inside a call: that alone would block for tens of milliseconds).
-- The Python twin of the row removal is forget.PackedRows.remove.
local plan = cjson.decode(ARGV[1])
local out = {cards = 0, vectors = 0, links = 0, episodes = 0, raced = {}}
local dim = tonumber(redis.call('HGET', KEYS[10], 'dim') or '0') or 0
local rows_changed = false
local scopes = {}
local zero_row = string.rep('\0', dim)
local function drop_row(p)
  local last = redis.call('LLEN', KEYS[6]) - 1
  if p > last or p < 0 then return false end
  if p < last then
    local entry = redis.call('LINDEX', KEYS[6], last)
    local moved = string.match(entry, '^([^|]*)')
    redis.call('SETRANGE', KEYS[5], p * dim,
      redis.call('GETRANGE', KEYS[5], last * dim, last * dim + dim - 1))
    redis.call('SETRANGE', KEYS[7], p, redis.call('GETRANGE', KEYS[7], last, last))
    redis.call('LSET', KEYS[6], p, entry)
    local raw = redis.call('HGET', KEYS[1], moved)
    if raw then  -- the row field rewritten in place (a JSON string value holds no bare `"`)
      local row = string.format('"row":"%d"', p)
      redis.call('HSET', KEYS[1], moved, (string.gsub(raw, '"row":"%d*"', row, 1)))
    end
  end
  -- the freed last row is zeroed (no byte of the removed vector stays); the next
  -- row appended reuses its place
  redis.call('SETRANGE', KEYS[5], last * dim, zero_row)
  redis.call('SETRANGE', KEYS[7], last, '\0')
  redis.call('RPOP', KEYS[6])
  return true
end
for _, it in ipairs(plan.cards) do
  local raw = redis.call('HGET', KEYS[1], it[1])
  if raw then
    -- fields read by pattern, not decoded: a card is a flat JSON object of strings whose
    -- values escape every `"`, so `"key":"` only ever matches a key (and it is 10x cheaper)
    if not string.find(raw, '"updated":"' .. it[2] .. '"', 1, true) then
      out.raced[#out.raced + 1] = it[1]
    else
      local id, h = it[1], string.match(raw, '"h":"([^"]*)"')
      local row = string.match(raw, '"row":"(%d+)"')
      redis.call('ZREM', KEYS[tonumber(it[3])], id)
      redis.call('ZREM', KEYS[3], id)
      if h and redis.call('HGET', KEYS[2], h) == id then redis.call('HDEL', KEYS[2], h) end
      if row and dim > 0 and drop_row(tonumber(row)) then
        out.vectors = out.vectors + 1
        rows_changed = true
      end
      redis.call('HDEL', KEYS[1], id)
      scopes[it[4]] = tonumber(it[3])
      out.cards = out.cards + 1
    end
  end
end
for sk, index in pairs(scopes) do
  if redis.call('EXISTS', KEYS[index]) == 0 then redis.call('SREM', KEYS[13], sk) end
end
if rows_changed then
  if redis.call('LLEN', KEYS[6]) == 0 then redis.call('DEL', KEYS[5], KEYS[7]) end
  redis.call('INCR', KEYS[8])
  redis.call('INCR', KEYS[9])
end
for _, f in ipairs(plan.links) do out.links = out.links + redis.call('HDEL', KEYS[4], f) end
for _, e in ipairs(plan.episodes) do
  out.episodes = out.episodes + redis.call('DEL', KEYS[tonumber(e[2])])
  redis.call('ZREM', KEYS[11], e[1])
end
for _, f in ipairs(plan.authors) do redis.call('HDEL', KEYS[12], f) end
if #out.raced == 0 then out.raced = nil end
return cjson.encode(out)
