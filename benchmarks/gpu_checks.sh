#!/usr/bin/env bash
# The trainable GH kernel tests compiled on the GPU (TRITON_INTERPRET=0), each kernel setting in its own process
# (an illegal memory access poisons the CUDA context of the process it happens in, so one bad setting must not
# fail the others), 16 at a time. Prints one line per test id: PASS / SKIP / XFAIL (a known miscompile, strict xfail)
# / FAIL and the first error line.
#     bash benchmarks/gpu_checks.sh [pytest -k expression for the ids, default: all of ops/gh/test_wy.py]
#     FILE=proofs_tests/ops/diagonal/test_selective.py bash benchmarks/gpu_checks.sh     (another kernel's tests)
set -u
export TRITON_INTERPRET=0
FILE=${FILE:-proofs_tests/ops/gh/test_wy.py}
ids=$(python3 -m pytest -q --collect-only ${1:+-k "$1"} "$FILE" 2>/dev/null | grep '::')
echo "$ids" | xargs -P 16 -I{} sh -c 'out=$(timeout 300 python3 -m pytest -q -x "{}" 2>&1); \
  if echo "$out" | grep -q " passed"; then echo "PASS {}"; \
  elif echo "$out" | grep -q " skipped"; then echo "SKIP {}"; \
  elif echo "$out" | grep -q " xfailed"; then echo "XFAIL {}"; \
  else echo "FAIL {} :: $(echo "$out" | grep -E "^E " | head -2 | tr "\n" " " | cut -c1-300)"; fi' | sort
