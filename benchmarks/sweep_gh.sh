#!/usr/bin/env bash
# Tuning sweep of the trainable GH kernels on the GPU: compile every setting first, one process per spec in
# parallel (Triton's on-disk cache keeps the binaries), then time them one spec after another (one process each,
# so a setting that faults cannot poison the others' CUDA context).
#     bash benchmarks/sweep_gh.sh "<profile_gh.py args>" "<spec>" ["<spec>" ...]
# e.g. bash benchmarks/sweep_gh.sh "--dtype float32 --prec tf32" "state_fwd=64:4,32:8" "wy_bwd=16:4,32:8:2"
set -u
args=$1; shift
export PYTHONPATH=${PYTHONPATH:-}:$(pwd)
for spec in "$@"; do
  timeout 400 python3 benchmarks/profile_gh.py --no-fla --nh "" $args --sweep "$spec" --compile-only >/dev/null 2>&1 &
done
wait
for spec in "$@"; do
  timeout 200 python3 benchmarks/profile_gh.py --no-fla --nh "" $args --sweep "$spec" 2>&1 | grep -E "^sweep|Error"
done
