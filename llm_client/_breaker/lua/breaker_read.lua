-- Read one target consistently — KEYS: hash, window, in-flight slots.
-- Returns {hash fields..., window..., slots...} (the ZSETs with their scores).
return {redis.call('HGETALL', KEYS[1]), redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES'),
  redis.call('ZRANGE', KEYS[3], 0, -1, 'WITHSCORES')}
