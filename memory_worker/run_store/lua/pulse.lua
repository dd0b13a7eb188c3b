
local function touch_pulse(pk, now, gap)
  local at = tonumber(redis.call('HGET', pk, 'at') or '')
  if (not at) or now - at > gap then redis.call('HSET', pk, 'since', now) end
  if (not at) or now > at then redis.call('HSET', pk, 'at', now) end
end
