
-- KEYS: retired, prune marks, retired facts, retired counts, aged (retired_summary.lua),
--       then the run hash of each candidate (ARGV[4..])
-- ARGV: before_ms, limit, now_ms, candidate ids...
-- Retired runs retired before before_ms lose their messages (record and error log stay) and
-- are marked aged; a watermark keeps every pass O(newly old runs). A full batch also takes
-- the rest of its last millisecond, so runs sharing the watermark's score are never skipped.
-- The script picks the batch; when a run of it is not a candidate (first call, or the batch
-- changed since) it changes nothing and answers the batch's ids for the caller's next call.
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
local slot = {}
for i = 4, #ARGV do slot[ARGV[i]] = i - 3 end
local batch, missing = {}, false
for i = 1, #rows, 2 do
  batch[#batch + 1] = rows[i]
  if not slot[rows[i]] then missing = true end
end
if missing then return {seen, 0, batch} end
preflight({HDEL = {KEYS}, HINCRBY = {KEYS[4]}, HSET = {KEYS[2]}, ZADD = {KEYS[5]}})
local n = 0
for i = 1, #rows, 2 do
  local rk = KEYS[5 + slot[rows[i]]]
  if redis.call('HGET', rk, 'retired') == '1' then
    local dropped = redis.call('HDEL', rk, 'messages')
    n = n + dropped
    if dropped == 1 then summary_age(KEYS[3], KEYS[4], KEYS[5], rows[i], ARGV[3]) end
  end
end
if #rows > 0 then redis.call('HSET', KEYS[2], 'retired_messages_until', rows[#rows]) end
return {seen, n, {}}
