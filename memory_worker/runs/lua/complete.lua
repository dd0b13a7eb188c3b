
-- KEYS: run, leases, counters, status:processing, status:completed, workers:completed,
--       the run's kept extraction
-- ARGV: token, now, result, status_prefix, id
-- set_status + clear_lease (set_status.lua) with the run hash written once: 10 commands.
-- The run's lease owner counts the completion (workers:completed, §11: a pinned worker
-- compares its own with the fleet's), and the extraction kept for its next attempt goes.
local rk, id, now = KEYS[1], ARGV[5], tonumber(ARGV[2])
local held = redis.call('HMGET', rk, 'lease_token', 'status', 'lease_owner')
if held[1] ~= ARGV[1] or held[2] ~= 'processing' then
  return 0
end
preflight({HINCRBY = {KEYS[6], KEYS[3]}, DEL = {KEYS[7]}, ZREM = {KEYS[4], KEYS[2]}, ZADD = {KEYS[5]},
  HSET = {rk}, HDEL = {rk}})
if held[3] and held[3] ~= '' then redis.call('HINCRBY', KEYS[6], held[3], 1) end
redis.call('DEL', KEYS[7])
redis.call('ZREM', KEYS[4], id)
redis.call('ZADD', KEYS[5], now, id)
redis.call('HSET', rk, 'status', 'completed', 'updated_at', now,
  'lease_owner', '', 'lease_token', '', 'leased_until', '', 'result', ARGV[3], 'retired', '0')
redis.call('HDEL', rk, 'messages')
redis.call('ZREM', KEYS[2], id)
redis.call('HINCRBY', KEYS[3], 'completed', 1)
return 1
