-- Retract one card (§10): withdrawn by an operator or the bot. Kept with its text and status
-- ``retracted`` (who and why stamped on it), out of every live index, its vector row marked
-- withdrawn (found by meaning, not searched);
-- its fact is recorded in RETRACTED, so a run of messages older than now does not learn it
-- again (apply.lua), while a newer message restating it does.
-- History (§13): the card's ``retracted`` event (the actor, the request id; never the reason).
-- KEYS: see helpers.lua. ARGV[3] = card id, ARGV[4] = actor, ARGV[5] = reason, ARGV[6] = the
-- caller's request id ('' or absent: none).
-- Python twin: tests/support/lua_twins.py retract_twin.
local c = load(ARGV[3])
if not c then return cjson.encode({found = false}) end
local missing = missing_scopes({c.sk})
if missing then return missing end
local was = c.status
if was == 'retracted' then
  return cjson.encode({found = true, done = false, status = was, id = c.id, h = c.h})
end
preflight({HDEL = {DEDUP}, HSET = {CARDS, HISTORY, RETRACTED}, INCR = {VECVER}, SETRANGE = {VECMASK},
  ZREM = {EXPIRY, ACTIVE}})
retire(c, 'retracted')
withdraw(c)
c.ret_by = ARGV[4]
c.ret_why = ARGV[5]
save(c)
cause = {via = 'retract', by = ARGV[4], req = ARGV[6]}
history_add(c.id, 'retracted')
record_retraction(c.h)
if vec_changed then redis.call('INCR', VECVER) end
return cjson.encode({found = true, done = true, status = was, id = c.id})
