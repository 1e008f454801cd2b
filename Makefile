# Quick start:  make run   (set up .venv if missing, run the workflow on the default config)
#               make test  (set up .venv if missing, run the test suite)
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.den-installed
CORES  ?= 2

.PHONY: setup run test lint bench clean shipped-model

# Re-install when the package metadata changes; `pip install -e` makes workflow/den importable.
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --disable-pip-version-check -q -e '.[test]'
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/snakemake --cores $(CORES)

# pytest exits 5 when it collects no tests: a broken suite, not a pass. The coverage of the den
# package by the tests (in the test processes: not the workflow's job subprocesses) is printed at
# the end. The test files run in parallel (pytest-xdist), one file to a worker at a time, so a
# file's shared fixtures (tests/test_workflow.py's finished run) are built once: one worker per
# core, at most 4 (each holds TensorFlow and its models); TEST_WORKERS=0 runs them in this process.
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); [ "$$n" -gt 4 ] && n=4; echo $$n)
test: $(STAMP)
	@$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --cov=den --cov-report=term $(PYTEST_ARGS); status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; exit $$status

lint: $(STAMP)
	$(VENV)/bin/ruff check workflow tests docs
	$(VENV)/bin/snakemake --lint

# The pre-trained models shipped as package data (den.pretrained, docs/model-card.md): rule
# shipped_model of config/corpus.yaml on the real sets under DATA, without and with the PLF
# block, then a copy into the package.
DATA ?= ../shared/datasets
SHIPPED := den-binary-no-plf.npz den-binary-plf.npz
shipped-model: $(STAMP)
	$(VENV)/bin/snakemake --cores $(CORES) --configfile config/corpus.yaml --config data_dir=$(DATA) \
		-- $(addprefix results/shipped/,$(SHIPPED))
	cp $(addprefix results/shipped/,$(SHIPPED)) workflow/den/pretrained/

bench: $(STAMP)
	$(PY) -m den.bench

clean:
	rm -rf results .snakemake
