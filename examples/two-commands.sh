make demo   # installs into .venv, then the narrated walkthrough (embedded Valkey + farm simulator)
make test   # installs, then ruff + mypy --strict + the docs build + the test suite + `memory-worker demo --fast`
