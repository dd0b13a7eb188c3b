-- Correct one live card (§10): a new card holding the corrected fact, asserted by hand
-- (``op_by`` = the actor, ``corrects`` = the old id, confidence 1, valid from now, the old
-- card's scope, subject, predicate, sources and expiry), supersedes it: the old card is kept
-- with ``valid_until`` = now and ``sup_by``. When a live card already holds the corrected
-- fact, it supersedes the old one instead. The old fact is recorded in RETRACTED and its row
-- marked withdrawn (older messages do not bring it back, in any words); the corrected one
-- leaves RETRACTED (it is asserted now).
-- History (§13): the old card's ``corrected`` (by the new one), the new card's ``created``
-- (of the old one) or the holder's ``supersedes``, each with the actor and request id.
-- KEYS: see helpers.lua. ARGV[3] = card id, ARGV[4] = plan JSON {fact, object, h, model,
-- actor, vec, req}, ARGV[5] = the corrected fact's vector (optional).
-- Python twin: tests/support/lua_twins.py correct_twin.
local p = cjson.decode(ARGV[4])
local old = load(ARGV[3])
if not old then return cjson.encode({found = false}) end
local missing = missing_scopes({old.sk})
if missing then return missing end
if not live(old) then return cjson.encode({found = true, done = false, status = old.status}) end
if p.h == old.h then
  return cjson.encode({found = true, done = false, status = old.status, id = old.id})
end
vec_model = p.model or ''
cause = {via = 'correct', by = p.actor, req = p.req}
preflight({HDEL = {DEDUP, RETRACTED}, HSET = {CARDS, DEDUP, HISTORY, META, RETRACTED},
  INCR = {SEQ, VECVER, VECRW}, RPUSH = {VECIDS}, SADD = {SCOPES}, SETRANGE = {VEC, VECMASK},
  ZADD = {EXPIRY, ACTIVE}, ZREM = {EXPIRY, ACTIVE}})
local new = load(redis.call('HGET', DEDUP, p.h))
local created = false
if not live(new) then
  new = {id = int(redis.call('INCR', SEQ)), scope = old.scope, sk = old.sk, thread = old.thread,
    user = old.user, type = old.type, subject = old.subject, predicate = old.predicate,
    object = p.object, fact = p.fact, conf = '1.0000', sal = old.sal, obs = '1',
    status = 'active', dur = old.dur, vf = now, obs_at = now, created = now, updated = now,
    exp = old.exp, src = old.src, h = p.h, op_by = p.actor, corrects = old.id}
  if not blank(p.vec) then set_vector(new, ARGV[5]) end
  index_live(new)
  save(new)
  created = true
  history_add(new.id, 'created', old.id)
else
  history_add(new.id, 'supersedes', old.id)
end
retire(old, 'superseded')
withdraw(old)
old.vu = now
old.sup_by = new.id
save(old)
history_add(old.id, 'corrected', new.id)
redis.call('HDEL', RETRACTED, p.h)
record_retraction(old.h)
if vec_changed then redis.call('INCR', VECVER) end
return cjson.encode({found = true, done = true, status = 'active', id = new.id,
  created = created, refused = vec_refused})
