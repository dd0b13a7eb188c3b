-- One step of a re-embedding pass: new-model rows for some cards, written beside the chat's
-- matrix (nvec, same row numbers) while readers keep using the old one.
-- KEYS: 1 rebuild, 2 cards, 3 vec, 4 vecids, 5 vecmask, 6 vecver, 7 meta, 8 nvec, 9 nvech.
-- ARGV: 1 model, 2 cursor expected ('' = a redo: the cursor is not checked or moved),
-- 3 cursor after this step, 4 JSON [[card id, dedup hash embedded], ...], 5.. one blob each.
-- A card neither live nor withdrawn (its row's vecmask byte 2: retracted or corrected away,
-- §10), or whose text changed since it was read (dedup hash), is skipped (the switch finds a
-- live one). A live card without a row (its vector was refused or missing) gets one: a zero
-- row in the old matrix (unsearchable there), its vector in the new one. A withdrawn card's
-- row gets its vector in the new matrix (matched by meaning there, as it was here).
-- Answers {state, done}: 'ok', or 'stale' when another step moved the pass meanwhile.
if redis.call('HGET', KEYS[1], 'model') ~= ARGV[1] then return {'stale', '0'} end
if ARGV[2] ~= '' and redis.call('HGET', KEYS[1], 'cursor') ~= ARGV[2] then
  return {'stale', '0'}
end
local ndim = tonumber(redis.call('HGET', KEYS[1], 'dim'))
local odim = tonumber(redis.call('HGET', KEYS[7], 'dim') or '0') or 0
local items = cjson.decode(ARGV[4])
local done, grown = 0, false
preflight({RPUSH = {KEYS[4]}, SETRANGE = {KEYS[3], KEYS[5], KEYS[8]}, HSET = {KEYS[1], KEYS[2], KEYS[9]},
  INCR = {KEYS[6]}, HINCRBY = {KEYS[1]}})
for i, item in ipairs(items) do
  local raw = redis.call('HGET', KEYS[2], item[1])
  local blob = ARGV[4 + i]
  if raw and #blob == ndim and odim > 0 then
    local c = cjson.decode(raw)
    local live = c.status == 'active' or c.status == 'competing'
    local withdrawn = not live and c.row ~= nil and c.row ~= ''
      and redis.call('GETRANGE', KEYS[5], tonumber(c.row), tonumber(c.row)) == '\2'
    if (live or withdrawn) and c.h == item[2] then
      if c.row == nil or c.row == '' then
        local n = redis.call('RPUSH', KEYS[4], c.id .. '|' .. c.sk)
        c.row = string.format('%d', n - 1)
        redis.call('SETRANGE', KEYS[3], (n - 1) * odim, string.rep('\0', odim))
        redis.call('SETRANGE', KEYS[5], n - 1, '\1')
        redis.call('HSET', KEYS[2], c.id, cjson.encode(c))
        grown = true
      end
      redis.call('SETRANGE', KEYS[8], tonumber(c.row) * ndim, blob)
      redis.call('HSET', KEYS[9], c.id, c.h)
      done = done + 1
    end
  end
end
if grown then redis.call('INCR', KEYS[6]) end
if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'cursor', ARGV[3]) end
redis.call('HINCRBY', KEYS[1], 'done', done)
return {'ok', tostring(done)}
