-- Import (§13): one chunk of an export's memory into this chat, all of the chunk or none of it.
-- KEYS: see helpers.lua (every live card's scope among the active zsets), then one
-- ``episode:<run>`` hash per episode of the chunk, in the plan's order (by position).
-- ARGV[3] = chunk plan JSON (memory_worker.cards.import_plan): epoch, retracted and authors
-- (flat field/value lists), seq, cards [{c = stored card, live, vec, wd, hist}], present [[id,
-- updated]], episodes [{run, fields, vec, end}], links (flat), model, dim, vectors, wn;
-- ARGV[4..] = the chunk's vectors.
-- Everything is checked before the first write, so a refusal writes nothing: a forget of the
-- chat since the plan (answered {forgotten}), a key holding the wrong type ({corrupt =
-- its role}), withdrawn marks other than the plan's ``wn`` — a retraction or correction
-- landed since the plan's meaning check ({withdrawn = marks}: planned again) —, a new
-- card's id taken, a card the plan takes as present changed, a live card's fact held by
-- another card, vectors of another dimension or model ({conflict}). A live card whose fact
-- the chat retracted after its newest message is not written (counted). A card whose fact
-- is withdrawn (``wd``: retracted or corrected away) has its row marked withdrawn. Each card
-- written gets its history from the file (``hist``: its events' lines) and an ``imported``
-- event (§13; by the plan's ``by``, the actor).
-- Python twin: tests/support/lua_twins.py import_twin.
local p = cjson.decode(ARGV[3])
local sks = {}
for _, e in ipairs(p.cards) do if e.live == '1' then sks[#sks + 1] = e.c.sk end end
local missing = missing_scopes(sks)
if missing then return missing end
if #KEYS ~= FIRST_EXTRA + #p.episodes - 1 then
  return redis.error_reply('import: KEYS does not hold one episode key per episode')
end
if num(redis.call('GET', FORGET)) > num(p.epoch) then
  return cjson.encode({forgotten = true})
end
-- every key written: its type, or none (a wrong one would fail a command after other writes)
local function wrong_type(key, want)
  local have = redis.call('TYPE', key).ok
  return have ~= 'none' and have ~= want
end
local function wrong_count(key)  -- a counter INCR or a comparison reads
  if wrong_type(key, 'string') then return true end
  local v = redis.call('GET', key) or '0'
  return not string.match(v, '^%d+$') or #v > 15
end
local function corrupt(role) return cjson.encode({corrupt = role}) end
if wrong_type(CARDS, 'hash') then return corrupt('cards') end
if wrong_type(DEDUP, 'hash') then return corrupt('dedup') end
if wrong_type(SCOPES, 'set') then return corrupt('scopes') end
if wrong_type(EXPIRY, 'zset') then return corrupt('expiry') end
if wrong_type(LINKS, 'hash') then return corrupt('links') end
if wrong_type(EPISODES, 'zset') then return corrupt('episodes') end
if wrong_type(VEC, 'string') then return corrupt('vec') end
if wrong_type(VECIDS, 'list') then return corrupt('vecids') end
if wrong_type(VECMASK, 'string') then return corrupt('vecmask') end
if wrong_type(META, 'hash') then return corrupt('meta') end
if wrong_type(AUTHORS, 'hash') then return corrupt('authors') end
if wrong_type(RETRACTED, 'hash') then return corrupt('retracted') end
if wrong_type(HISTORY, 'hash') then return corrupt('history') end
if wrong_count(SEQ) then return corrupt('seq') end
if wrong_count(VECVER) then return corrupt('vecver') end
if wrong_count(VECRW) then return corrupt('vecrw') end
for _, sk in ipairs(sks) do
  if wrong_type(ACTIVE[sk], 'zset') then return corrupt('active') end
end
for i = FIRST_EXTRA, #KEYS do
  if wrong_type(KEYS[i], 'hash') then return corrupt('episode') end
end
local changed = withdrawn_changed(p.wn)
if changed then return changed end
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
local adds = 0
for _, e in ipairs(p.cards) do if not blank(e.vec) then adds = adds + 1 end end
if dim == 0 then dim = num(p.dim) end
if (redis.call('LLEN', VECIDS) + adds) * dim > 536870912 then  -- a string's largest size
  return conflict('the chat\'s vectors would pass 512 MB')
end
-- writes: retractions and authorship first (a chunk after them never holds a card whose
-- retraction or authors are missing), the counter, then cards, episodes, links; each
-- asked of the ACL before the first (preflight)
local EPISODE_KEYS = {}
for i = 1, #p.episodes do EPISODE_KEYS[i] = KEYS[FIRST_EXTRA + i - 1] end
preflight({HSET = {AUTHORS, CARDS, DEDUP, HISTORY, LINKS, META, RETRACTED, EPISODE_KEYS},
  INCR = {VECVER, VECRW}, RPUSH = {VECIDS}, SADD = {SCOPES}, SET = {SEQ}, SETRANGE = {VEC, VECMASK},
  ZADD = {EXPIRY, EPISODES, ACTIVE}, ZREM = {EXPIRY}})
for i = 1, #p.retracted - 1, 2 do
  local h = p.retracted[i]
  redis.call('HSET', RETRACTED, h, maxs(redis.call('HGET', RETRACTED, h) or '', p.retracted[i + 1]))
end
for i = 1, #p.authors - 1, 2 do redis.call('HSET', AUTHORS, p.authors[i], p.authors[i + 1]) end
if num(p.seq) > num(redis.call('GET', SEQ)) then redis.call('SET', SEQ, p.seq) end
vec_model = p.model
cause = {via = 'import', by = p.by}
local vectors, cards, retracted = 0, 0, 0
for _, e in ipairs(p.cards) do
  local c = e.c
  if e.live == '1' and retracted_after(c.h, c.obs_at) then
    retracted = retracted + 1
  else
    if not blank(e.vec) then
      set_vector(c, ARGV[3 + tonumber(e.vec)])
      if not blank(c.row) then vectors = vectors + 1 end
    end
    if e.wd == '1' then withdraw(c) end
    if e.live == '1' then index_live(c) end
    save(c)
    if not blank(e.hist) then redis.call('HSET', HISTORY, c.id, e.hist) end
    history_add(c.id, 'imported')
    cards = cards + 1
  end
end
for i, ep in ipairs(p.episodes) do
  local k = EPISODE_KEYS[i]
  for j = 1, #ep.fields - 1, 2 do redis.call('HSET', k, ep.fields[j], ep.fields[j + 1]) end
  if not blank(ep.vec) then redis.call('HSET', k, 'emb', ARGV[3 + tonumber(ep.vec)]) end
  redis.call('ZADD', EPISODES, num(ep['end']), ep.run)
end
for i = 1, #p.links - 1, 2 do
  redis.call('HSET', LINKS, p.links[i], maxs(redis.call('HGET', LINKS, p.links[i]) or '', p.links[i + 1]))
end
if vec_changed then redis.call('INCR', VECVER) end
return cjson.encode({cards = cards, present = #p.present, episodes = #p.episodes,
  vectors = vectors, refused = vec_refused, retracted = retracted})
