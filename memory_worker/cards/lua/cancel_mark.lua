-- A run's cancel (§13), the card side: after this answers 'marked', the run's card write
-- (apply.lua) refuses, so a worker still working on the run writes nothing of it.
-- KEYS: [1] the chat's applied runs (ZSET; a SET before applied runs had a time),
--       [2] the run's cancel mark (STRING)
-- ARGV: [1] run id, [2] now (ms), [3] the mark's time to live (ms); [4] 'mark' or 'drop'
-- Answer: 'marked'; 'applied' (the run's card write landed before: nothing marked);
-- 'dropped' (a replay by id takes the mark away before the run is claimable again).
if ARGV[4] == 'drop' then
  redis.call('DEL', KEYS[2])
  return 'dropped'
end
local kind = redis.call('TYPE', KEYS[1]).ok
if (kind == 'zset' and redis.call('ZSCORE', KEYS[1], ARGV[1]))
   or (kind == 'set' and redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1) then
  return 'applied'
end
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
return 'marked'
