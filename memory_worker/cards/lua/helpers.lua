-- Helpers shared by every card script. Every key comes from KEYS (never built here, so each
-- script is correct on Redis Cluster), and every key's role is its position in KEYS, never a
-- pattern on its name (a run id or a scope may spell anything): KEYS[1..18] = the chat's fixed
-- key set in the order of memory_worker.keys.CHAT_SCRIPT_KEYS (a new per-chat key: append it
-- there and name it here), then one ``active:<scope>`` zset per scope the chat uses (and the
-- write's own), then the script's own keys (apply: the run's ``episode:<run>`` hash).
-- ARGV[1] = the layout of KEYS (memory_worker.keys.Keys.chat_script_layout): {chat, fixed =
-- how many fixed keys, scopes = the scope of each active zset after them, in order, hmax =
-- the events of a card's history kept};
-- ARGV[2] = now (ms).
local LAYOUT = cjson.decode(ARGV[1])
local now = ARGV[2]
local CARDS, SEQ, DEDUP, SCOPES, EXPIRY = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local RUNS, LINKS, EPISODES, VEC, VECIDS = KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10]
local VECMASK, VECVER, VECRW, META = KEYS[11], KEYS[12], KEYS[13], KEYS[14]
local FORGET, AUTHORS = KEYS[15], KEYS[16]  -- §14: the forget epoch, message authors
-- §10: dedup hash → when (ms) its fact was last retracted (or corrected away)
local RETRACTED = KEYS[17]
-- §13: card id → its history, a JSON list of events (memory_worker.cards.history)
local HISTORY = KEYS[18]
local HISTORY_MAX = math.max(2, math.floor(tonumber(LAYOUT.hmax) or 32))
-- scope → its active zset, by position; FIRST_EXTRA: the first of the script's own keys
local ACTIVE = {}
for i, sk in ipairs(LAYOUT.scopes) do ACTIVE[sk] = KEYS[LAYOUT.fixed + i] end
local FIRST_EXTRA = LAYOUT.fixed + #LAYOUT.scopes + 1
local EPISODE = KEYS[FIRST_EXTRA]
local vec_changed = false
-- id of the model that made this write's vectors ('' = unknown); set by each script
local vec_model = ''
local vec_refused = 0

-- Before any write: every scope the chat uses (any card a script loads is in one of them)
-- and every scope in ``extra`` must have its active zset in KEYS. Nil when they do; else the
-- reply that names the missing scopes (the caller passes them and calls again).
local function missing_scopes(extra)
  local missing = {}
  for _, sk in ipairs(redis.call('SMEMBERS', SCOPES)) do
    if not ACTIVE[sk] then missing[#missing + 1] = sk end
  end
  for _, sk in ipairs(extra or {}) do
    if not ACTIVE[sk] then missing[#missing + 1] = sk end
  end
  if #missing == 0 then return nil end
  return cjson.encode({missing = missing})
end

local function num(s) return tonumber(s) or 0 end
local function fmt(x) return string.format('%.4f', x) end
local function int(x) return string.format('%d', x) end
local function blank(s) return not s or s == '' end
local function maxs(a, b)
  if blank(a) then return b end
  if blank(b) then return a end
  if num(a) >= num(b) then return a end
  return b
end
local function mins(a, b)
  if blank(a) then return b end
  if blank(b) then return a end
  if num(a) <= num(b) then return a end
  return b
end
-- expiry of two merged facts: the durable one wins ('' = never expires)
local function exp_merge(a, b)
  if blank(a) or blank(b) then return '' end
  return maxs(a, b)
end
-- union of two comma lists of message ids, numerically sorted, last 64 kept
local function union(a, b)
  local seen, out = {}, {}
  for s in string.gmatch((a or '') .. ',' .. (b or ''), '[^,]+') do
    if not seen[s] then seen[s] = true; out[#out + 1] = s end
  end
  table.sort(out, function(x, y) return num(x) < num(y) end)
  if #out > 64 then
    local keep = {}
    for i = #out - 63, #out do keep[#keep + 1] = out[i] end
    out = keep
  end
  return table.concat(out, ',')
end

-- §10: a fact retracted after ``seen`` (ms: its newest source message) is not learned
-- again; a message newer than the retraction restates it (learned). Python twin:
-- memory_worker.cards.corrections.relearn_refused.
local function retracted_after(h, seen)
  if blank(h) then return false end
  local at = redis.call('HGET', RETRACTED, h)
  return at ~= false and num(seen) < num(at)
end

-- record that the fact of hash ``h`` was withdrawn at ``now`` (the latest time is kept)
local function record_retraction(h)
  if blank(h) then return end
  redis.call('HSET', RETRACTED, h, maxs(redis.call('HGET', RETRACTED, h) or '', now))
end

-- §10: a withdrawn fact (retracted, or corrected away) keeps its vector row marked 2, so a
-- card stating it in other words, scope or language is found by meaning
-- (memory_worker.cards.withdrawn); call after retire
local function withdraw(c)
  if not blank(c.row) then redis.call('SETRANGE', VECMASK, num(c.row), '\2') end
end

-- the withdrawn marks a run's meaning check saw (``wn``) are still the chat's: nil; else the
-- reply that sends the write back to check again (before any write)
local function withdrawn_changed(seen)
  if blank(seen) then return nil end
  local _, marks = string.gsub(redis.call('GET', VECMASK) or '', '\2', '')
  if marks == num(seen) then return nil end
  return cjson.encode({withdrawn = marks})
end

-- what caused this script's changes, stamped on each history event (each script sets it):
-- via (run, remember, correct, retract, import, maintenance), by (the actor), run (a run's
-- id), req (the caller's request id)
local cause = {}

-- §13: one event of card ``id``'s history: kind ``k``, when (``at``, ms), the cause, the other
-- card (``card``: the one superseding it, the one it supersedes…). A history is its events'
-- JSON objects, one a line (each ends with a newline; cjson escapes any in a value), so an
-- event is appended without decoding the others. The first event (how the card began) and
-- the newest HISTORY_MAX - 1 are kept. A stored value that does not end with a newline (none
-- a script writes) starts again. Python twin: chat_state.Write.history_add.
local function history_add(id, kind, other)
  local ev = {}
  ev['k'] = kind  -- (not a table constructor: the KEYS checker reads ``k =`` as a local)
  ev['at'] = now
  for key, v in pairs(cause) do
    if not blank(v) then ev[key] = v end
  end
  if not blank(other) then ev.card = other end
  local raw = redis.call('HGET', HISTORY, id)
  if not raw or string.sub(raw, -1) ~= '\n' then raw = '' end
  raw = raw .. cjson.encode(ev) .. '\n'
  local _, n = string.gsub(raw, '\n', '')
  if n > HISTORY_MAX then
    local first = string.find(raw, '\n', 1, true)
    local cut = first
    for _ = 1, n - HISTORY_MAX do cut = string.find(raw, '\n', cut + 1, true) end
    raw = string.sub(raw, 1, first) .. string.sub(raw, cut + 1)
  end
  redis.call('HSET', HISTORY, id, raw)
end

local function load(id)
  if blank(id) then return nil end
  local raw = redis.call('HGET', CARDS, id)
  if not raw then return nil end
  return cjson.decode(raw)
end
local function save(c) redis.call('HSET', CARDS, c.id, cjson.encode(c)) end
local function live(c) return c ~= nil and (c.status == 'active' or c.status == 'competing') end

-- scopes this script already added to SCOPES (one SADD per scope, not per card)
local scoped = {}

-- (re)write the indexes of a live card (a new card's id may still sit in EXPIRY: a chat
-- forgotten chunk by chunk can lose its SEQ before its expiry zset, so the ZREM stays)
local function index_live(c)
  redis.call('ZADD', ACTIVE[c.sk], num(c.obs_at), c.id)
  if not scoped[c.sk] then
    redis.call('SADD', SCOPES, c.sk)
    scoped[c.sk] = true
  end
  redis.call('HSET', DEDUP, c.h, c.id)
  if blank(c.exp) then
    redis.call('ZREM', EXPIRY, c.id)
  else
    redis.call('ZADD', EXPIRY, num(c.exp), c.id)
  end
end

-- take a card out of every live index and give it a final status (kept, never deleted)
local function retire(c, status)
  redis.call('ZREM', ACTIVE[c.sk], c.id)
  if redis.call('HGET', DEDUP, c.h) == c.id then redis.call('HDEL', DEDUP, c.h) end
  redis.call('ZREM', EXPIRY, c.id)
  if not blank(c.row) then
    redis.call('SETRANGE', VECMASK, num(c.row), '\0')
    vec_changed = true
  end
  c.status = status
  c.retracted = now
  c.updated = now
end

-- store (or overwrite) a card's vector row. The chat's first vector fixes its space
-- (meta dim + model); a vector of another dimension or model is refused (counted).
-- own = the blob is a row of this chat already (a fold copies it): no model check.
-- META's dim and model as this script last read or wrote them (nil: not read yet)
local meta_dim, meta_model = nil, nil
local function space_dim()
  if meta_dim == nil then meta_dim = num(redis.call('HGET', META, 'dim')) end
  return meta_dim
end
local function adopt_model(model)
  redis.call('HSET', META, 'model', model)
  meta_model = model
end

local function set_vector(c, blob, own)
  if blob == nil or #blob == 0 then return end
  local dim = space_dim()
  if dim == 0 then
    dim = #blob
    redis.call('HSET', META, 'dim', int(dim))
    meta_dim = dim
    if vec_model ~= '' then adopt_model(vec_model) end
  end
  if #blob ~= dim then vec_refused = vec_refused + 1; return end
  if not own then
    if meta_model == nil then meta_model = redis.call('HGET', META, 'model') or '' end
    local have = meta_model
    if have == '' then
      -- a chat from before models were recorded: the first named model adopts it
      if vec_model ~= '' then adopt_model(vec_model) end
    elseif have ~= vec_model then
      vec_refused = vec_refused + 1
      return
    end
  end
  if blank(c.row) then
    local n = redis.call('RPUSH', VECIDS, c.id .. '|' .. c.sk)
    c.row = int(n - 1)
  else
    redis.call('INCR', VECRW)
  end
  redis.call('SETRANGE', VEC, num(c.row) * dim, blob)
  local flag = '\0'
  if live(c) then flag = '\1' elseif c.status == 'retracted' then flag = '\2' end
  redis.call('SETRANGE', VECMASK, num(c.row), flag)
  -- an embedder's vector: the card no longer waits for one (remember.lua's zero row)
  if not own then c.vp = nil end
  vec_changed = true
end

-- a new live card of a write's fact ``n`` (a run's planned card, or a remembered one: the
-- shape of memory_worker.cards.codec.card_plan), with the chat's next id; its cause
-- (``run``, or ``op_by`` for a card asserted by hand) is the caller's to stamp
local function create_card(n)
  return {id = int(redis.call('INCR', SEQ)), scope = n.scope, sk = n.sk, thread = n.thread,
    user = n.user, type = n.type, subject = n.subject, predicate = n.predicate,
    object = n.object, fact = n.fact, conf = n.conf, sal = n.sal, obs = '1',
    status = 'active', dur = n.dur, vf = n.vf, obs_at = n.obs_at, created = now,
    updated = now, exp = n.exp, src = n.src, h = n.h}
end

-- a live card observed again by a write stating its fact ``n`` (a run's card, or a
-- remember): the higher scores, one more observation, the wider validity, the durable
-- expiry, the union of the sources
local function observe_again(c, n)
  c.conf = maxs(c.conf, n.conf)
  c.sal = maxs(c.sal, n.sal)
  c.obs = int(num(c.obs) + 1)
  c.vf = mins(c.vf, n.vf)
  c.obs_at = maxs(c.obs_at, n.obs_at)
  c.exp = exp_merge(c.exp, n.exp)
  c.src = union(c.src, n.src)
  c.updated = now
end

local function row_blob(c)
  if blank(c.row) then return nil end
  local dim = space_dim()
  if dim == 0 then return nil end
  local start = num(c.row) * dim
  return redis.call('GETRANGE', VEC, start, start + dim - 1)
end

-- fold card src into card dst (both live, freshly loaded); src ends 'merged'
local function fold(src, dst)
  dst.conf = maxs(dst.conf, src.conf)
  dst.sal = maxs(dst.sal, src.sal)
  dst.obs = int(num(dst.obs) + num(src.obs))
  dst.vf = mins(dst.vf, src.vf)
  dst.obs_at = maxs(dst.obs_at, src.obs_at)
  dst.exp = exp_merge(dst.exp, src.exp)
  dst.src = union(dst.src, src.src)
  dst.updated = now
  if blank(dst.row) then set_vector(dst, row_blob(src), true) end
  retire(src, 'merged')
  src.merged_into = dst.id
  save(src)
  index_live(dst)
  save(dst)
  history_add(src.id, 'merged', dst.id)
  history_add(dst.id, 'absorbed', src.id)
end

-- rewrite a live card's fact text; if another live card already holds the new
-- text, the card is folded into that one instead. Returns the holder.
local function rewrite(c, text, h, blob)
  if blank(text) then return c end
  if not blank(h) and h ~= c.h then
    local other = load(redis.call('HGET', DEDUP, h))
    if live(other) and other.id ~= c.id then
      fold(c, other)
      return other
    end
    if redis.call('HGET', DEDUP, c.h) == c.id then redis.call('HDEL', DEDUP, c.h) end
    c.h = h
  end
  c.fact = text
  c.updated = now
  if not blank(c.row) then
    -- its row's text changed (whatever becomes of its vector): readers re-index the chat
    redis.call('INCR', VECRW)
    vec_changed = true
  end
  set_vector(c, blob)
  index_live(c)
  save(c)
  history_add(c.id, 'rewritten')
  return c
end
