# The two set-up commands (see README): `make demo` runs the main job on the embedded
# default (SQLite file under var/), `make test` runs the test suite. Both build .venv/
# from the lock file first.

VENV    ?= .venv
PY      := $(VENV)/bin/python
PIP     := $(VENV)/bin/pip
PYTHON  ?= python3
DB      ?= var/paperdesk.db
STAMP   := $(VENV)/.installed
# S2AND's given-name variant pairs (nicknames), taken from its wheel on PyPI without installing
# it (see requirements-data.lock); author disambiguation reads it when ../shared/data is absent.
NAMES   := $(VENV)/share/paperdesk/s2and_name_tuples_filtered.txt

.PHONY: demo test lint typecheck lock clean-venv

KATEX   := src/paperdesk/web/static/katex/katex.min.js

# KaTeX comes from the npm registry at build time and is served from the package (no CDN).
$(KATEX): web-assets/package.json web-assets/package-lock.json
	cd web-assets && npm ci --no-audit --no-fund --loglevel=error
	rm -rf src/paperdesk/web/static/katex
	mkdir -p src/paperdesk/web/static/katex/contrib
	cp web-assets/node_modules/katex/dist/katex.min.js web-assets/node_modules/katex/dist/katex.min.css src/paperdesk/web/static/katex/
	cp web-assets/node_modules/katex/dist/contrib/auto-render.min.js src/paperdesk/web/static/katex/contrib/
	cp -r web-assets/node_modules/katex/dist/fonts src/paperdesk/web/static/katex/

# --no-compile: pip would byte-compile all ~13,400 modules of the environment (~85 CPU-s,
# most of them torch's, never imported here); Python compiles those it imports, once.
$(STAMP): requirements.lock pyproject.toml $(KATEX)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --disable-pip-version-check --no-compile -r requirements.lock
	$(PIP) install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $(STAMP)

$(NAMES): requirements-data.lock | $(STAMP)
	mkdir -p $(VENV)/downloads $(dir $(NAMES))
	$(PIP) download -q --disable-pip-version-check --no-deps --require-hashes -r requirements-data.lock -d $(VENV)/downloads
	$(PY) scripts/extract_from_wheel.py $(VENV)/downloads/s2and-*.whl s2and/data/s2and_name_tuples_filtered.txt $(NAMES)
	rm -rf $(VENV)/downloads

# The first page needs the venv (with KaTeX) and the ingest only: the site is served as
# soon as the ingest has committed and the later stages run behind it (scripts/demo.sh).
# The names file is made first (the author stage reads it).
demo: $(STAMP) $(NAMES)
	PAPERDESK_DB=$(DB) bash scripts/demo.sh

test: $(STAMP) $(NAMES)
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/pytest -q

typecheck: $(STAMP)
	$(VENV)/bin/mypy

# Re-pin every dependency from the current .venv (run after adding one to pyproject.toml).
lock:
	$(PIP) freeze --exclude-editable | grep -v '^paperdesk' | LC_ALL=C sort > requirements.lock

clean-venv:
	rm -rf $(VENV)
