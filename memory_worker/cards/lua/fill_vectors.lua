-- Fill the vectors remembered cards wait for (§13): a card marked ``vp`` (its row a zero
-- row, searched by words only) gets its fact's vector, loses the mark and leaves VECWAIT. A
-- card no longer live or no longer waiting (a run, a rewrite or a model switch gave it one)
-- leaves VECWAIT; one whose text changed since it was embedded (dedup hash), or whose
-- vector is refused (another model or dimension by now), stays for the next pass.
-- KEYS: see helpers.lua, then [FIRST_EXTRA] = the cards waiting for a vector (``vecwait``).
-- ARGV[3] = JSON {model, items = [[card id, dedup hash embedded, vector index (0: none)]]},
-- ARGV[4..] = the vectors.
-- Python twin: tests/support/lua_twins.py fill_twin.
local p = cjson.decode(ARGV[3])
local missing = missing_scopes()
if missing then return missing end
local VECWAIT = KEYS[FIRST_EXTRA]
vec_model = p.model or ''
local out = {filled = 0, dropped = 0, kept = 0}
preflight({HSET = {CARDS, META}, INCR = {VECVER, VECRW}, RPUSH = {VECIDS}, SETRANGE = {VEC, VECMASK},
  ZREM = {VECWAIT}})
for _, it in ipairs(p.items) do
  local c = load(it[1])
  if not live(c) or not c.vp then
    redis.call('ZREM', VECWAIT, it[1])
    out.dropped = out.dropped + 1
  elseif c.h == it[2] and num(it[3]) > 0 then
    set_vector(c, ARGV[3 + num(it[3])])
    if c.vp then
      out.kept = out.kept + 1
    else
      save(c)
      redis.call('ZREM', VECWAIT, it[1])
      out.filled = out.filled + 1
    end
  else
    out.kept = out.kept + 1
  end
end
if vec_changed then redis.call('INCR', VECVER) end
out.refused = vec_refused
return cjson.encode(out)
