# gpu-finops: the two set-up commands are `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
DEMO_OUT ?= demo-out

.PHONY: install demo test fuzz bench lint docs clean

install: $(STAMP)

# Re-installs when pyproject.toml changes; idempotent otherwise.
$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,ray]'
	@touch $(STAMP)

demo: install
	$(VENV)/bin/gpu-finops demo --out $(DEMO_OUT)

# The linters first (ruff, the import contracts, mypy): CI runs only this.
test: lint
	$(PY) -m pytest

# The fuzz tests of tests/reliability with thousands of examples each (make test runs a
# bounded, derandomised number): a long run, to leave going while doing something else.
fuzz: install
	$(PY) -m pytest -p no:randomly tests/reliability -m hypothesis --hypothesis-profile=reliability-fuzz --timeout=0

bench: install
	$(PY) -m benchmarks.run

lint: install
	$(VENV)/bin/ruff check scheduler pipeline dashboards gpu_finops tests benchmarks
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

# Regenerates docs/tables.md from the pipeline's models (a test keeps it current).
docs: install
	GPU_FINOPS_REGENERATE_DOCS=1 $(PY) -m pytest -q tests/pipeline/test_pipeline_explain_docs.py

clean:
	rm -rf $(VENV) $(DEMO_OUT) .pytest_cache .ruff_cache .mypy_cache .hypothesis
