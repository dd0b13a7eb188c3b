-- Forget (§14): one chunk of a user's memory leaves a chat. Every key is in KEYS.
-- KEYS[1..18]: the chat's fixed keys in the order of memory_worker.keys.CHAT_SCRIPT_KEYS
-- (as every card script; named below as helpers.lua names them), then the vecwait zset,
-- the active:<scope> and episode:<run> keys the plan names by index.
-- ARGV[1] = plan JSON: cards [[id, updated stamp, KEYS index of active:<sk>, sk]],
--   links [fields], episodes [[run id, KEYS index]], authors [fields], vecwait (KEYS index).
-- A card updated since the plan is left alone (answered in `raced`). A card's vector
-- row is swap-removed: the last row moves into the hole (its card's `row` follows) and
-- the freed last row is zeroed, so no byte of a removed row remains (a big string is
-- never copied inside a call: that alone would block for tens of milliseconds).
-- The Python twin of the row removal is forget.PackedRows.remove.
local CARDS, DEDUP, SCOPES, EXPIRY = KEYS[1], KEYS[3], KEYS[4], KEYS[5]
local LINKS, EPISODES, VEC, VECIDS = KEYS[7], KEYS[8], KEYS[9], KEYS[10]
local VECMASK, VECVER, VECRW, META, AUTHORS = KEYS[11], KEYS[12], KEYS[13], KEYS[14], KEYS[16]
local RETRACTED = KEYS[17]
local HISTORY = KEYS[18]  -- §13: a card's history goes with it
local plan = cjson.decode(ARGV[1])
local VECWAIT = KEYS[tonumber(plan.vecwait)]
local out = {cards = 0, vectors = 0, links = 0, episodes = 0, raced = {}}
local dim = tonumber(redis.call('HGET', META, 'dim') or '0') or 0
local rows_changed = false
local scopes = {}
local zero_row = string.rep('\0', dim)
local function drop_row(p)
  local last = redis.call('LLEN', VECIDS) - 1
  if p > last or p < 0 then return false end
  if p < last then
    local entry = redis.call('LINDEX', VECIDS, last)
    local moved = string.match(entry, '^([^|]*)')
    redis.call('SETRANGE', VEC, p * dim,
      redis.call('GETRANGE', VEC, last * dim, last * dim + dim - 1))
    redis.call('SETRANGE', VECMASK, p, redis.call('GETRANGE', VECMASK, last, last))
    redis.call('LSET', VECIDS, p, entry)
    local raw = redis.call('HGET', CARDS, moved)
    if raw then  -- the row field rewritten in place (a JSON string value holds no bare `"`)
      local row = string.format('"row":"%d"', p)
      redis.call('HSET', CARDS, moved, (string.gsub(raw, '"row":"%d*"', row, 1)))
    end
  end
  -- the freed last row is zeroed (no byte of the removed vector stays); the next
  -- row appended reuses its place
  redis.call('SETRANGE', VEC, last * dim, zero_row)
  redis.call('SETRANGE', VECMASK, last, '\0')
  redis.call('RPOP', VECIDS)
  return true
end
-- the active zsets and the episode hashes the plan names (by their index in KEYS)
local PLANNED_ACTIVE, PLANNED_EPISODES = {}, {}
for i, it in ipairs(plan.cards) do PLANNED_ACTIVE[i] = KEYS[tonumber(it[3])] end
for i, e in ipairs(plan.episodes) do PLANNED_EPISODES[i] = KEYS[tonumber(e[2])] end
preflight({ZREM = {PLANNED_ACTIVE, EXPIRY, VECWAIT, EPISODES}, HDEL = {DEDUP, RETRACTED, CARDS, HISTORY, LINKS, AUTHORS},
  HSET = {CARDS}, SETRANGE = {VEC, VECMASK}, LSET = {VECIDS}, RPOP = {VECIDS}, SREM = {SCOPES},
  DEL = {VEC, VECMASK, PLANNED_EPISODES}, INCR = {VECVER, VECRW}})
for _, it in ipairs(plan.cards) do
  local raw = redis.call('HGET', CARDS, it[1])
  if raw then
    -- fields read by pattern, not decoded: a card is a flat JSON object of strings whose
    -- values escape every `"`, so `"key":"` only ever matches a key (and it is 10x cheaper)
    if not string.find(raw, '"updated":"' .. it[2] .. '"', 1, true) then
      out.raced[#out.raced + 1] = it[1]
    else
      local id, h = it[1], string.match(raw, '"h":"([^"]*)"')
      local row = string.match(raw, '"row":"(%d+)"')
      redis.call('ZREM', KEYS[tonumber(it[3])], id)
      redis.call('ZREM', EXPIRY, id)
      redis.call('ZREM', VECWAIT, id)
      if h and redis.call('HGET', DEDUP, h) == id then redis.call('HDEL', DEDUP, h) end
      if h then redis.call('HDEL', RETRACTED, h) end  -- its retraction record goes with it
      if row and dim > 0 and drop_row(tonumber(row)) then
        out.vectors = out.vectors + 1
        rows_changed = true
      end
      redis.call('HDEL', CARDS, id)
      redis.call('HDEL', HISTORY, id)
      scopes[it[4]] = tonumber(it[3])
      out.cards = out.cards + 1
    end
  end
end
for sk, index in pairs(scopes) do
  if redis.call('EXISTS', KEYS[index]) == 0 then redis.call('SREM', SCOPES, sk) end
end
if rows_changed then
  if redis.call('LLEN', VECIDS) == 0 then redis.call('DEL', VEC, VECMASK) end
  redis.call('INCR', VECVER)
  redis.call('INCR', VECRW)
end
for _, f in ipairs(plan.links) do out.links = out.links + redis.call('HDEL', LINKS, f) end
for _, e in ipairs(plan.episodes) do
  out.episodes = out.episodes + redis.call('DEL', KEYS[tonumber(e[2])])
  redis.call('ZREM', EPISODES, e[1])
end
for _, f in ipairs(plan.authors) do redis.call('HDEL', AUTHORS, f) end
if #out.raced == 0 then out.raced = nil end
return cjson.encode(out)
