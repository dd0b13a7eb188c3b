-- KEYS: workers, worker_runs, worker_concurrency, worker_info, worker_completed   ARGV: owner
preflight({ZREM = {KEYS[1]}, HDEL = {KEYS[2], KEYS[3], KEYS[4], KEYS[5]}})
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
redis.call('HDEL', KEYS[5], ARGV[1])
return 1
