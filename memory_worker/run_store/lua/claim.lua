
-- KEYS: queued, retry, leases, retired, counters, parked:<own version>, parked counts,
--       workers, worker_runs, pulse, forget epochs (chat id -> epoch, §14),
--       status:queued, :processing, :completed, :failed, :skipped (RunStatus order),
--       then per candidate (ARGV[14..]) its run hash, and for the first ARGV[13] of them
--       (expired leases: a run retired at its last attempt gets an error entry) its error log
-- ARGV: now, lease_ms, owner, token, prompt_version, max_attempts, max_loops,
--       error_log_max, restore_batch, heartbeat_ttl_ms, pulse_gap_ms, peek,
--       leases given, candidate ids...
-- Answer: {run fields or {}, retired ids, skipped ids, {id, version, lane} to park or {},
--          again, {lease heads, other heads}}. The candidates are heads of the lanes a
-- previous answer named (the first ``peek`` ids of each lane as the script ended, and the
-- run it claimed, which a release puts back at the head of the queue); every head this
-- script reaches must be one of them (its keys declared). One that is not (taken, enqueued
-- or restored since) ends the call with again = 1 + the heads walked before it (0 when
-- the call ended otherwise); the steps before it stand. max_loops bounds the heads walked.
local now = tonumber(ARGV[1])
local max_attempts = tonumber(ARGV[6])
local ttl = tonumber(ARGV[10])
local peek = tonumber(ARGV[12])
touch_pulse(KEYS[10], now, tonumber(ARGV[11]))
local status_keys = {}
for i, s in ipairs({'queued', 'processing', 'completed', 'failed', 'skipped'}) do
  status_keys[s] = KEYS[11 + i]
end
local slot, log_slot, at = {}, {}, 16  -- candidate id -> the KEYS index of its hash / log
for i = 14, #ARGV do
  at = at + 1
  slot[ARGV[i]] = at
  if i - 13 <= tonumber(ARGV[13]) then
    at = at + 1
    log_slot[ARGV[i]] = at
  end
end
local function heads(claimed)
  local others = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, peek)
  for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, peek - 1)) do others[#others + 1] = id end
  if claimed then others[#others + 1] = claimed end
  return {redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, peek), others}
end
-- lease_kept_for_owner() in run_store.py is this function's Python twin
local function kept_for_owner(rk, id)
  local owner = redis.call('HGET', rk, 'lease_owner')
  if (not owner) or owner == '' then return false end
  local expiry = tonumber(redis.call('ZSCORE', KEYS[8], owner) or '')
  if not expiry then return false end
  local held = redis.call('HGET', KEYS[9], owner) or ''
  if not string.find(',' .. held .. ',', ',' .. id .. ',', 1, true) then return false end
  -- read only here (an expired lease whose owner still beats): not on every claim
  local since = tonumber(redis.call('HGET', KEYS[10], 'since') or '')
  local alive_until = expiry
  if since and since + ttl > alive_until then alive_until = since + ttl end
  return now <= alive_until
end
local retired, skipped = {}, {}
-- prompt versions (§7 rev 2): runs of our version that older workers parked come back
local back = redis.call('ZRANGE', KEYS[6], 0, tonumber(ARGV[9]) - 1, 'WITHSCORES')
for i = 1, #back, 2 do
  redis.call('ZADD', KEYS[1], back[i + 1], back[i])
  redis.call('ZREM', KEYS[6], back[i])
end
if #back > 0 and redis.call('HINCRBY', KEYS[7], ARGV[5], -#back / 2) <= 0 then
  redis.call('HDEL', KEYS[7], ARGV[5])
end
for walked = 1, tonumber(ARGV[7]) do
  local id, bucket
  local hit = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, 1)
  if #hit > 0 then
    id, bucket = hit[1], 3
  else
    hit = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 1)
    if #hit > 0 then
      id, bucket = hit[1], 2
    else
      hit = redis.call('ZRANGE', KEYS[1], 0, 0)
      if #hit == 0 then return {{}, retired, skipped, {}, 0, {{}, {}}} end
      id, bucket = hit[1], 1
    end
  end
  if not slot[id] or (bucket == 3 and not log_slot[id]) then
    return {{}, retired, skipped, {}, walked, heads()}
  end
  local rk = KEYS[slot[id]]
  -- one read of the fields a claim decides on (nothing below changes them before their use)
  local f = redis.call('HMGET', rk, 'status', 'prompt_version', 'attempts', 'chat_id')
  local status = f[1]
  local pv, action = '', 'claim'
  if status and bucket == 3 and kept_for_owner(rk, id) then
    -- a live owner still works on it (it could not renew while the store was away)
    local until_ms = now + tonumber(ARGV[2])
    redis.call('ZADD', KEYS[3], until_ms, id)
    redis.call('HSET', rk, 'leased_until', until_ms)
    redis.call('HINCRBY', KEYS[5], 'lease_kept_for_owner', 1)
    status = nil
  else
    pv = f[2] or ''
    action = version_action(pv, ARGV[5])
    if action == 'park' then  -- a newer version: untouched, the caller parks it for its workers
      return {{}, retired, skipped, {id, pv, bucket}, 0, heads()}
    end
    redis.call('ZREM', KEYS[bucket], id)
  end
  if status then
    local attempts = tonumber(f[3] or '0')
    if action == 'skip' then  -- an older version
      set_status(rk, id, status_keys[status], status_keys['skipped'], 'skipped', now)
      skipped[#skipped + 1] = id
      clear_lease(rk)
      redis.call('HSET', rk, 'next_attempt_at', '')
      redis.call('HINCRBY', KEYS[5], 'skipped:prompt_version', 1)
    elseif bucket == 3 and attempts >= max_attempts then
      local entry = cjson.encode({attempt = attempts, failed_at = now, code = 'lease_expired',
        reason = 'worker_lost', message = 'lease expired after the final attempt', kind = 'retired'})
      redis.call('RPUSH', KEYS[log_slot[id]], entry)
      redis.call('LTRIM', KEYS[log_slot[id]], -tonumber(ARGV[8]), -1)
      set_status(rk, id, status_keys[status], status_keys['failed'], 'failed', now)
      clear_lease(rk)
      redis.call('HSET', rk, 'retired', '1', 'next_attempt_at', '')
      redis.call('ZADD', KEYS[4], now, id)
      redis.call('HINCRBY', KEYS[5], 'retired:worker_lost', 1)
      retired[#retired + 1] = id
    else
      local until_ms = now + tonumber(ARGV[2])
      set_status(rk, id, status_keys[status], status_keys['processing'], 'processing', now)
      -- the chat's forget epoch now: the card write is refused if a forget comes after
      local epoch = redis.call('HGET', KEYS[11], f[4] or '') or '0'
      local fields = {'attempts', attempts + 1, 'lease_owner', ARGV[3], 'lease_token', ARGV[4],
        'leased_until', until_ms, 'next_attempt_at', '', 'forget_epoch', epoch}
      if pv == '' then  -- a run with no prompt version takes ours
        fields[#fields + 1] = 'prompt_version'
        fields[#fields + 1] = ARGV[5]
      end
      redis.call('HSET', rk, unpack(fields))
      redis.call('ZADD', KEYS[3], until_ms, id)
      local mine = redis.call('HGET', KEYS[9], ARGV[3])
      redis.call('HSET', KEYS[9], ARGV[3], (mine and mine ~= '') and (mine .. ',' .. id) or id)
      redis.call('HINCRBY', KEYS[5], 'claimed:' .. ({'queued', 'retry', 'lease_expired'})[bucket], 1)
      return {redis.call('HGETALL', rk), retired, skipped, {}, 0, heads(id)}
    end
  end
end
return {{}, retired, skipped, {}, 0, heads()}
