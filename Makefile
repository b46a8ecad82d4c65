# Two entry points (see README): `make demo` runs the main job, `make test` the checks.
# Both build .venv from nothing with only python3 and pip.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck pytest views-check clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,bigquery]'
	touch $(STAMP)

# A simulated morning through the real emitter -> demo-out/telemetry.jsonl -> DuckDB -> views.
demo: $(STAMP)
	$(BIN)/agent-telemetry demo --out demo-out

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest -q

# CI drift check: the committed view SQL and docs/telemetry.md must match the models.
views-check: $(STAMP)
	$(BIN)/agent-telemetry views build --check

test: lint typecheck pytest views-check

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
