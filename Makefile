# The two commands: `make demo` and `make test`. Each works on a fresh machine:
# it creates .venv, installs torch==2.13.0 when torch is missing (the local CPU build;
# an unpinned torch would pull several GB of CUDA packages), then installs lrnnkit.
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

.PHONY: demo test test-slow docs bench install clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -c "import torch" 2>/dev/null || $(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e ".[test,docs]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/lrnnkit demo --out demo_out

test: $(STAMP)
	$(BIN)/python -m pytest -q

test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m slow

docs: $(STAMP)
	$(BIN)/python -m lrnnkit.showcase.docgen docs/generated
	$(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html

bench: $(STAMP)
	for f in benchmarks/bench_*.py; do $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) demo_out docs/_build docs/generated
