-- routes.open — the pre-claim gate of several workflows in one round trip (takes nothing).
-- KEYS: every workflow's target hashes (route order, workflow after workflow), then each
-- workflow's fail-open permit; ARGV: now, then each workflow's number of targets.
-- A target is admissible when it is not cooling (Retry-After) and its breaker is closed, or
-- half-open without a probe in flight. A workflow is open when no target is admissible and
-- either some target is cooling (the walk would release the run at once) or, every target
-- being breaker-open, its first target's probe is in flight or its fail-open permit is taken.
local now = tonumber(ARGV[1])
local flows = #ARGV - 1
local first_permit = #KEYS - flows
local at, out = 0, {}
for f = 1, flows do
  local count = tonumber(ARGV[f + 1])
  local open = count > 0
  local cooling = false
  local first_probe = false
  for i = 1, count do
    local v = redis.call('HMGET', KEYS[at + i], 'opened', 'open_until', 'probe_until', 'cool_until')
    local in_flight = num(v[1]) == 1 and num(v[3]) > now
    if num(v[4]) > now then
      cooling = true
    elseif num(v[1]) == 0 or (now >= num(v[2]) and not in_flight) then
      open = false
    end
    if i == 1 then first_probe = in_flight end
  end
  at = at + count
  if open and not cooling and not first_probe then
    open = redis.call('EXISTS', KEYS[first_permit + f]) == 1
  end
  out[f] = open and 1 or 0
end
return out
