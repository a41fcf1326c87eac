"""Does the diagonal layer (the Mamba block for ``--switch selective``) learn the same with a fused path on? Parity at
000 Fig. 1's model (the diagonal configurations of 004's protocol: width 128, one layer, short convolution, lengths
3-40), shortened to ``--steps`` steps of batch ``--batch``, for seeds 0..N-1 trained as one batched model (the
protocol grid's path, :func:`lrnnkit.learn.batched.train_batched`), once with the path off and once on, in one process
on one card. ``--switch``: ``gate``, the gated scan's fused kernels (:data:`lrnnkit.ops.diagonal.gated.FUSED_ON_CUDA`:
gate + scan + silu in one pass each way, against the torch expression around the Triton scan); ``conv``, the batched
short convolution in place (:data:`lrnnkit.learn.batched.CONV_IN_PLACE_ON_CUDA`); ``norm``, the batched fused RMSNorm
(:data:`lrnnkit.learn.batched.RMS_FUSED_ON_CUDA`); ``selective``, the Mamba block's fused selective scan
(:data:`lrnnkit.ops.diagonal.selective.FUSED_ON_CUDA`), which trains the ``mamba`` layer in place of the diagonal one.

The two arms of a seed start from the same weights and draw the same batches (the counter-based device sampler), so a
pair differs only by the kernels' rounding; after enough steps that difference grows into two different runs, so the
question is one of distribution: per eigenvalue range, each seed's token accuracy at the longest training length
(40) and final-position accuracy at 256 on both arms, the means and standard deviations, and a two-sided Wilcoxon
signed-rank test of the paired differences (scipy; p = 1 where every pair is equal). Wall seconds per arm (the
compilation of the first arm's kernels included in its time) are printed beside them.

    python3 benchmarks/fused_gate_seeds.py [--seeds 8] [--steps 2000] [--batch 256] [--switch gate|conv|norm|selective]
                                           [--json OUT.json]
    python3 benchmarks/fused_gate_seeds.py --smoke      # CPU, tiny: the plumbing only (both arms are the reference)
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

RANGES = {"[-1,1]": (-1.0, 1.0), "[0,1]": (0.0, 1.0)}
METRICS = (("test_accuracy", "token accuracy at"), ("final_accuracy", "final-position accuracy at"))
SMOKE = dict(width=16, heads=2, batch=8, steps=4, train_len=(3, 10), test_len=(10, 256), eval_n=8)


def configs(eig: str, seeds: int, steps: int, batch: int, device: str, smoke: bool,
            layer: str = "diagonal") -> list:
    import dataclasses

    from lrnnkit.learn.train import TrainConfig
    kw = dict(task="parity", layer=layer, eig_range=RANGES[eig], width=128, heads=4, layers=1, steps=steps,
              batch=batch, lr=1e-3, train_len=(3, 40), test_len=(40, 256), eval_n=1024, short_conv=True,
              device=device, loop="device", checkpoint_every=0)
    if smoke:
        kw.update(SMOKE)
    return [dataclasses.replace(TrainConfig(**kw), seed=s) for s in range(seeds)]


def arm(cfgs: list, fused: bool, switch: str = "gate") -> tuple:
    """The runs' results with the fused path ``switch`` (:data:`benchmarks._switches.SWITCHES`) on or off
    (``fused``) and the wall seconds they took."""
    import torch

    from benchmarks._switches import switched
    from lrnnkit.learn.batched import train_batched
    with switched(**{switch: fused}):
        t0 = time.perf_counter()
        res = train_batched(cfgs)
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        return res, round(time.perf_counter() - t0, 1)


def paired(off: list, on: list) -> float:
    """Two-sided Wilcoxon signed-rank p of the paired differences (1.0 where all are zero)."""
    from scipy.stats import wilcoxon
    if all(a == b for a, b in zip(off, on)):
        return 1.0
    return float(wilcoxon(off, on, alternative="two-sided", zero_method="zsplit").pvalue)


def run_case(eig: str, a) -> dict:
    layer = "mamba" if a.switch == "selective" else "diagonal"      # the path exists in that layer only
    cfgs = configs(eig, a.seeds, a.steps, a.batch, "cpu" if a.smoke else "cuda", a.smoke, layer)
    got, seconds = {}, {}
    for name, fused in (("off", False), ("on", True)):
        got[name], seconds[name] = arm(cfgs, fused, a.switch)
    out = {"switch": a.switch, "layer": layer, "eig_range": eig, "seeds": a.seeds, "steps": cfgs[0].steps,
           "batch": cfgs[0].batch, "seconds": seconds,
           "metrics": {}}
    print(f"\n{a.switch} off / on: {layer} {eig}, {a.seeds} seeds batched, {cfgs[0].steps} steps of batch "
          f"{cfgs[0].batch}; wall s "
          f"off {seconds['off']}, on {seconds['on']}")
    for (key, name), length in zip(METRICS, (cfgs[0].train_len[1], cfgs[0].test_len[-1])):
        what, length = f"{name} {length}", str(length)
        vals = {k: [float(r[key][length]) for r in v] for k, v in got.items()}
        m = {"off": vals["off"], "on": vals["on"],
             "mean": {k: statistics.mean(v) for k, v in vals.items()},
             "stdev": {k: statistics.stdev(v) if len(v) > 1 else 0.0 for k, v in vals.items()},
             "wilcoxon_p": paired(vals["off"], vals["on"])}
        out["metrics"][what] = m
        print(f"  {what}: off {m['mean']['off']:.4f} +- {m['stdev']['off']:.4f}, on {m['mean']['on']:.4f} +- "
              f"{m['stdev']['on']:.4f}, Wilcoxon p = {m['wilcoxon_p']:.2f}")
        print("    per seed (off/on): " + ", ".join(f"{x:.3f}/{y:.3f}" for x, y in zip(vals["off"], vals["on"])))
    return out


def main(argv=None) -> int:
    from benchmarks._switches import SWITCHES
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--ranges", default="[-1,1],[0,1]", help="eigenvalue ranges: [-1,1] and/or [0,1]")
    ap.add_argument("--switch", choices=tuple(SWITCHES), default="gate",
                    help="the fused path the two arms differ in: the gated scan (gate), the batched model's in-place "
                         "short convolution (conv) or its fused RMSNorm (norm)")
    ap.add_argument("--json", default=None)
    ap.add_argument("--smoke", action="store_true", help="CPU, tiny shapes (both arms run the torch reference)")
    a = ap.parse_args(argv)
    ranges = [r for r in a.ranges.replace("],", "];").split(";") if r]
    bad = [r for r in ranges if r not in RANGES]
    if bad or a.seeds < 2 or a.steps < 1 or a.batch < 1:
        ap.error(f"unknown range(s) {', '.join(bad)} (known: {', '.join(RANGES)})" if bad else
                 f"--seeds must be at least 2 and --steps, --batch at least 1 (got {a.seeds}, {a.steps}, {a.batch})")
    import torch
    if not a.smoke and not torch.cuda.is_available():
        print("fused_gate_seeds.py: no CUDA device (the fused kernels run on CUDA only); use --smoke on the CPU",
              file=sys.stderr)
        return 2
    doc = {"device": "cpu" if a.smoke else torch.cuda.get_device_name(0), "torch": torch.__version__,
           "cases": [run_case(r, a) for r in ranges]}
    if a.json:
        from lrnnkit.fileio import atomic_write_text
        atomic_write_text(a.json, json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
