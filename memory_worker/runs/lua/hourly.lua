
-- runs:hourly: one more run of `kind` in the UTC hour of `now`; past `keep` fields, every
-- field outside (hour - keep, hour + keep] goes. Twin: model.count_hour.
local function count_hour(key, kind, now, keep)
  local hour = math.floor(now / 3600000)
  redis.call('HINCRBY', key, kind .. ':' .. hour, 1)
  if redis.call('HLEN', key) <= keep then return end
  for _, field in ipairs(redis.call('HKEYS', key)) do
    local h = tonumber(string.match(field, ':(%d+)$'))
    if h == nil or h <= hour - keep or h > hour + keep then
      redis.call('HDEL', key, field)
    end
  end
end
