# Storekeeper: `make run` starts it, `make test` checks it, `make bench` measures it.
SWIFT ?= swift
VENV := .build/interop-venv
# The binary interop, schemathesis and the browser test run against: the release build when run alone; `make test`
# passes the debug build it has just made (the same code, and CI saves a whole release build).
STOREKEEPER_BIN ?= .build/release/storekeeper
BIN_BUILD := $(if $(filter .build/release/%,$(STOREKEEPER_BIN)),build-release,)

.PHONY: run test test-analytics-10k bench deps test-deps bench-deps build build-release interop interop-play schemathesis dashboard-browser lint closure-collisions clean

# The demo: Storekeeper on 127.0.0.1:8080 (SQLite in ./data) with the App Store simulator as its
# App Store and simulated customers; it prints curl examples with working keys. Ctrl-C stops it.
run: deps build-release
	.build/release/storekeeper serve --demo

# PostgreSQL 15 is started on a free loopback port in a temp dir for the storage and server
# suites, and stopped whatever the outcome.
# Tests run serially within each of two processes run at once, with the interop, schemathesis
# and browser runs beside them at a lower priority (scripts/test-shards.sh says why): the
# loopback HTTP suites answer from Swift tasks, and CPU-heavy suites running beside them in one
# process on two cores starve those tasks into client timeouts.
test: test-deps lint
	$(SWIFT) build --build-tests --explicit-target-dependency-import-check=error
	@url=$$(scripts/postgres-test.sh start) && \
	  SWIFT=$(SWIFT) scripts/test-shards.sh $$url -- \
	    $(MAKE) --no-print-directory interop interop-play schemathesis dashboard-browser closure-collisions \
	      STOREKEEPER_BIN=.build/debug/storekeeper; \
	  status=$$?; scripts/postgres-test.sh stop; exit $$status

# Issue 13's acceptance at full size: the independent plain-SQL computation of every analytics
# figure against the aggregates over a random 10,000-customer history (make test runs 250 on
# both engines). SQLite: about 90 s. Not PostgreSQL: its planner runs the plain SQL's joins of
# CTEs as nested loops, minutes per query at this size.
test-analytics-10k: test-deps
	$(SWIFT) build --build-tests
	STOREKEEPER_ANALYTICS_CUSTOMERS=10000 STOREKEEPER_TEST_POSTGRES_URL= \
	  $(SWIFT) test --skip-build --filter 'AnalyticsIndependentComputationTests'

# Storage runs each size in its own process: peak RSS at 100k and at 1M transactions shows
# whether memory grows with the database. PostgreSQL runs on a throwaway local cluster.
bench: bench-deps build-release
	.build/release/StorekeeperBench
	BENCH_ONLY=backfill .build/release/StorekeeperBench
	scripts/bench-http.sh .build/release/storekeeper
	scripts/bench-ingestion.sh .build/release/storekeeper .build/release/StorekeeperBench
	scripts/bench-analytics-http.sh .build/release/storekeeper .build/release/StorekeeperBench
	@for engine in sqlite postgres; do \
	  url=""; if [ $$engine = postgres ]; then url=$$(scripts/postgres-test.sh start .build/postgres-bench) || exit 1; fi; \
	  for size in "100000 10000" "1000000 100000"; do set -- $$size; \
	    BENCH_ONLY=storage BENCH_STORAGE_ENGINE=$$engine BENCH_STORAGE_TRANSACTIONS=$$1 BENCH_STORAGE_CUSTOMERS=$$2 \
	      STOREKEEPER_BENCH_POSTGRES_URL=$$url .build/release/StorekeeperBench || status=1; \
	  done; \
	  if [ $$engine = postgres ]; then scripts/postgres-test.sh stop .build/postgres-bench; fi; \
	done; exit $${status:-0}

deps:
	@scripts/install-deps.sh

test-deps:
	@scripts/install-deps.sh --test

bench-deps:
	@scripts/install-deps.sh --bench

build-release:
	$(SWIFT) build -c release

# Apple's Python App Store Server Library is the independent oracle: our signatures must
# satisfy its verifier and its signatures ours.
interop: $(BIN_BUILD)
	@test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	@$(VENV)/bin/python -c "import appstoreserverlibrary, jwt" 2>/dev/null || \
		$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check app-store-server-library PyJWT
	$(VENV)/bin/python tests/interop/interop_test.py $(STOREKEEPER_BIN)
	$(VENV)/bin/python tests/interop/simulator_interop_test.py $(STOREKEEPER_BIN)

# Google's own Python client (google-api-python-client with google-auth) against `storekeeper simulate
# play`: token exchange, subscriptions v2, products, voided purchases, acknowledgements, error shapes,
# and push OIDC tokens verified by google-auth (tests/interop-play/play_interop_test.py).
interop-play: $(BIN_BUILD)
	@test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	@$(VENV)/bin/python -c "import googleapiclient, google.auth, google_auth_httplib2, requests, cryptography, jwt" 2>/dev/null || \
		$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check google-api-python-client google-auth requests \
		cryptography PyJWT
	$(VENV)/bin/python tests/interop-play/play_interop_test.py $(STOREKEEPER_BIN)

# Property-based run of schemathesis against a live server and its /openapi.json: no 5xx and
# no response that contradicts the document (tests/schemathesis/run.sh).
schemathesis: $(BIN_BUILD)
	@test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	SCHEMATHESIS_PYTHON=$(VENV)/bin/python tests/schemathesis/run.sh $(STOREKEEPER_BIN)

# The dashboard in headless Chromium (Debian's chromium and chromium-driver, installed by
# test-deps) through selenium: sign-in, every page, figures against the API, a filter, the CSV,
# screenshots at 1280 and 390 px in .build/dashboard-screenshots (tests/dashboard/browser_test.py).
dashboard-browser: $(BIN_BUILD)
	@test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	@$(VENV)/bin/python -c "import selenium" 2>/dev/null || \
		$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check selenium
	$(VENV)/bin/python tests/dashboard/browser_test.py $(STOREKEEPER_BIN)

lint:
	$(SWIFT) format lint --strict --recursive Sources Tests

# Closures the compiler named alike, so that one body runs in two places (a Swift 6.3.1 bug with
# closures inside `#expect`): a test would check something other than what it reads.
closure-collisions:
	SWIFT=$(SWIFT) scripts/closure-collisions.sh

clean:
	rm -rf .build data
