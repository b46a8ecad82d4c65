# Two entry points (see README): `make demo` runs the main job, `make test` the checks.
# Both build .venv from nothing with only python3 and pip.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The BigQuery-API emulator the BigQuery integration tests start (its own venv, see
# tests/views/bigquery/emulator-requirements.txt).
EMU_VENV := .venv-bqemulator
EMU_STAMP := $(EMU_VENV)/.installed
EMU_REQUIREMENTS := tests/views/bigquery/emulator-requirements.txt

.PHONY: demo test lint typecheck pytest views-check clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,bigquery]'
	touch $(STAMP)

$(EMU_STAMP): $(EMU_REQUIREMENTS)
	$(PYTHON) -m venv $(EMU_VENV)
	$(EMU_VENV)/bin/pip install --quiet --upgrade pip
	$(EMU_VENV)/bin/pip install --quiet -r $(EMU_REQUIREMENTS)
	$(EMU_VENV)/bin/python -c "from duckdb_extensions import import_extension; import_extension('spatial')"
	touch $(EMU_STAMP)

demo: $(STAMP)
	$(BIN)/agent-telemetry events

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP) $(EMU_STAMP)
	$(BIN)/pytest -q

# CI drift check: the committed view SQL and docs/telemetry.md must match the models.
views-check: $(STAMP)
	$(BIN)/agent-telemetry views build --check

test: lint typecheck pytest views-check

clean:
	rm -rf $(VENV) $(EMU_VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
