# The two commands: `make demo` and `make test`. Each works on a fresh machine:
# it creates .venv, installs torch==2.13.0 when torch is missing (the local CPU build;
# an unpinned torch would pull several GB of CUDA packages) and triton when missing, then installs lrnnkit.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
# Triton kernels are compiled where a GPU is present and interpreted (TRITON_INTERPRET=1) only where none is:
# lrnnkit sets it itself at import time when CUDA is unavailable; the Makefile sets it only when nvidia-smi finds no
# GPU, and never overrides a value given on the command line or in the environment (`make demo TRITON_INTERPRET=1`).
HAVE_GPU := $(shell nvidia-smi -L >/dev/null 2>&1 && echo 1)
ifeq ($(HAVE_GPU),)
export TRITON_INTERPRET ?= 1
endif
export PYTHONHASHSEED ?= 0

# The versions this Makefile installs into its own .venv (the ones the suite is run with); pyproject's extras keep
# lower bounds only, so an existing environment is never asked to match these.
TRITON_PIN := triton==3.6.0
PINS_test := ray==2.60.0

.PHONY: demo test test-slow docs bench install clean

# One stamp per set of extras: `make demo` installs lrnnkit and its runtime dependencies only; `make test`, `make docs`
# and `make bench` add their extras on top. pip prints what it collects and installs (no -q): the first run downloads
# torch (CPU, 750 MB installed) and the rest, a few minutes on a fresh machine; later runs find the stamps and skip it.
$(STAMP): pyproject.toml
	@echo "make: setting up $(VENV) (first run only: torch, then lrnnkit and its runtime dependencies, a few minutes)"
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -c "import torch" 2>/dev/null || $(BIN)/python -m pip install --progress-bar on torch==2.13.0
	$(BIN)/python -c "import triton" 2>/dev/null || $(BIN)/python -m pip install --progress-bar on $(TRITON_PIN)
	$(BIN)/python -m pip install --progress-bar on -e .
	touch $(STAMP)

$(VENV)/.extra-%-stamp: $(STAMP)
	@echo "make: installing lrnnkit's $* extras"
	$(BIN)/python -m pip install --progress-bar on -e ".[$*]" $(PINS_$*)
	touch $@

install: $(STAMP)

demo: $(STAMP)
	@echo "make: running the demo (under three minutes on 2 CPU cores, its time budget; each step prints as it goes)"
	$(BIN)/lrnnkit demo --out demo_out

# the suite checks the docs generator too (docutils, and a Sphinx build of the math): the docs extras with the test ones
test: $(VENV)/.extra-test-stamp $(VENV)/.extra-docs-stamp
	$(BIN)/python -m pytest -q

test-slow: $(VENV)/.extra-test-stamp $(VENV)/.extra-docs-stamp
	$(BIN)/python -m pytest -q -m slow

docs: $(VENV)/.extra-docs-stamp
	$(BIN)/python -m lrnnkit docs docs/generated
	$(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html

bench: $(VENV)/.extra-test-stamp $(VENV)/.extra-bench-stamp
	for f in benchmarks/bench_*.py; do $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) demo_out docs/_build docs/generated
