# gpu-finops: the two set-up commands are `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
# The compiled build (mypyc and the C kernels, in place): redone when a scheduler source changes.
SCHEDULER_SOURCES := $(shell find scheduler -name '*.py' -o -name '*.c')
NATIVE_STAMP := $(VENV)/.compiled-stamp
DEMO_OUT ?= demo-out

.PHONY: install compiled pure demo test fuzz bench lint docs clean lock wheel test-package

# The packages, then the scheduler compiled with mypyc and its C kernels built
# (tools/compile_scheduler.py, a few minutes on two cores): without a C compiler or mypyc a warning, and the pure Python tree,
# which stays the reference. A scheduler source edited after compiling runs pure (with a
# warning) until this compiles again; GPU_FINOPS_PURE=1 asks for the pure tree.
install: $(NATIVE_STAMP)

compiled: $(NATIVE_STAMP)

$(NATIVE_STAMP): $(STAMP) $(SCHEDULER_SOURCES) tools/compile_scheduler.py
	$(PY) tools/compile_scheduler.py
	@touch $(NATIVE_STAMP)

# Removes the compiled modules: the pure Python tree until `make install` compiles again.
pure:
	$(PY) tools/compile_scheduler.py --clean
	@rm -f $(NATIVE_STAMP)

# Re-installs when pyproject.toml or the lock changes; idempotent otherwise. Installs the
# tested set: constraints.txt pins every package of the environment (`make lock` rewrites it).
$(STAMP): pyproject.toml constraints.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[dev,ray]'
	@touch $(STAMP)

# The lock: after changing a dependency in pyproject.toml, install it (`make install`), pass
# `make test`, then pin what .venv holds. A header and `pip freeze` (the editable project left out).
lock: $(STAMP)
	@{ sed -n '/^#/p' constraints.txt; $(PY) -m pip freeze --exclude-editable | grep -v '^#'; } > constraints.txt.new
	@mv constraints.txt.new constraints.txt

# The wheel (setup.py): the scheduler compiled with mypyc into it where a C compiler is found,
# under build/, outside the source tree; GPU_FINOPS_PURE=1 builds the pure wheel.
wheel: $(STAMP)
	$(PY) -m pip wheel --no-deps -w dist .

# The packaging tests: the wheels built and installed in fresh environments (minutes; apart
# from `make test` to keep its time).
test-package: $(STAMP)
	GPU_FINOPS_PACKAGE_TESTS=1 $(PY) -m pytest -p no:randomly tests/package --timeout=3600

demo: install
	$(VENV)/bin/gpu-finops demo --out $(DEMO_OUT)

# The linters first (ruff, the import contracts, mypy), then the suite. Its own process
# imports the pure tree (tests/conftest.py: the broken-on-purpose tests patch classes that
# compiled code would not let them patch); the commands it runs as processes use the
# compiled build, and tests/test_compiled_build.py replays the golden demo traces under
# both builds, compares the logs byte for byte and runs `replay --verify` compiled.
# Two pytest-xdist workers (one per core; TEST_WORKERS=0 runs in one process): tests that
# share a fixture wider than one test, such as the demo's database, run on one worker, which
# builds it once (tests/worker_groups.py). `pytest tests/...` on its own stays one process.
TEST_WORKERS ?= 2
test: lint $(NATIVE_STAMP)
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup

# The fuzz tests of tests/reliability with thousands of examples each (make test runs a
# bounded, derandomised number): a long run, to leave going while doing something else.
fuzz: install
	$(PY) -m pytest -p no:randomly tests/reliability -m hypothesis --hypothesis-profile=reliability-fuzz --timeout=0

bench: install
	$(PY) -m benchmarks.run

lint: $(STAMP)
	$(VENV)/bin/ruff check scheduler pipeline dashboards gpu_finops tests benchmarks tools
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

# Regenerates what the docs say about the code and the demo (tests keep each current):
# docs/tables.md from the pipeline's models; every demo figure of the README and docs/
# (<!-- demo:NAME --> spans, gpu_finops/docs_figures.py) from a fresh demo database; the
# README's screenshots from the real dashboard in headless Chromium (tests/make_screenshots.py).
docs: install
	GPU_FINOPS_REGENERATE_DOCS=1 $(PY) -m pytest -q tests/pipeline/test_pipeline_explain_docs.py
	$(VENV)/bin/gpu-finops demo --no-serve -q --out $(DEMO_OUT)
	# The README's advice run: 8 trials (two batches) keep make docs to minutes; with the same
	# seed they are the first 8 of a 50-trial run (docs/advice.md measures one).
	rm -rf $(DEMO_OUT)/advice
	$(VENV)/bin/gpu-finops advise quotas --trace data/demo/trace.csv --cluster data/demo/cluster.csv \
		--queues data/demo/queues.yaml --objectives data/advise-objectives.toml --trials 8 --seed 0 \
		--out $(DEMO_OUT)/advice -q
	$(PY) -m gpu_finops.docs_figures --db $(DEMO_OUT)/gpu-finops.duckdb --advice $(DEMO_OUT)/advice README.md docs/*.md
	rm -rf $(DEMO_OUT)/sweep-tiny
	$(VENV)/bin/gpu-finops sweep data/sweep-tiny.toml --out $(DEMO_OUT)/sweep-tiny -q
	$(PY) -m tests.make_screenshots --db $(DEMO_OUT)/gpu-finops.duckdb --page "" \
		--out docs/images/overview.png --size 1366x1000 --min-charts 5
	$(PY) -m tests.make_screenshots --db $(DEMO_OUT)/sweep-tiny/gpu-finops.duckdb --page scenarios \
		--out docs/images/scenarios.png --size 1366x1000 --min-charts 3
	$(PY) -m tests.make_screenshots --db $(DEMO_OUT)/advice/gpu-finops.duckdb --page advice \
		--out docs/images/advice.png --size 1366x1400 --min-charts 2
	$(PY) -m tests.make_screenshots --db $(DEMO_OUT)/gpu-finops.duckdb --page budgets \
		--budgets $(DEMO_OUT)/inputs/budgets.csv --out docs/images/budgets.png --size 1366x1400 --min-charts 2

clean:
	-$(PY) tools/compile_scheduler.py --clean
	rm -rf $(VENV) $(DEMO_OUT) .pytest_cache .ruff_cache .mypy_cache .hypothesis
