-- Forget (§14): one chunk of a forgotten chat's memory keys leaves; every reader's cached
-- matrix is rebuilt (``vecver`` and ``vecrw`` bumped). UNLINK frees big values in the
-- background. KEYS: [1] vecver, [2] vecrw, then the keys to unlink (one chat's: one slot).
-- Answers the number of keys that existed.
local gone = 0
preflight({UNLINK = {KEYS}, INCR = {KEYS[1], KEYS[2]}})
for i = 3, #KEYS do gone = gone + redis.call('UNLINK', KEYS[i]) end
redis.call('INCR', KEYS[1])
redis.call('INCR', KEYS[2])
return gone
