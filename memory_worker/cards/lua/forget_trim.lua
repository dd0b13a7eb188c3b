-- Forget (§14): cut the zeroed rows off the end of a chat's packed vector strings, a
-- compare-and-set: Python read the version, then the bytes, cut them and staged the kept
-- rows under KEYS[6] with a plain SET; the script swaps them in (RENAME: no copy of the
-- big string inside the script) only if no write came between (every change of the rows
-- bumps ``vecver``), else drops the staged copy.
-- KEYS: [1] vec, [2] vecmask, [3] vecver, [4] vecrw, [5] vecids, [6] the staged rows
--       (one chat's: one slot).
-- ARGV: [1] vecver as read before the bytes, [2] the row count read, [3] the kept mask.
-- Answers 1 when set, 0 when the rows changed meanwhile (or the staged copy expired).
preflight({UNLINK = {KEYS[6]}, RENAME = {KEYS[6], KEYS[1]}, PERSIST = {KEYS[1]}, SET = {KEYS[2]},
  INCR = {KEYS[3], KEYS[4]}})
if (redis.call('GET', KEYS[3]) or '0') ~= ARGV[1]
    or redis.call('LLEN', KEYS[5]) ~= tonumber(ARGV[2]) then
  redis.call('UNLINK', KEYS[6])
  return 0
end
if redis.call('EXISTS', KEYS[6]) == 0 then return 0 end
redis.call('RENAME', KEYS[6], KEYS[1])
redis.call('PERSIST', KEYS[1])  -- the staged copy's expiry does not follow it
redis.call('SET', KEYS[2], ARGV[3])
redis.call('INCR', KEYS[3])
redis.call('INCR', KEYS[4])
return 1
