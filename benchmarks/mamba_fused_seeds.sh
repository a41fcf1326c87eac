#!/usr/bin/env bash
# The Mamba block (lrnnkit.layers.mamba) trained on parity with its selective scan as the torch expression
# (LRNNKIT_FUSED_SELECTIVE=0) and on the fused Triton kernels (lrnnkit.ops.diagonal.selective, the default on
# CUDA), same seed, same settings: a learning check of the fused kernels on a GPU, one JSON line of results per
# (seed, arm). Two layers of width 128, 000's [-1,1] range, 1,500 steps of batch 256 at lengths 3-40, lr 1e-3,
# evaluated at 40, 128 and 256.
#
#   PYTHONPATH=$PWD TRITON_INTERPRET=0 bash benchmarks/mamba_fused_seeds.sh [SEEDS...]     (default: 0 1)
set -u
seeds=${*:-0 1}
for s in $seeds; do
    for f in 0 1; do
        echo -n "seed $s fused $f: "
        LRNNKIT_FUSED_SELECTIVE=$f timeout 100 python3 -m lrnnkit train parity --layer mamba --eig-range=-1,1 \
            --layers 2 --width 128 --train-len 3:40 --test-len 40,128,256 --steps 1500 --batch 256 --lr 1e-3 \
            --seed "$s" --device cuda --json 2>/dev/null | python3 -c "import json, sys; d = json.load(sys.stdin); \
print(json.dumps({k: d[k] for k in ('steps', 'seconds', 'test_accuracy', 'scaled_accuracy', 'train_accuracy', \
'step_graph') if k in d}))"
    done
done
