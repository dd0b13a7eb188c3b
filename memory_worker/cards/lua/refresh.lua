-- KEYS = vecver, vecrw, meta, vec, vecmask, vecids (one chat's). ARGV[1] = chat id
-- (informational), ARGV[2] = cached version, ARGV[3] = cached rows,
-- ARGV[4] = cached row-rewrite counter (``vecrw``). Answers {version} when the cache is
-- current; {version, 'full'} when it must be rebuilt (empty, or a row was rewritten);
-- otherwise the delta: {version, rewrites, dim, first new row, mask, new rows, new ids,
-- model}. (The model only changes together with ``vecver``.)
-- (A full matrix is read with plain GETs: megabytes are cheaper outside Lua.)
local version = redis.call('GET', KEYS[1]) or '0'
if version == ARGV[2] then return {version} end
local rewrites = redis.call('GET', KEYS[2]) or '0'
local dim = tonumber(redis.call('HGET', KEYS[3], 'dim') or '0') or 0
local from = tonumber(ARGV[3]) or 0
if rewrites ~= ARGV[4] or dim == 0 or from == 0 then return {version, 'full'} end
local rows = redis.call('GETRANGE', KEYS[4], from * dim, -1)
local mask = redis.call('GET', KEYS[5]) or ''
local ids = redis.call('LRANGE', KEYS[6], from, -1)
local model = redis.call('HGET', KEYS[3], 'model') or ''
return {version, rewrites, tostring(dim), tostring(from), mask, rows, ids, model}
