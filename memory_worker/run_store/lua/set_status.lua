
local function set_status(rk, id, status_prefix, from, to, now)
  if from then redis.call('ZREM', status_prefix .. from, id) end
  redis.call('ZADD', status_prefix .. to, now, id)
  redis.call('HSET', rk, 'status', to, 'updated_at', now)
end
local function clear_lease(rk)
  redis.call('HSET', rk, 'lease_owner', '', 'lease_token', '', 'leased_until', '')
end
