-- Keep a run's validated extraction between its attempts (§7). Every key is in KEYS.
-- KEYS: [1] run, [2] forget epochs, [3] the run's kept extraction
-- ARGV: [1] lease token, [2] chat id, [3] the forget epoch the attempt was claimed under,
--       [4] the record, [5] time to live (ms)
-- Kept only while the attempt still holds the run and no forget of its chat came since its
-- claim (a forget bumps the epoch, then erases the chat's kept extractions: a record is
-- either refused here or erased there). Twin: runs.model.keep_extraction. Returns 1 kept,
-- 0 refused.
if redis.call('HGET', KEYS[1], 'lease_token') ~= ARGV[1]
   or redis.call('HGET', KEYS[1], 'status') ~= 'processing' then
  return 0
end
if tonumber(redis.call('HGET', KEYS[2], ARGV[2]) or '0') ~= tonumber(ARGV[3]) then
  return 0
end
redis.call('SET', KEYS[3], ARGV[4], 'PX', ARGV[5])
return 1
