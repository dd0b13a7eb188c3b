-- Remember (§13): the bot's own word stores a fact now, with no farm call. A live card of
-- the same identity (the dedup hash), or of the same words in the same scope (``known``:
-- found by the caller, checked here unchanged), is observed again and answered; else a new
-- card asserted by hand (``op_by`` = the actor) is created. A fact retracted before is
-- remembered again (its RETRACTED entry goes: the bot's word is newer than the retraction).
-- The card gets the fact's vector when one came and it has none; a card left without one
-- (the embedder down, or another vector space by now) gets a zero row — searched by words,
-- never by meaning — is marked ``vp`` and listed in VECWAIT, until fill_vectors.lua (or any
-- write that gives it an embedder's vector) fills it.
-- Refused before any write: inside a forget of its scope in progress ({forgetting}), or after
-- a forget of the chat that came since the caller read its epoch ({forgotten}).
-- KEYS: see helpers.lua, then [FIRST_EXTRA] = the chat's forgets in progress (``forgetting``),
-- [FIRST_EXTRA + 1] = the cards waiting for a vector (``vecwait``).
-- History (§13): the card's ``created`` or ``observed`` event, with the actor and request id.
-- ARGV[3] = plan JSON {card = the card as codec.card_plan makes it, actor, epoch, dim (a zero
-- row's bytes when the chat has no vector yet), model, vec, known = [id, h] (optional), req},
-- ARGV[4] = the fact's vector (optional).
-- Python twin: tests/support/lua_twins.py remember_twin.
local p = cjson.decode(ARGV[3])
local n = p.card
local missing = missing_scopes({n.sk})
if missing then return missing end
local FORGETTING, VECWAIT = KEYS[FIRST_EXTRA], KEYS[FIRST_EXTRA + 1]
-- §14: a forget's token begins with its scope (``chat`` or ``user:<id>``)
for _, token in ipairs(redis.call('HKEYS', FORGETTING)) do
  local scope = string.match(token, '^([^|]*)')
  if scope == 'chat' or scope == n.sk then return cjson.encode({forgetting = true}) end
end
if num(redis.call('GET', FORGET)) > num(p.epoch) then
  return cjson.encode({forgotten = true})
end
local c = load(redis.call('HGET', DEDUP, n.h))
if not live(c) and type(p.known) == 'table' then
  local k = load(p.known[1])
  if live(k) and k.h == p.known[2] and k.sk == n.sk then c = k end
end
preflight({HDEL = {RETRACTED}, HSET = {CARDS, DEDUP, HISTORY, META}, INCR = {SEQ, VECVER, VECRW},
  RPUSH = {VECIDS}, SADD = {SCOPES}, SETRANGE = {VEC, VECMASK}, ZADD = {EXPIRY, ACTIVE, VECWAIT},
  ZREM = {EXPIRY, VECWAIT}})
local created = false
if live(c) then
  observe_again(c, n)
else
  c = create_card(n)
  c.op_by = p.actor
  created = true
end
if (blank(c.row) or c.vp) and not blank(p.vec) then
  vec_model = p.model or ''
  set_vector(c, ARGV[4])
end
if blank(c.row) then
  vec_model = ''
  local dim = space_dim()
  if dim == 0 then dim = num(p.dim) end
  set_vector(c, string.rep('\0', dim), true)
  if not blank(c.row) then c.vp = '1' end
end
if c.vp then
  redis.call('ZADD', VECWAIT, 'NX', now, c.id)
else
  redis.call('ZREM', VECWAIT, c.id)
end
index_live(c)
save(c)
cause = {via = 'remember', by = p.actor, req = p.req}
if created then history_add(c.id, 'created') else history_add(c.id, 'observed') end
redis.call('HDEL', RETRACTED, n.h)
if vec_changed then redis.call('INCR', VECVER) end
return cjson.encode({id = c.id, created = created, pending = c.vp == '1',
  refused = vec_refused})
