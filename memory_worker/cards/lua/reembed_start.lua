-- Start (or resume) re-embedding a chat's cards with another model (§16, memory_worker.upkeep.reembed).
-- KEYS: 1 rebuild HASH, 2 meta HASH, 3 nvec STRING, 4 nvech HASH.
-- ARGV: 1 model, 2 dimension, 3 now (ms), 4 live cards (total, for progress).
-- Answers {state, cursor, done}: 'current' (the chat already uses the model), 'empty' (no
-- vector space yet: the first write fixes it), 'resumed' (a pass for this model exists) or
-- 'started' (a fresh pass; one for another model is discarded).
local model, dim = ARGV[1], ARGV[2]
preflight({DEL = {KEYS[1], KEYS[3], KEYS[4]}, HSET = {KEYS[1]}})
local have = redis.call('HGET', KEYS[2], 'model') or ''
local have_dim = redis.call('HGET', KEYS[2], 'dim') or '0'
if have_dim == '0' then return {'empty', '0', '0'} end
if have == model and have_dim == dim then
  redis.call('DEL', KEYS[1], KEYS[3], KEYS[4])
  return {'current', '0', '0'}
end
if redis.call('HGET', KEYS[1], 'model') == model and redis.call('HGET', KEYS[1], 'dim') == dim then
  return {'resumed', redis.call('HGET', KEYS[1], 'cursor') or '0',
    redis.call('HGET', KEYS[1], 'done') or '0'}
end
redis.call('DEL', KEYS[1], KEYS[3], KEYS[4])
redis.call('HSET', KEYS[1], 'model', model, 'dim', dim, 'cursor', '0', 'done', '0',
  'total', ARGV[4], 'started', ARGV[3], 'from_model', have)
return {'started', '0', '0'}
