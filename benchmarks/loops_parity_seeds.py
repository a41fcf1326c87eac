"""Does the device loop learn what the host loop learns? 000, Fig. 1 at tiny scale (the parity run of
proofs_tests/learn/test_step.py: diagonal [-1, 1], width 16, 150 steps of batch 32, lengths 3-40) for seeds
0..N-1 on both loops (lrnnkit.learn.step), final-position accuracy at length 256 per seed and the means. CPU.

    python benchmarks/loops_parity_seeds.py [--seeds 20]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=20)
    a = ap.parse_args(argv)
    import torch
    torch.set_num_threads(1)
    from lrnnkit.learn.train import TrainConfig, train
    acc = {"host": [], "device": []}
    print("seed  host    device")
    for seed in range(a.seeds):
        for loop in acc:
            cfg = TrainConfig(task="parity", layer="diagonal", eig_range=(-1, 1), width=16, heads=2, steps=150,
                              batch=32, lr=1e-2, train_len=(3, 40), test_len=(40, 256), eval_n=128,
                              short_conv=False, seed=seed, loop=loop)
            acc[loop].append(train(cfg)["final_accuracy"]["256"])
        print(f"{seed:4d}  {acc['host'][-1]:.4f}  {acc['device'][-1]:.4f}", flush=True)
    print("mean  " + "  ".join(f"{sum(v) / len(v):.4f}" for v in acc.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
