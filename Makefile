# Two entry points (see README): `make demo` runs the main job, `make test` the checks.
# Both build .venv from nothing with only python3 and pip.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The BigQuery-API emulator the BigQuery integration tests start (its own venv, see
# tests/deploy/bigquery/emulator-requirements.txt).
EMU_VENV := .venv-bqemulator
EMU_STAMP := $(EMU_VENV)/.installed
EMU_REQUIREMENTS := tests/deploy/bigquery/emulator-requirements.txt

.PHONY: demo test lint imports typecheck pytest views-check check lock generate docs docs-serve diagrams screenshots mutation clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,cli,bigquery,analyze,docs,report]'
	touch $(STAMP)

$(EMU_STAMP): $(EMU_REQUIREMENTS)
	$(PYTHON) -m venv $(EMU_VENV)
	$(EMU_VENV)/bin/pip install --quiet --upgrade pip
	$(EMU_VENV)/bin/pip install --quiet -r $(EMU_REQUIREMENTS)
	$(EMU_VENV)/bin/python -c "from duckdb_extensions import import_extension; import_extension('spatial')"
	touch $(EMU_STAMP)

# Material's iframe-worker shim, so search works in site/index.html opened as a file
# (scripts/mkdocs_hooks.py copies it into the site); pinned, fetched from the npm registry.
DOCS_SHIM := $(VENV)/iframe-worker-shim.js
IFRAME_WORKER := iframe-worker@1.0.4
$(DOCS_SHIM): | $(STAMP)
	rm -rf $(VENV)/iframe-worker && mkdir -p $(VENV)/iframe-worker
	cd $(VENV)/iframe-worker && npm pack --silent $(IFRAME_WORKER) > /dev/null && tar -xzf iframe-worker-*.tgz
	cp $(VENV)/iframe-worker/package/shim/index.js $@

# Debian packages the page tests and the manual's pictures need: chromium (headless, driven
# by playwright) and graphviz (dot); and golang-go, which builds and runs the Go emitter of
# examples/go. Installed once when missing; apt needs root.
SYSTEM_STAMP := $(VENV)/.system-packages
$(SYSTEM_STAMP): | $(STAMP)
	command -v chromium > /dev/null && command -v dot > /dev/null && command -v go > /dev/null || \
		{ apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium graphviz golang-go; }
	touch $@

# The npm packages of examples/typescript, pinned by its package-lock.json and fetched from
# the npm registry: TypeScript (compiles the example emitter), ajv and ajv-formats (validate
# lines against the catalogue's JSON Schema: the example's test and tests/jsonschema).
NODE_DIR := examples/typescript
NODE_STAMP := $(NODE_DIR)/node_modules/.installed
$(NODE_STAMP): $(NODE_DIR)/package-lock.json
	cd $(NODE_DIR) && npm ci --silent --no-audit --no-fund
	touch $@

# A simulated morning through the real emitter -> demo-out/telemetry.jsonl -> DuckDB -> views.
demo: $(STAMP)
	$(BIN)/agent-telemetry demo --out demo-out

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# The import direction of docs/design.md ("Layout"): the contracts in pyproject.toml.
imports: $(STAMP)
	$(BIN)/lint-imports --no-cache --no-logo

typecheck: $(STAMP)
	$(BIN)/mypy

# Two workers (pytest-xdist); tests/scheduling.py keeps tests that share a set-up on one
# worker (the BigQuery emulator tests: one emulator; a docs page; a file's module fixtures)
# and starts the longest groups first. PYTEST_WORKERS=0 runs in this process.
PYTEST_WORKERS ?= 2
pytest: $(STAMP) $(EMU_STAMP) $(SYSTEM_STAMP) $(DOCS_SHIM) $(NODE_STAMP)
	$(BIN)/pytest -q -n $(PYTEST_WORKERS) --dist loadgroup

# CI drift check: the committed view SQL and docs/telemetry.md must match the models.
views-check: $(STAMP)
	$(BIN)/agent-telemetry views build --check

# The one CI check (docs/evolving-the-schema.md): definition rules, schema lock, compatibility
# against the lock (or, with CHECK_AGAINST=<git ref>, against the lock at a pull request's base),
# view bindings and the generated-files drift check above. CHECK_FORMAT=github annotates.
CHECK_AGAINST ?=
CHECK_FORMAT ?= text
check: $(STAMP)
	$(BIN)/agent-telemetry check --format $(CHECK_FORMAT) $(if $(CHECK_AGAINST),--against $(CHECK_AGAINST))

lock: $(STAMP)
	$(BIN)/agent-telemetry lock

# Every committed generated file, from the models: the schema lock, the view SQL of every
# layout and docs/telemetry.md. CI (`check`) fails when any of them is stale.
generate: lock
	$(BIN)/agent-telemetry views build
	# The worked example service (examples/service) keeps its own lock, views and dictionary.
	cd examples/service && ../../$(BIN)/agent-telemetry lock && ../../$(BIN)/agent-telemetry views build

# The manual (mkdocs.yml, docs/): built with --strict, so a broken link, anchor or a page
# missing from the nav fails. Every code block in it is run by tests/docs (pytest).
docs: $(STAMP) $(DOCS_SHIM)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict -d site

# The manual on http://127.0.0.1:8000 (site/index.html also works opened as a file).
docs-serve: docs
	$(BIN)/python -m http.server --bind 127.0.0.1 --directory site 8000

# Screenshots of the built manual at 1280 px, for review (docs/img/screens/).
screenshots: docs $(SYSTEM_STAMP)
	$(BIN)/python scripts/screenshots.py

# The manual's pictures: docs/diagrams/*.dot -> docs/img/*.svg, and the demo's report charts
# (tests/docs/test_diagrams.py and tests/report/test_demo_charts.py fail when a committed
# picture differs from a fresh drawing).
diagrams: $(SYSTEM_STAMP)
	$(BIN)/python scripts/diagrams.py
	$(BIN)/python scripts/demo_charts.py

# `check` includes the drift check of views-check. The manual's `mkdocs build --strict`
# (what `docs` runs) is built once, by pytest: tests/docs/test_site.py.
# The static checks run beside the emulator's and chromium's set-up (-j2, output kept per
# target), then pytest and check: on a fresh clone that hides most of the set-up.
test:
	$(MAKE) --no-print-directory -j2 --output-sync=target lint imports typecheck $(EMU_STAMP) $(SYSTEM_STAMP) $(DOCS_SHIM) $(NODE_STAMP)
	$(MAKE) --no-print-directory pytest check

# Mutation testing of the modules that carry the package's promises, one group of modules
# against its own tests at a time (scripts/mutation.py, docs/testing.md). Not part of
# `make test`: it reruns the tests once per mutant. Incremental: each group's results stay
# in .mutation/<group>/mutants/ and only mutants of changed functions rerun.
# MUTATION_GROUP=text (a group of scripts/mutation.py GROUPS) runs one group;
# MUTATION_MODULE=agent_telemetry/_text.py one module alone, against its group's tests;
# MUTATION_GROUP=deploy-server (opt-in, hours) adds the emulator tests to deploy's.
MUTATION_GROUP ?=
MUTATION_MODULE ?=
mutation: $(STAMP) $(if $(filter deploy-server,$(MUTATION_GROUP)),$(EMU_STAMP))
	$(BIN)/python scripts/mutation.py $(if $(MUTATION_GROUP),--group $(MUTATION_GROUP)) \
		$(if $(MUTATION_MODULE),--module $(MUTATION_MODULE))

clean:
	rm -rf $(VENV) $(EMU_VENV) site .pytest_cache .mypy_cache .ruff_cache .hypothesis mutants .mutation $(NODE_DIR)/node_modules $(NODE_DIR)/dist
