
-- from_key / to_key: the status zsets of the run's old and new status (from KEYS)
local function set_status(rk, id, from_key, to_key, to, now)
  if from_key then redis.call('ZREM', from_key, id) end
  redis.call('ZADD', to_key, now, id)
  redis.call('HSET', rk, 'status', to, 'updated_at', now)
end
local function clear_lease(rk)
  redis.call('HSET', rk, 'lease_owner', '', 'lease_token', '', 'leased_until', '')
end
