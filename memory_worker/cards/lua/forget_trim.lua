-- Forget (§14): cut the zeroed rows off the end of a chat's packed vector strings, a
-- compare-and-set: Python read the version, then the bytes, and cut them; the script sets
-- them only if no write came between (every change of the rows bumps ``vecver``).
-- KEYS: [1] vec, [2] vecmask, [3] vecver, [4] vecrw, [5] vecids (one chat's: one slot).
-- ARGV: [1] vecver as read before the bytes, [2] the row count read, [3] the kept rows,
--       [4] the kept mask. Answers 1 when set, 0 when the rows changed meanwhile.
if (redis.call('GET', KEYS[3]) or '0') ~= ARGV[1] then return 0 end
if redis.call('LLEN', KEYS[5]) ~= tonumber(ARGV[2]) then return 0 end
redis.call('SET', KEYS[1], ARGV[3])
redis.call('SET', KEYS[2], ARGV[4])
redis.call('INCR', KEYS[3])
redis.call('INCR', KEYS[4])
return 1
