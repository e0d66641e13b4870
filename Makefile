# gpu-finops: the two set-up commands are `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
# The compiled build (mypyc, in place): redone when a compiled module's source changes.
HOT := $(shell sed -n 's/^    "\(scheduler\/.*\.py\)",$$/\1/p' tools/compile_hot.py)
NATIVE_STAMP := $(VENV)/.compiled-stamp
GOLDEN := $(VENV)/golden
DEMO_OUT ?= demo-out

.PHONY: install compiled pure demo test test-builds fuzz bench lint docs clean

# The pure Python tree by default: compiling the 7 hottest modules measured no gain
# (docs/performance.md, "The compiled build"), so it is opt-in until the state is integers.
install: $(STAMP)

# The scheduler's hottest modules compiled with mypyc in place; without a C compiler (or
# mypyc) a warning, and the pure Python tree, which stays the reference.
compiled: $(NATIVE_STAMP)

$(NATIVE_STAMP): $(STAMP) $(HOT) tools/compile_hot.py
	$(PY) tools/compile_hot.py
	@touch $(NATIVE_STAMP)

# Back to the pure Python tree (`make compiled` compiles again).
pure:
	$(PY) tools/compile_hot.py --clean
	@rm -f $(NATIVE_STAMP)

# Re-installs when pyproject.toml changes; idempotent otherwise.
$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,ray]'
	@touch $(STAMP)

demo: install
	$(VENV)/bin/gpu-finops demo --out $(DEMO_OUT)

# The linters first (ruff, the import contracts, mypy); the suite on the pure tree (its
# broken-on-purpose tests patch classes that compiled code would not let them patch).
# `make test-builds` compares the compiled build with it (minutes more: not in the budget).
test: lint
	$(PY) tools/compile_hot.py --clean
	@rm -f $(NATIVE_STAMP)
	$(PY) -m pytest

# The golden demo traces replayed under the pure tree and the compiled build, log hashes
# compared; then `replay --verify` on the compiled build. Leaves the compiled build installed.
test-builds:
	@mkdir -p $(GOLDEN)
	$(PY) tools/compile_hot.py --clean
	$(PY) -m benchmarks.golden_logs --only demo --profiles gang-v1.37,kube-default --json $(GOLDEN)/pure.json
	$(PY) tools/compile_hot.py
	@touch $(NATIVE_STAMP)
	$(PY) -m benchmarks.golden_logs --only demo --profiles gang-v1.37,kube-default --compare $(GOLDEN)/pure.json
	$(PY) -m benchmarks.golden_logs --only demo --profiles gang-v1.37 --verify --compare $(GOLDEN)/pure.json

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
	-$(PY) tools/compile_hot.py --clean
	rm -rf $(VENV) $(DEMO_OUT) .pytest_cache .ruff_cache .mypy_cache .hypothesis
