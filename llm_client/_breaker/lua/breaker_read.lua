-- Read one breaker consistently — KEYS: hash, window. Returns {hash fields..., window...}.
return {redis.call('HGETALL', KEYS[1]), redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')}
