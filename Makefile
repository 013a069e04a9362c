# make run  — serve the app on the embedded default (SQLite, in-memory channel layer, demo data);
#             DEBUG=1 make run for Django's debug pages (never on a network others can reach)
# make test — install what is needed and run the test suite on the embedded default
PORT ?= 8000
HOST ?= 127.0.0.1
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
PYTEST_WORKERS ?= 2

.PHONY: run test test-services test-faults bench bench-quick lint fmt clean browser proxy screenshots

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

# The browser tests drive Debian's Chromium (Playwright cannot download browsers here).
browser:
	@test -x /usr/bin/chromium || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "installing Debian's chromium for the browser tests"; \
			(apt-get install -y -qq chromium >/dev/null 2>&1 || \
			 (apt-get update -qq && apt-get install -y -qq chromium >/dev/null)); \
		else \
			echo "the browser tests need Debian's chromium: sudo apt-get install chromium" >&2; exit 1; \
		fi; }

# The deployment test serves through nginx with deploy/nginx.conf (tests/test_deployment.py).
proxy:
	@command -v nginx >/dev/null || test -x /usr/sbin/nginx || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "installing Debian's nginx-light for the deployment test"; \
			(apt-get install -y -qq nginx-light >/dev/null 2>&1 || \
			 (apt-get update -qq && apt-get install -y -qq nginx-light >/dev/null)); \
		else \
			echo "the deployment test needs nginx: sudo apt-get install nginx-light" >&2; exit 1; \
		fi; }

# What the browser tests inject into the pages (axe-core), as pinned by package-lock.json. A
# worktree's node_modules may be a link to another checkout's: npm ci would empty that one.
node_modules: package.json package-lock.json
	@if [ -L node_modules ]; then touch node_modules/; exit 0; fi; \
	command -v npm >/dev/null || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			(apt-get install -y -qq npm >/dev/null 2>&1 || \
			 (apt-get update -qq && apt-get install -y -qq npm >/dev/null)); \
		else \
			echo "the accessibility tests need npm: sudo apt-get install npm" >&2; exit 1; \
		fi; }; \
	npm ci --no-audit --no-fund --loglevel=error && touch node_modules

# One uvicorn process serves the pages, the API and the sockets: one command, no proxy. Production
# serves the pages and the API from gunicorn behind nginx, beside uvicorn for the sockets
# (docker-compose.yml; README, "Scaling out"): that split pays with PostgreSQL and Redis.
run: $(STAMP)
	$(PY) manage.py migrate --noinput
	$(PY) manage.py load_demo
	@echo "Serving on http://$(HOST):$(PORT)/  (Ctrl+C stops)"
	$(VENV)/bin/uvicorn config.asgi:application --ws config.websocket:WebSocketProtocol --host $(HOST) --port $(PORT)

# The embedded default: SQLite and the in-memory channel layer. Tests that need PostgreSQL or
# Redis are deselected here and run by `make test-services` (and CI).
test: $(STAMP) browser node_modules
	rm -f var/test*.sqlite3*  # a killed run's WAL files would break the next test database
	env -u DATABASE_URL -u REDIS_URL $(VENV)/bin/pytest -n $(PYTEST_WORKERS) --dist loadgroup \
		-m "not postgres and not redis and not faults"

# The whole suite against real services: DATABASE_URL=postgres://… REDIS_URL=redis://… required.
test-services: $(STAMP) browser node_modules proxy
	@case "$$DATABASE_URL" in postgres*) ;; *) echo "test-services needs DATABASE_URL=postgres://..." >&2; exit 2;; esac
	@case "$$REDIS_URL" in redis*) ;; *) echo "test-services needs REDIS_URL=redis://..." >&2; exit 2;; esac
	$(VENV)/bin/pytest -n $(PYTEST_WORKERS) --dist loadgroup -m "not faults"

# Fault tests under load (kill -9 of a worker, of the postmaster and of Redis; PostgreSQL stopped
# and frozen; a held campaign lock; clients aborting): on a private PostgreSQL cluster and Redis
# that the tests create on their own ports, never the shared ones. A few minutes; CI's last step.
test-faults: $(STAMP)
	env -u DATABASE_URL -u REDIS_URL $(VENV)/bin/pytest -p no:cacheprovider -n 0 -s -m faults \
		tests/faults

# Every benchmark (bench/feed.py drives Chromium: `browser`), then one table of the headline
# figures beside their in-run baselines, which `make bench` also writes into README.md
# (Performance). Every figure of issue #17 needs DATABASE_URL=postgres://… and
# REDIS_URL=redis://… in the environment.
bench: $(STAMP) browser
	$(PY) bench/all.py

bench-quick: $(STAMP) browser
	$(PY) bench/all.py --quick

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

fmt: $(STAMP)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

screenshots: $(STAMP) browser
	$(PY) docs/screenshots/make.py

clean:
	rm -rf $(VENV) var staticfiles .pytest_cache .hypothesis node_modules
