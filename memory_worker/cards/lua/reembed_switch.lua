-- The switch-over of a re-embedding pass: the new matrix becomes the chat's, in one step.
-- KEYS: 1 rebuild, 2 seq, 3 dedup, 4 nvech, 5 nvec, 6 vec, 7 vecids, 8 meta, 9 vecrw,
-- 10 vecver.
-- ARGV: 1 model, 2 most stale ids answered.
-- Refuses while the pass is behind ({'behind', seq}: cards were added after the cursor) or
-- while a live card lacks a new row of its current text ({'stale', id...}: written during
-- the pass); the caller embeds those and tries again. Readers see the old matrix up to
-- here and the new one after (vecrw forces a full reload, vecver tells them to look).
if redis.call('HGET', KEYS[1], 'model') ~= ARGV[1] then return {'gone'} end
local seq = redis.call('GET', KEYS[2]) or '0'
if (tonumber(redis.call('HGET', KEYS[1], 'cursor')) or 0) < (tonumber(seq) or 0) then
  return {'behind', seq}
end
local most = tonumber(ARGV[2])
local stale = {'stale'}
local live = redis.call('HGETALL', KEYS[3])
for i = 1, #live, 2 do
  if redis.call('HGET', KEYS[4], live[i + 1]) ~= live[i] then
    stale[#stale + 1] = live[i + 1]
    if #stale > most then break end
  end
end
if #stale > 1 then return stale end
preflight({SETRANGE = {KEYS[5]}, RENAME = {KEYS[5], KEYS[6]}, DEL = {KEYS[1], KEYS[4], KEYS[5], KEYS[6]},
  HSET = {KEYS[8]}, INCR = {KEYS[9], KEYS[10]}})
local ndim = tonumber(redis.call('HGET', KEYS[1], 'dim'))
local rows = redis.call('LLEN', KEYS[7])
if rows > 0 then
  -- every row present (trailing retired cards were never written): readers size by it
  if redis.call('STRLEN', KEYS[5]) < rows * ndim then
    redis.call('SETRANGE', KEYS[5], rows * ndim - 1, '\0')
  end
  redis.call('RENAME', KEYS[5], KEYS[6])
else
  redis.call('DEL', KEYS[5], KEYS[6])
end
redis.call('HSET', KEYS[8], 'dim', string.format('%d', ndim), 'model', ARGV[1])
redis.call('INCR', KEYS[9])
redis.call('INCR', KEYS[10])
redis.call('DEL', KEYS[1], KEYS[4])
return {'switched'}
