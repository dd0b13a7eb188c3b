-- breaker.reset — KEYS: hash, window; ARGV: ttl. Closed and clean, next generation.
local gen = num(redis.call('HGET', KEYS[1], 'gen')) + 1
preflight({DEL = {KEYS[1], KEYS[2]}, HSET = {KEYS[1]}, PEXPIRE = {KEYS[1]}})
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('HSET', KEYS[1], 'opened', '0', 'gen', s(gen), 'consec', '0', 'trips', '0',
  'opened_at', '0', 'open_until', '0', 'probe_until', '0')
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return gen
