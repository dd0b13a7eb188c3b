
-- KEYS: retired, prune marks   ARGV: before_ms, limit, run_prefix
-- Retired runs retired before before_ms lose their messages (record and error log stay);
-- a watermark keeps every pass O(newly old runs).
local mark = redis.call('HGET', KEYS[2], 'retired_messages_until')
local low = mark and ('(' .. mark) or '-inf'
local rows = redis.call('ZRANGEBYSCORE', KEYS[1], low, ARGV[1], 'WITHSCORES',
  'LIMIT', 0, tonumber(ARGV[2]))
local n = 0
for i = 1, #rows, 2 do
  local rk = ARGV[3] .. rows[i]
  if redis.call('HGET', rk, 'retired') == '1' then
    n = n + redis.call('HDEL', rk, 'messages')
  end
end
if #rows > 0 then redis.call('HSET', KEYS[2], 'retired_messages_until', rows[#rows]) end
return {#rows / 2, n}
