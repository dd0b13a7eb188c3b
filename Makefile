# Two commands for a newcomer: `make demo` and `make test` (both install first).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Test processes: the suite mostly waits on real servers and workers, so more than the cores.
TEST_WORKERS ?= 4
# A machine may set PYTHONDONTWRITEBYTECODE: then every worker and CLI process the tests start
# compiles the project again (~0.3 s each) and each pytest process re-rewrites every test module.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: demo test soak lint install browser promtool clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[dev]'
	touch $@

install: $(BIN)/.installed

# Debian's chromium + chromedriver for the console's browser tests (needs root; quick when present).
browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null)

# Debian's prometheus package for promtool (the metrics tests run `promtool check metrics`;
# needs root; quick when present).
promtool:
	@command -v promtool >/dev/null || \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null)

demo: install
	$(BIN)/memory-worker demo

lint: install
	$(BIN)/ruff check memory_worker llm_client tests bench examples
	$(BIN)/ruff format --check memory_worker llm_client tests bench examples
	$(BIN)/mypy
	$(BIN)/mkdocs build --strict --quiet --site-dir var/site

# The lint runs beside the tests (its output shown after theirs): mypy's cold run is a minute
# of one core that the tests, mostly waiting on servers and workers, leave free. Either failing
# fails the target.
test: install
	@mkdir -p var
	@( $(MAKE) --no-print-directory lint > var/lint.log 2>&1; echo $$? > var/lint.rc ) & \
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadgroup --durations=25 -m "not soak"; \
	tests=$$?; wait; cat var/lint.log; lint=$$(cat var/lint.rc); \
	echo "lint: exit $$lint, tests: exit $$tests"; [ "$$lint" = 0 ] && [ "$$tests" = 0 ]
	$(BIN)/memory-worker demo --fast

# The soak tier: the 3-minute chaos soak and the other minutes-long outage and load stories
# (pytest -m soak); CI leaves them out to stay within its time, run them before a release.
soak: install
	$(BIN)/python -m pytest -q -n 2 --durations=10 -m soak

clean:
	rm -rf $(VENV) var .mypy_cache .pytest_cache .ruff_cache
