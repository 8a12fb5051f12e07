# Convene: `make demo` to try it, `make test` to run the whole suite.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed
NPM_STAMP := frontend/node_modules/.installed
CHROMIUM ?= /usr/bin/chromium

.PHONY: install demo serve test test-fast lint bench clean browser-deps

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e ".[test]"
	touch $(STAMP)

$(NPM_STAMP): $(wildcard frontend/package.json frontend/package-lock.json)
	@if [ -f frontend/package.json ]; then \
		if [ -f frontend/package-lock.json ]; then npm --prefix frontend ci --no-audit --no-fund; \
		else npm --prefix frontend install --no-audit --no-fund; fi; \
		mkdir -p frontend/node_modules && touch $(NPM_STAMP); fi

install: $(STAMP) $(NPM_STAMP)

demo: install
	$(PY) manage.py migrate --noinput -v0
	$(PY) manage.py seed_presets
	$(PY) manage.py demo

serve: install
	$(PY) manage.py migrate --noinput -v0
	$(PY) manage.py seed_presets
	$(PY) manage.py serve

# Debian's chromium for the browser tests (Playwright drives it; no browser download).
browser-deps:
	@if [ ! -x $(CHROMIUM) ]; then \
		if [ "$$(id -u)" = "0" ]; then \
			(apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium) >/dev/null \
			|| echo "warning: could not install chromium; browser tests will be skipped"; \
		else echo "warning: $(CHROMIUM) missing and not root; browser tests will be skipped"; fi; \
	fi

test: install browser-deps
	$(VENV)/bin/lint-imports
	$(PY) -m pytest -q

test-fast: install
	$(PY) -m pytest -q -m "not browser and not worker"

bench: install
	$(PIP) install --quiet -e ".[test,bench]"
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) var frontend/node_modules frontend/static/vendor test-artifacts
