
-- KEYS: retired, prune marks, retired facts, retired counts, aged (retired_summary.lua)
-- ARGV: before_ms, limit, run_prefix, now_ms
-- Retired runs retired before before_ms lose their messages (record and error log stay) and
-- are marked aged; a watermark keeps every pass O(newly old runs). A full batch also takes
-- the rest of its last millisecond, so runs sharing the watermark's score are never skipped.
local mark = redis.call('HGET', KEYS[2], 'retired_messages_until')
local low = mark and ('(' .. mark) or '-inf'
local rows = redis.call('ZRANGEBYSCORE', KEYS[1], low, ARGV[1], 'WITHSCORES',
  'LIMIT', 0, tonumber(ARGV[2]))
local seen = #rows / 2
if seen == tonumber(ARGV[2]) then
  local last = rows[#rows]
  local ties = redis.call('ZRANGEBYSCORE', KEYS[1], last, last, 'WITHSCORES')
  for i = 1, #ties do rows[#rows + 1] = ties[i] end
end
local n = 0
for i = 1, #rows, 2 do
  local rk = ARGV[3] .. rows[i]
  if redis.call('HGET', rk, 'retired') == '1' then
    local dropped = redis.call('HDEL', rk, 'messages')
    n = n + dropped
    if dropped == 1 then summary_age(KEYS[3], KEYS[4], KEYS[5], rows[i], ARGV[4]) end
  end
end
if #rows > 0 then redis.call('HSET', KEYS[2], 'retired_messages_until', rows[#rows]) end
return {seen, n}
