"""Does the device loop learn what the host loop learns? Parity (000, Fig. 1) at tiny scale for seeds 0..N-1 on
both loops (lrnnkit.learn.step), one case per layer whose step the device loop changes:

* ``diagonal``: the parity run of proofs_tests/learn/test_step.py (diagonal [-1, 1], width 16, 150 steps of batch
  32, lengths 3-40), final-position accuracy at length 256;
* ``fixed-point``: 003's layer (r = 1, width 16, 300 steps of batch 32, lengths 3-20, lr 1e-2), whose training
  forward decides its stopping rule on the device in the device loop (``FixedPointLayer(sync_free=True)``) and
  reads it on the host in the host loop; token accuracy at the training length 20, where it learns part of the
  task in 300 steps.

Per case: each seed's number on both loops, the means and standard deviations, and a two-sided Mann-Whitney U test
(scipy) of "the two loops' numbers come from one distribution". The loops draw different batches from one seed
(numpy on the host, the counter-based device sampler), so a pair is two runs, not one run twice. CPU.

    python benchmarks/loops_parity_seeds.py [--seeds 20] [--cases diagonal,fixed-point] [--record]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CASES = {
    "diagonal": (dict(task="parity", layer="diagonal", eig_range=(-1, 1), width=16, heads=2, steps=150, batch=32,
                      lr=1e-2, train_len=(3, 40), test_len=(40, 256), eval_n=128, short_conv=False),
                 "final_accuracy", "256", "final-position accuracy at 256"),
    "fixed-point": (dict(task="parity", layer="fixed-point", width=16, heads=2, steps=300, batch=32, lr=1e-2,
                         train_len=(3, 20), test_len=(20, 64), eval_n=128, short_conv=False),
                    "test_accuracy", "20", "token accuracy at 20"),
}


def run_case(name: str, seeds: int) -> dict:
    import torch
    from scipy.stats import mannwhitneyu

    from lrnnkit.learn.train import TrainConfig, train
    torch.set_num_threads(1)
    kw, key, length, what = CASES[name]
    acc = {"host": [], "device": []}
    t0 = time.perf_counter()
    print(f"{name}: {what}\nseed  host    device")
    for seed in range(seeds):
        for loop in acc:
            acc[loop].append(train(TrainConfig(**kw, seed=seed, loop=loop))[key][length])
        print(f"{seed:4d}  {acc['host'][-1]:.4f}  {acc['device'][-1]:.4f}", flush=True)
    p = float(mannwhitneyu(acc["host"], acc["device"], alternative="two-sided").pvalue)
    out = {"case": name, "metric": what, "seeds": seeds, "host": acc["host"], "device": acc["device"],
           "mean": {k: statistics.mean(v) for k, v in acc.items()},
           "stdev": {k: statistics.stdev(v) if len(v) > 1 else 0.0 for k, v in acc.items()},
           "mannwhitney_p": p, "seconds": round(time.perf_counter() - t0, 1)}
    print("mean  " + "  ".join(f"{out['mean'][k]:.4f}" for k in acc) + f"   Mann-Whitney U p = {p:.2f}")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--cases", default="diagonal,fixed-point", help=f"comma-separated, of {', '.join(CASES)}")
    ap.add_argument("--record", action="store_true", help="write the table into benchmarks/RESULTS.md")
    a = ap.parse_args(argv)
    cases = [c for c in a.cases.split(",") if c]
    bad = [c for c in cases if c not in CASES]
    if bad or a.seeds < 2:
        ap.error(f"unknown case(s) {', '.join(bad)} (known: {', '.join(CASES)})" if bad else
                 f"--seeds must be at least 2, got {a.seeds}")
    res = [run_case(c, a.seeds) for c in cases]
    if a.record:
        from benchmarks._record import record, table
        rows = [[r["case"], r["metric"], r["seeds"], f"{r['mean']['host']:.3f} +- {r['stdev']['host']:.3f}",
                 f"{r['mean']['device']:.3f} +- {r['stdev']['device']:.3f}", f"{r['mannwhitney_p']:.2f}",
                 r["seconds"]] for r in res]
        notes = ("`python benchmarks/loops_parity_seeds.py --seeds N --record` on the CPU. Each seed trains twice, "
                 "on the host loop (numpy batches, the step driven from the CPU) and on the device loop (the "
                 "counter-based device sampler, no host synchronisation; the fixed-point layer's stopping rule "
                 "decided on the device). The two loops draw different batches from one seed, so the test asks "
                 "whether the two samples of runs come from one distribution (two-sided Mann-Whitney U): a small "
                 "p would say the loops learn differently.\n\nPer seed (host / device): " + "; ".join(
                     f"{r['case']}: " + ", ".join(f"{h:.3f}/{d:.3f}" for h, d in zip(r["host"], r["device"]))
                     for r in res))
        record("learning: host and device loops",
               table(["case", "metric", "seeds", "host mean +- sd", "device mean +- sd", "Mann-Whitney p",
                      "seconds"], rows), notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
