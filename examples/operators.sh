memory-worker init-config ops/                       # Procfile, example.env, routes, deploy/
export REDIS_URL=redis://redis.internal:6379/0      # unset: an embedded Valkey under var/
export MEMORY_ROUTES_FILE=ops/routes.toml            # the farm's targets, with fallbacks
memory-worker run                                    # a worker, until SIGTERM
memory-worker serve                                  # /healthz /readyz /metrics, console at /
