-- KEYS: queued, retry, leases, retired, counters, parked:<own version>, parked counts,
--       workers, worker_runs (and the store's pulse, pulse.lua), forget epochs (chat id ->
--       epoch, §14), status:queued, :processing, :completed, :failed, :skipped (RunStatus
--       order), then per candidate (ARGV[14..]) its run hash, and for the first ARGV[13] of
--       them (expired leases: a run retired at its last attempt gets an error entry) its
--       error log
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
-- The run fields answered: the ones the claim wrote, then READ[5..ANSWERED] (what the worker
-- reads), then ready_at: since when the run was claimable, by its lane (queued or released
-- at updated_at, due for a retry at next_attempt_at, its lease expired at leased_until).
local now = tonumber(ARGV[1])
local max_attempts = tonumber(ARGV[6])
local ttl = tonumber(ARGV[10])
local peek = tonumber(ARGV[12])
-- the runs this owner holds and the store's pulse: read once here, written once by finish()
local mine = redis.call('HMGET', KEYS[9], ARGV[3], PULSE_AT)
local writes, restarted = touch_pulse(tonumber(mine[2] or ''), now, tonumber(ARGV[11]))
local status_keys = {}
for i, s in ipairs({'queued', 'processing', 'completed', 'failed', 'skipped'}) do
  status_keys[s] = KEYS[10 + i]
end
local slot, log_slot, at = {}, {}, 15  -- candidate id -> the KEYS index of its hash / log
for i = 14, #ARGV do
  at = at + 1
  slot[ARGV[i]] = at
  if i - 13 <= tonumber(ARGV[13]) then
    at = at + 1
    log_slot[ARGV[i]] = at
  end
end
-- a claim decides on the first 4 and its chat's epoch (5), answers 5.. with what it writes
local READ = {'status', 'prompt_version', 'attempts', 'lease_owner', 'chat_id',
  'id', 'releases', 'thread_id', 'range_start', 'range_end', 'cursor', 'messages',
  'updated_at', 'next_attempt_at', 'leased_until'}
local ANSWERED = 12
-- lease_kept_for_owner() in run_store.py is this function's Python twin
local function kept_for_owner(owner, id)
  if (not owner) or owner == '' then return false end
  local expiry = tonumber(redis.call('ZSCORE', KEYS[8], owner) or '')
  if not expiry then return false end
  -- read only here (an expired lease whose owner still beats): not on every claim
  local w = redis.call('HMGET', KEYS[9], owner, PULSE_SINCE)
  if not string.find(',' .. (w[1] or '') .. ',', ',' .. id .. ',', 1, true) then return false end
  local since = restarted or tonumber(w[2] or '')
  local alive_until = expiry
  if since and since + ttl > alive_until then alive_until = since + ttl end
  return now <= alive_until
end
local retired, skipped = {}, {}
-- ends the script: the pulse and, when it claimed a run, the owner's runs in one write
local function finish(answer, claimed)
  if claimed then
    writes[#writes + 1] = ARGV[3]
    writes[#writes + 1] = (mine[1] and mine[1] ~= '') and (mine[1] .. ',' .. claimed) or claimed
  end
  if #writes > 0 then redis.call('HSET', KEYS[9], unpack(writes)) end
  return answer
end
-- prompt versions (§7): runs of our version that older workers parked come back
-- the keys a claim may write by role, for its preflight: the lanes, the candidates' hashes
-- and error logs
local LANE_KEYS, RUN_KEYS, LOG_KEYS = {}, {}, {}
for b = 1, 3 do LANE_KEYS[b] = KEYS[b] end
for id in pairs(slot) do RUN_KEYS[id] = KEYS[slot[id]] end
for id in pairs(log_slot) do LOG_KEYS[id] = KEYS[log_slot[id]] end
preflight({ZADD = {KEYS[1], KEYS[3], KEYS[4], status_keys}, ZREM = {KEYS[3], KEYS[6], LANE_KEYS, status_keys},
  HSET = {KEYS[9], RUN_KEYS}, HDEL = {KEYS[7]}, HINCRBY = {KEYS[5], KEYS[7]}, RPUSH = {LOG_KEYS},
  LTRIM = {LOG_KEYS}})
local back = redis.call('ZRANGE', KEYS[6], 0, tonumber(ARGV[9]) - 1, 'WITHSCORES')
for i = 1, #back, 2 do
  redis.call('ZADD', KEYS[1], back[i + 1], back[i])
  redis.call('ZREM', KEYS[6], back[i])
end
if #back > 0 and redis.call('HINCRBY', KEYS[7], ARGV[5], -#back / 2) <= 0 then
  redis.call('HDEL', KEYS[7], ARGV[5])
end
-- The lanes (1 queued, 2 due retries, 3 expired leases), each read once: its first peek + 1
-- ids. Only this script changes a lane while it runs, and only at the head: each head the
-- walk passes leaves the lane's due part (taken, retired, skipped, or its lease moved on),
-- nothing joins it. So the walk takes heads from this view, and answers from it; a lane
-- is read again only when the walk went past its view and it may hold more.
local view, pos, full = {}, {}, {}
local function load(b)
  if b == 1 then
    view[b] = redis.call('ZRANGE', KEYS[1], 0, peek)
  else
    view[b] = redis.call('ZRANGEBYSCORE', KEYS[b], '-inf', now, 'LIMIT', 0, peek + 1)
  end
  pos[b], full[b] = 1, #view[b] > peek
end
for b = 1, 3 do load(b) end
local function head(b)
  if pos[b] > #view[b] and full[b] then load(b) end
  return view[b][pos[b]]
end
-- the lane's first peek ids now
local function lane_heads(b)
  if #view[b] - pos[b] + 1 < peek and full[b] then load(b) end
  local ids = {}
  for i = pos[b], math.min(#view[b], pos[b] + peek - 1) do ids[#ids + 1] = view[b][i] end
  return ids
end
local function heads(claimed)
  local others = lane_heads(2)
  for _, id in ipairs(lane_heads(1)) do others[#others + 1] = id end
  if claimed then others[#others + 1] = claimed end
  return {lane_heads(3), others}
end
local function unleased(rk, status, ...)
  redis.call('HSET', rk, 'status', status, 'updated_at', now, 'lease_owner', '',
    'lease_token', '', 'leased_until', '', 'next_attempt_at', '', ...)
end
-- Out of memory (§7): Redis refuses a script's first write when it is one that grows
-- memory (ZADD, HSET, RPUSH…), and lets a script that has written finish. So each step
-- below writes such a command first, and an OOM refuses the whole claim (nothing moved),
-- as it refuses heartbeats and renewals. The same status twice (a lease reclaimed) is one
-- ZADD, its new score.
local function restatus(id, from, to)
  redis.call('ZADD', status_keys[to], now, id)
  if status_keys[from] and from ~= to then redis.call('ZREM', status_keys[from], id) end
end
for walked = 1, tonumber(ARGV[7]) do
  local id, bucket = head(3), 3
  if not id then id, bucket = head(2), 2 end
  if not id then id, bucket = head(1), 1 end
  if not id then return finish({{}, retired, skipped, {}, 0, {{}, {}}}) end
  if not slot[id] or (bucket == 3 and not log_slot[id]) then
    return finish({{}, retired, skipped, {}, walked, heads()})
  end
  local rk = KEYS[slot[id]]
  -- one read of the fields a claim decides on (nothing below changes them before their use)
  local f = redis.call('HMGET', rk, unpack(READ))
  local status = f[1]
  local pv = f[2] or ''
  local action = version_action(pv, ARGV[5])
  local attempts = tonumber(f[3] or '0')
  local kept = status and bucket == 3 and kept_for_owner(f[4], id)
  if action == 'park' and not kept then  -- a newer version: untouched, the caller parks it
    return finish({{}, retired, skipped, {id, pv, bucket}, 0, heads()})
  end
  pos[bucket] = pos[bucket] + 1  -- it leaves the lane's due part, whatever comes next
  if kept then
    -- a live owner still works on it (it could not renew while the store was away)
    local until_ms = now + tonumber(ARGV[2])
    redis.call('ZADD', KEYS[3], until_ms, id)
    redis.call('HSET', rk, 'leased_until', until_ms)
    redis.call('HINCRBY', KEYS[5], 'lease_kept_for_owner', 1)
  elseif not status then  -- its hash is gone: off the lane (the pulse is the first write)
    if #writes == 0 then writes = {PULSE_AT, mine[2]} end
    redis.call('HSET', KEYS[9], unpack(writes))
    writes = {}
    redis.call('ZREM', LANE_KEYS[bucket], id)
  elseif action == 'skip' then  -- an older version
    restatus(id, status, 'skipped')
    redis.call('ZREM', LANE_KEYS[bucket], id)
    unleased(rk, 'skipped', 'skip_reason', 'prompt_version')
    redis.call('HINCRBY', KEYS[5], 'skipped:prompt_version', 1)
    skipped[#skipped + 1] = id
  elseif bucket == 3 and attempts >= max_attempts then
    local entry = cjson.encode({attempt = attempts, failed_at = now,
      code = 'lease_expired', reason = 'worker_lost',
      message = 'lease expired after the final attempt', kind = 'retired'})
    redis.call('RPUSH', KEYS[log_slot[id]], entry)
    redis.call('LTRIM', KEYS[log_slot[id]], -tonumber(ARGV[8]), -1)
    restatus(id, status, 'failed')
    redis.call('ZREM', KEYS[3], id)
    unleased(rk, 'failed', 'retired', '1')
    redis.call('ZADD', KEYS[4], now, id)
    redis.call('HINCRBY', KEYS[5], 'retired:worker_lost', 1)
    retired[#retired + 1] = id
  else
    local until_ms = now + tonumber(ARGV[2])
    restatus(id, status, 'processing')
    redis.call('ZREM', LANE_KEYS[bucket], id)
    -- the chat's forget epoch now: the card write is refused if a forget comes after
    local epoch = redis.call('HGET', KEYS[10], f[5] or '') or '0'
    -- one write; a run with no prompt version takes ours (a claimed run has ours or none)
    local fields = {'status', 'processing', 'updated_at', now,
      'attempts', attempts + 1, 'lease_owner', ARGV[3], 'lease_token', ARGV[4],
      'leased_until', until_ms, 'next_attempt_at', '', 'forget_epoch', epoch,
      'prompt_version', ARGV[5], 'max_attempts', ARGV[6]}
    redis.call('HSET', rk, unpack(fields))
    redis.call('ZADD', KEYS[3], until_ms, id)
    redis.call('HINCRBY', KEYS[5], 'claimed:' .. ({'queued', 'retry', 'lease_expired'})[bucket], 1)
    for i = 5, ANSWERED do
      fields[#fields + 1] = READ[i]
      fields[#fields + 1] = f[i] or ''
    end
    fields[#fields + 1] = 'ready_at'
    fields[#fields + 1] = f[ANSWERED + bucket] or ''
    return finish({fields, retired, skipped, {}, 0, heads(id)}, id)
  end
end
return finish({{}, retired, skipped, {}, 0, heads()})
