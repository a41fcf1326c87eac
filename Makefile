# The two commands: `make demo` and `make test`. Each works on a fresh machine:
# it creates .venv, installs torch==2.13.0 when torch is missing (the local CPU build;
# an unpinned torch would pull several GB of CUDA packages), then installs lrnnkit.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
export TRITON_INTERPRET ?= 1
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
