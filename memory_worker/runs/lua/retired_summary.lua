
-- The retired-run summary the replay preview reads instead of every run (replay.py):
--   facts  HASH run id -> "code\treason\tchat_id\tprompt_version\tattempts" (retired runs only)
--   counts HASH "n\t<code>\t<reason>" -> retired runs, "aged\t<code>\t<reason>" -> of them
--          those whose messages aged out; "built" once every retired run has its facts
--   aged   ZSET run id -> when its messages were dropped (ms)
-- Every script that adds, removes or ages a retired run keeps the three in step.
local function summary_count(counts, field, by)
  if redis.call('HINCRBY', counts, field, by) <= 0 then redis.call('HDEL', counts, field) end
end
local function summary_pair(value)
  return string.match(value, '^([^\t]*\t[^\t]*)')
end
local function summary_remove(facts, counts, aged, id)
  local value = redis.call('HGET', facts, id)
  local was_aged = redis.call('ZREM', aged, id) == 1
  if not value then return 0 end
  redis.call('HDEL', facts, id)
  summary_count(counts, 'n\t' .. summary_pair(value), -1)
  if was_aged then summary_count(counts, 'aged\t' .. summary_pair(value), -1) end
  return 1
end
local function summary_add(facts, counts, aged, id, value)
  if redis.call('HSETNX', facts, id, value) == 0 then return 0 end
  summary_count(counts, 'n\t' .. summary_pair(value), 1)
  if redis.call('ZSCORE', aged, id) then
    summary_count(counts, 'aged\t' .. summary_pair(value), 1)
  end
  return 1
end
local function summary_age(facts, counts, aged, id, at)
  if redis.call('ZADD', aged, 'NX', at, id) == 0 then return 0 end
  local value = redis.call('HGET', facts, id)
  if value then summary_count(counts, 'aged\t' .. summary_pair(value), 1) end
  return 1
end
