-- The store's pulse (§7) is two fields of the workers:runs hash (worker ids are
-- host:pid:hex, never these names): a claim and a heartbeat write that hash anyway, so
-- each reads the pulse with its first read of it and writes it with its one write.
local PULSE_AT, PULSE_SINCE = 'pulse:at', 'pulse:since'
-- at: the pulse's 'at' as read (nil: never touched). Answers the fields a touch at ``now``
-- writes (none, or 'at', or 'since' and 'at') and the restarted 'since' (nil: unchanged).
local function touch_pulse(at, now, gap)
  local writes, since = {}, nil
  if (not at) or now - at > gap then since = now; writes = {PULSE_SINCE, now} end
  if (not at) or now > at then writes[#writes + 1] = PULSE_AT; writes[#writes + 1] = now end
  return writes, since
end
