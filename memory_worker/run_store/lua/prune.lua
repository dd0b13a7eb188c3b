
-- KEYS: status:completed, status:skipped, all, natural-key expiry
-- ARGV: before_ms, limit, run_prefix, natural_key_retention_ms, chat_runs_prefix
-- The natural-key index keeps the entry until natural_key_retention after the run was
-- enqueued (_PRUNE_NATURAL_KEYS drops it then): the same slice stays a duplicate that long.
local n = 0
for i = 1, 2 do
  local ids = redis.call('ZRANGEBYSCORE', KEYS[i], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
  for _, id in ipairs(ids) do
    local rk = ARGV[3] .. id
    local v = redis.call('HMGET', rk, 'nk', 'created_at', 'chat_id')
    if v[1] then
      redis.call('ZADD', KEYS[4], tonumber(v[2] or '0') + tonumber(ARGV[4]), v[1] .. ' ' .. id)
    end
    redis.call('DEL', rk, rk .. ':errors')
    redis.call('ZREM', KEYS[i], id)
    redis.call('ZREM', KEYS[3], id)
    if v[3] then redis.call('ZREM', ARGV[5] .. v[3], id) end
    n = n + 1
  end
end
return n
