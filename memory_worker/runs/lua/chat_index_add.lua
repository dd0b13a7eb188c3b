-- The per-chat run index's backfill (§14): runs enqueued before enqueue.lua kept the index.
-- KEYS: pairs (run hash, that run's chat index). ARGV: the runs' ids and creation ms, in
-- pairs, in the KEYS order. A run whose hash is gone (pruned meanwhile) is not added.
local n = 0
preflight({ZADD = {KEYS}})
for i = 1, #KEYS, 2 do
  local j = i - 1
  if redis.call('EXISTS', KEYS[i]) == 1 then
    redis.call('ZADD', KEYS[i + 1], ARGV[j + 2], ARGV[j + 1])
    n = n + 1
  end
end
return n
