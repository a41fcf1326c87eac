"""Where a protocol job's training step spends its device time: every kernel of one batched step, by total time.

    python3 benchmarks/profile_step.py [--jobs "004-bilinear=diagonal [-1,1], parity;000-parity=DeltaNet [-1,1]"]
                                       [--steps 3] [--gate fused|torch] [--conv in-place|side-by-side]
                                       [--norm fused|torch] [--out DIR]
    python3 benchmarks/profile_step.py --smoke      # the CPU, tiny shapes, seconds

A job is one configuration of ``bench_learning.py --scale paper --protocol`` (its seeds x learning rates as one
batched model, :class:`lrnnkit.learn.batched.BatchedStep`: the device sampler, forward, backward and fused AdamW
of the captured step). Its step body runs eagerly (the capture replays the same kernels, but a profiler sees one
graph launch), ``WARM`` times, then ``--steps`` more under ``torch.profiler``. Per job it prints the wall time of an
eager step, the device time of its kernels (their sum; kernels of one step run one after another on one stream),
the kernel count, the kernels by total device time with the share of each, and the operators (``aten::...``) by the
device time of the kernels each launched itself (the two tables count the same time twice: read one or the other);
writes ``profile_step.json`` under ``--out`` (default ``$OUT``, else the current folder). The step of a small model
is many short kernels: the table says which of them (elementwise glue, norms, the scan, the products, the optimizer)
to fuse first.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

WARM = 3
DEFAULT_JOBS = "004-bilinear=diagonal [-1,1], parity;000-parity=DeltaNet [-1,1]"
TOP = 25


def job_configs(experiment: str, label: str, smoke: bool = False, device: str = "cuda") -> list:
    """The TrainConfigs of one protocol job (:func:`benchmarks.bench_scans.scan_groups`: the configuration's seeds x
    learning rates after :func:`lrnnkit.learn.protocols.follow`, on the device loop; ``smoke``: tiny)."""
    from benchmarks.bench_scans import scan_groups
    from lrnnkit.errors import InputError
    groups = scan_groups({experiment}, smoke, device, layers=None)
    cfgs = next((c for _, lab, c in groups if lab == label), None)
    if cfgs is None:
        raise InputError(f"{experiment} has no configuration {label!r} (its labels: "
                         f"{'; '.join(lab for _, lab, _ in groups) or 'none: not a protocol experiment'})")
    return cfgs


def profile_job(cfgs, steps: int, shapes: bool = False) -> dict:
    """Wall ms of an eager step and the kernels of ``steps`` steps under the profiler, per step; ``shapes``: the
    operators' table keyed by name and input shapes (``aten::copy_ [[1024, 128, 384], ...]``), to tell which copy or
    add of the step a time belongs to."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    from lrnnkit.learn.batched import BatchedStep, build_batched
    dev = torch.device(cfgs[0].device)
    task, model = build_batched(cfgs)
    step = BatchedStep(cfgs, task, model, dev)

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize()
    for _ in range(WARM):
        step._body()
    sync()
    t = time.perf_counter()
    for _ in range(steps):
        step._body()
    sync()
    wall = (time.perf_counter() - t) * 1e3 / steps
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev.type == "cuda" else [])
    with profile(activities=acts, record_shapes=shapes) as prof:
        for _ in range(steps):
            step._body()
        sync()
    kernels, ops = {}, {}
    for e in prof.events():
        on_device = str(getattr(e, "device_type", "")).endswith("CUDA")
        if dev.type == "cuda" and on_device:           # a kernel, memcpy or memset on the GPU
            dt, table = e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total, kernels
        elif not on_device and e.name.startswith("aten::") and (dev.type == "cuda" or not e.cpu_children):
            # an operator: on the GPU by the device time of the kernels it launched itself; on the CPU (leaves)
            dt = (getattr(e, "self_device_time_total", 0) if dev.type == "cuda" else e.self_cpu_time_total)
            table = ops
        else:
            continue
        name = f"{e.name} {e.input_shapes}" if shapes and table is ops else e.name
        n, t = table.get(name, (0, 0.0))
        table[name] = (n + 1, t + dt)
    if dev.type != "cuda":
        kernels = ops                                   # the CPU runs operators, not kernels
    total = sum(t for _, t in kernels.values()) / 1e3 / steps

    def rows(table):
        out = [{"name": k, "calls_per_step": n / steps, "ms_per_step": t / 1e3 / steps,
                "share": (t / 1e3 / steps) / total if total else 0.0} for k, (n, t) in table.items() if t > 0]
        return sorted(out, key=lambda r: -r["ms_per_step"])
    krows = rows(kernels)
    return {"runs": len(cfgs), "wall_ms_per_step": wall, "device_ms_per_step": total,
            "kernels_per_step": sum(r["calls_per_step"] for r in krows), "kernels": krows,
            "operators": rows(ops) if dev.type == "cuda" else [], "config": cfgs[0].to_json()}


def _table(name: str, res: dict) -> str:
    lines = [f"\n{name}: {res['runs']} runs batched; eager step {res['wall_ms_per_step']:.2f} ms wall, "
             f"{res['device_ms_per_step']:.2f} ms in {res['kernels_per_step']:.0f} kernels"]
    for what, key in (("kernel", "kernels"), ("operator (device time of its own kernels)", "operators")):
        if not res[key]:
            continue
        lines += [f"| {what} | calls/step | ms/step | share |", "|---|---:|---:|---:|"]
        lines += [f"| {r['name'][:160]} | {r['calls_per_step']:.0f} | {r['ms_per_step']:.3f} | "
                  f"{100 * r['share']:.1f} % |" for r in res[key][:TOP]]
    return "\n".join(lines)


def parse_jobs(text: str) -> list:
    """``"EXP=LABEL;EXP=LABEL"`` as ``[(EXP, LABEL)]`` (a label may hold commas, not semicolons)."""
    from lrnnkit.errors import InputError
    out = []
    for part in (p.strip() for p in text.split(";") if p.strip()):
        exp, sep, label = part.partition("=")
        if not sep or not exp.strip() or not label.strip():
            raise InputError(f"--jobs takes EXPERIMENT=LABEL;..., got {part!r}")
        out.append((exp.strip(), label.strip()))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", default=DEFAULT_JOBS, help="EXPERIMENT=LABEL;... (default: %(default)s)")
    ap.add_argument("--steps", type=int, default=3, help="profiled steps per job")
    ap.add_argument("--smoke", action="store_true", help="tiny shapes on the CPU")
    ap.add_argument("--gate", choices=("fused", "torch"), default=None,
                    help="the diagonal mixer's gated scan: the fused kernels or the torch expression around the "
                         "Triton scan (default: lrnnkit.ops.diagonal.gated.FUSED_ON_CUDA's setting)")
    ap.add_argument("--conv", choices=("in-place", "side-by-side"), default=None,
                    help="the batched model's short convolution on CUDA: each run's taps on its own rows in place, "
                         "or the runs' channels side by side (default: lrnnkit.learn.batched.CONV_IN_PLACE_ON_CUDA)")
    ap.add_argument("--norm", choices=("fused", "torch"), default=None,
                    help="the batched model's RMSNorms on CUDA: one Triton pass each way, or the torch expression "
                         "(default: lrnnkit.learn.batched.RMS_FUSED_ON_CUDA)")
    ap.add_argument("--shapes", action="store_true", help="the operators' table by name and input shapes")
    ap.add_argument("--out", default=os.environ.get("OUT") or ".")
    ap.add_argument("--debug", action="store_true")
    a = ap.parse_args(argv)
    from lrnnkit.errors import InputError
    try:
        if a.steps < 1:
            raise InputError(f"--steps must be at least 1, not {a.steps}")
        jobs = parse_jobs(a.jobs)
        from benchmarks._switches import state, switched
        with switched(gate=None if a.gate is None else a.gate == "fused",
                      conv=None if a.conv is None else a.conv == "in-place",
                      norm=None if a.norm is None else a.norm == "fused"):
            on = state()
            results = {}
            for exp, label in jobs:
                cfgs = job_configs(exp, label, a.smoke, "cpu" if a.smoke else "cuda")
                res = profile_job(cfgs, a.steps, a.shapes)
                results[f"{exp} / {label}"] = res
                print(_table(f"{exp} / {label}", res), flush=True)
    except InputError as exc:
        if a.debug:
            raise
        print(f"profile_step.py: error: {exc}", file=sys.stderr)
        return 2
    import torch
    doc = {"device": torch.cuda.get_device_name() if not a.smoke else "cpu", "torch": torch.__version__,
           "steps": a.steps, "warm": WARM, "gate": "fused" if on["gate"] else "torch",
           "conv": "in-place" if on["conv"] else "side-by-side", "norm": "fused" if on["norm"] else "torch",
           "jobs": results}
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "profile_step.json")
    with open(path + ".tmp", "w") as fh:
        json.dump(doc, fh, indent=1)
    os.replace(path + ".tmp", path)
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
