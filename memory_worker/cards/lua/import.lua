-- Import (§13): an export's memory into this chat, in one atomic call (nothing or all).
-- KEYS: see helpers.lua (every live card's scope among the active zsets), then one
-- ``episode:<run>`` hash per episode of the plan (found by name).
-- ARGV[3] = plan JSON (memory_worker.cards.import_plan): cards [{c = stored card, live,
-- vec}], present [[id, updated]], episodes [{run, fields, vec, end}], links, authors,
-- retracted (flat field/value lists), seq, model, dim; ARGV[4..] = vectors.
-- Refused before any write (answered {conflict = …}) when a new card's id is taken, a card
-- the plan takes as present changed, a live card's fact is held by another card, or the
-- chat's vectors are of another dimension or model. Python twin:
-- memory_worker.cards.import_plan.import_twin.
local p = cjson.decode(ARGV[3])
local sks = {}
for _, e in ipairs(p.cards) do if e.live == '1' then sks[#sks + 1] = e.c.sk end end
local missing = missing_scopes(sks)
if missing then return missing end
local EP = {}
for i = 1, #KEYS do
  local run = string.match(KEYS[i], '}:episode:(.*)$')
  if run then EP[run] = KEYS[i] end
end
local function conflict(why) return cjson.encode({conflict = why}) end
for _, e in ipairs(p.cards) do
  if redis.call('HEXISTS', CARDS, e.c.id) == 1 then
    return conflict('card ' .. e.c.id .. ' is already another card')
  end
  if e.live == '1' then
    local holder = redis.call('HGET', DEDUP, e.c.h)
    if holder and holder ~= e.c.id then
      return conflict('card ' .. holder .. ' already holds the fact of card ' .. e.c.id)
    end
  end
end
for _, pr in ipairs(p.present) do
  local c = load(pr[1])
  if not c or c.updated ~= pr[2] then return conflict('card ' .. pr[1] .. ' changed') end
end
local dim = num(redis.call('HGET', META, 'dim'))
local model = redis.call('HGET', META, 'model') or ''
if p.vectors == '1' and dim ~= 0 and (dim ~= num(p.dim) or (model ~= '' and model ~= p.model)) then
  return conflict('the chat holds vectors of another model or dimension')
end
vec_model = p.model
local vectors = 0
for _, e in ipairs(p.cards) do
  local c = e.c
  if not blank(e.vec) then
    set_vector(c, ARGV[3 + tonumber(e.vec)])
    if not blank(c.row) then vectors = vectors + 1 end
  end
  if e.live == '1' then index_live(c) end
  save(c)
end
if num(p.seq) > num(redis.call('GET', SEQ)) then redis.call('SET', SEQ, p.seq) end
for _, ep in ipairs(p.episodes) do
  local k = EP[ep.run]
  for i = 1, #ep.fields - 1, 2 do redis.call('HSET', k, ep.fields[i], ep.fields[i + 1]) end
  if not blank(ep.vec) then redis.call('HSET', k, 'emb', ARGV[3 + tonumber(ep.vec)]) end
  redis.call('ZADD', EPISODES, num(ep['end']), ep.run)
end
for i = 1, #p.links - 1, 2 do
  redis.call('HSET', LINKS, p.links[i], maxs(redis.call('HGET', LINKS, p.links[i]) or '', p.links[i + 1]))
end
for i = 1, #p.authors - 1, 2 do redis.call('HSET', AUTHORS, p.authors[i], p.authors[i + 1]) end
for i = 1, #p.retracted - 1, 2 do
  local h = p.retracted[i]
  redis.call('HSET', RETRACTED, h, maxs(redis.call('HGET', RETRACTED, h) or '', p.retracted[i + 1]))
end
if vec_changed then redis.call('INCR', VECVER) end
return cjson.encode({cards = #p.cards, present = #p.present, episodes = #p.episodes,
  vectors = vectors, refused = vec_refused})
