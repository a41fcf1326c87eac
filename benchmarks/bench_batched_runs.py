"""Runs x steps per second for R runs of one shape on one card: one run alone, R separate processes packed on the card
at once (the sweep's packing), and one batched model of R runs (:mod:`lrnnkit.learn.batched`).

    python3 benchmarks/bench_batched_runs.py [--runs 4,8] [--seconds 3] [--only s5-deltanet,...] [--out DIR]
    python3 benchmarks/bench_batched_runs.py --smoke          # CPU, tiny shapes, seconds

Shapes (``--only``): configurations of ``lrnnkit experiment NAME --scale paper`` (:data:`SHAPES`: 000-s5's
swaps-only DeltaNet [-1,1] one layer, batch 512 at length 32; 000-parity's DeltaNet [-1,1] and Mamba-like diagonal
[-1,1], two layers, batch 1024 at lengths 3-40; with ``--only``, 002's Sum(5) block-diagonal, width 64, batch 256
at length 40). Per shape, each mode's steps are the device loop's
(:class:`lrnnkit.learn.step.DeviceStep`: device sampler, fused AdamW, the step captured as one CUDA graph; for the
batched model :class:`lrnnkit.learn.batched.BatchedStep`, the same with R runs in one graph), run ``WARM`` steps
(compilation, the capture), synchronised, then timed for about ``--seconds`` seconds in blocks of 10 steps:

* ``alone``: one run in this process;
* ``packed R``: R fresh processes of this script (``--child``) that each warm up, wait at a barrier, and then time
  their steps over the same window; runs x steps/s = the sum of their steps/s;
* ``batched R``: one model of R runs (seeds 0..R-1) in this process; runs x steps/s = R x its steps/s.

First a check that the batched model trains, on this device, what the runs trained alone reach (three small
DeltaProduct runs: :func:`lrnnkit.learn.batched.difference_from_separate`). Prints a table (runs x steps/s and the speed-up over ``alone``); writes ``bench_batched_runs.json`` under ``--out``
(default ``$OUT``, else ``benchmarks/results/batched_runs``). ``--budget`` (seconds) skips what would
start after it (default 190), so the whole call stays inside about 4 minutes on an H200.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

WARM = 6                 # > EAGER_STEPS: the capture happens inside the warm-up
BLOCK = 10               # steps between the host's clock reads (one synchronisation each)
# name -> (experiment, configuration label at --scale paper[, the layer in its place]); parity-diagonal: lrnnkit's
# one-state Mamba-like layer at the shape of 000-parity's Mamba configuration (which trains Mamba's block)
SHAPES = {"s5-deltanet": ("000-s5", "S5 swaps only, DeltaNet [-1,1] 1L"),
          "parity-deltanet": ("000-parity", "DeltaNet [-1,1]"),
          "parity-diagonal": ("000-parity", "Mamba [-1,1]", "diagonal"),
          "sum-block": ("002-block-diagonal", "Sum(5)")}
DEFAULT = ("s5-deltanet", "parity-deltanet", "parity-diagonal")     # sum-block with --only (the budget)
# --smoke: the same layers, tiny, on the CPU
SMOKE = dict(width=16, heads=2, batch=8, train_len=(3, 10), steps=1000, test_len=(10,), eval_n=8)


def shape_config(name: str, smoke: bool = False, device: str = "cuda"):
    import dataclasses
    from lrnnkit.learn.experiments import get_experiment
    exp, label, *layer = SHAPES[name]
    cfg = dict(get_experiment(exp).runs("paper"))[label]
    if layer:
        cfg = dataclasses.replace(cfg, layer=layer[0])
    if smoke:
        cfg = dataclasses.replace(cfg, **SMOKE)
    return dataclasses.replace(cfg, device=device, loop="device", max_seconds=None, auto_steps=False)


def _sync(device) -> None:
    import torch
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _timed(run, device, seconds: float, barrier=None) -> dict:
    """WARM steps, then (after ``barrier()``) blocks of BLOCK steps until ``seconds`` have passed."""
    for _ in range(WARM):
        run()
    _sync(device)
    if barrier is not None:
        barrier()
    n, t0 = 0, time.perf_counter()
    while True:
        for _ in range(BLOCK):
            run()
        n += BLOCK
        _sync(device)
        dt = time.perf_counter() - t0
        if dt >= seconds:
            return {"steps": n, "seconds": round(dt, 3), "steps_per_s": round(n / dt, 2), "t0": time.time() - dt}


def time_alone(cfg, seconds: float, barrier=None) -> dict:
    import torch
    from lrnnkit.learn.step import make_step
    from lrnnkit.learn.train import build
    task, model, opt = build(cfg)
    device = torch.device(cfg.device)
    st = make_step(cfg, task, model, opt, device)
    model.train()
    k = [0]

    def run():
        st.run(k[0])
        k[0] += 1
    out = _timed(run, device, seconds, barrier)
    out["graph"] = st.graph
    st.close()
    return out


def time_batched(cfg, R: int, seconds: float) -> dict:
    import dataclasses
    import torch
    from lrnnkit.learn.batched import BatchedStep, build_batched
    cfgs = [dataclasses.replace(cfg, seed=s) for s in range(R)]
    task, model = build_batched(cfgs)
    device = torch.device(cfg.device)
    st = BatchedStep(cfgs, task, model, device)
    out = _timed(st.run, device, seconds)
    out["graph"] = st.graph
    out["runs_x_steps_per_s"] = round(R * out["steps_per_s"], 2)
    if device.type == "cuda":
        out["peak_mib"] = round(torch.cuda.max_memory_allocated(device) / 2**20)
    st.close()
    return out


def time_packed(name: str, R: int, seconds: float, smoke: bool, device: str) -> dict:
    """R child processes; each warms up, writes ``ready.i``, waits for ``go``, times ``seconds``."""
    with tempfile.TemporaryDirectory() as d:
        procs = []
        for i in range(R):
            cmd = [sys.executable, os.path.abspath(__file__), "--child", name, "--seed", str(i), "--sync-dir", d,
                   "--seconds", str(seconds), "--device", device] + (["--smoke"] if smoke else [])
            procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        deadline = time.time() + 180
        while sum(os.path.exists(os.path.join(d, f"ready.{i}")) for i in range(R)) < R:
            if time.time() > deadline or any(p.poll() not in (None, 0) for p in procs):
                for p in procs:
                    p.kill()
                errs = [p.communicate()[1].strip().splitlines()[-1:] for p in procs]
                raise RuntimeError(f"packed children did not get ready: {errs}")
            time.sleep(0.05)
        open(os.path.join(d, "go"), "w").close()
        rows = []
        for p in procs:
            out, err = p.communicate(timeout=seconds + 120)
            if p.returncode:
                raise RuntimeError(f"child failed: {err.strip().splitlines()[-1:]}")
            rows.append(json.loads(out.strip().splitlines()[-1]))
    starts = [r["t0"] for r in rows]
    return {"children": rows, "runs_x_steps_per_s": round(sum(r["steps_per_s"] for r in rows), 2),
            "start_spread_s": round(max(starts) - min(starts), 3)}


def batched_check(device: str) -> dict:
    """Before timing: three small DeltaProduct runs (n_h = 2, short convolution, bf16 off, 12 steps) batched
    against each trained alone on this device (:func:`lrnnkit.learn.batched.difference_from_separate`); ``ok``
    when every parameter agrees to 1e-4 (the tests' tolerance) and the batched step was captured on CUDA."""
    from lrnnkit.learn.batched import difference_from_separate
    from lrnnkit.learn.train import TrainConfig
    try:
        cfgs = [TrainConfig(task="group:S3", layer="deltaproduct", n_h=2, width=32, heads=2, short_conv=True,
                            steps=12, batch=16, train_len=(8, 16), test_len=(16,), lr=3e-3 * (s + 1), seed=s,
                            device=device, bf16=False, loop="device") for s in range(3)]
        d = difference_from_separate(cfgs)
    except Exception as exc:  # noqa: BLE001 - reported, the timings still run
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]}
    d["ok"] = max(d["max_abs"]) <= 1e-4 and (device == "cpu" or d["graph"] == "captured")
    return d


def child(a) -> int:
    import dataclasses
    import torch
    if a.device == "cpu":
        torch.set_num_threads(1)      # R processes on the cores, one thread each, as the parent runs
    cfg = dataclasses.replace(shape_config(a.child, a.smoke, a.device), seed=a.seed)

    def barrier():
        open(os.path.join(a.sync_dir, f"ready.{a.seed}"), "w").close()
        while not os.path.exists(os.path.join(a.sync_dir, "go")):
            time.sleep(0.002)
    print(json.dumps(time_alone(cfg, a.seconds, barrier)), flush=True)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", default=None, help="comma-separated R values (default 4,8; --smoke: 2)")
    ap.add_argument("--seconds", type=float, default=None, help="timed seconds per measurement (default 3; smoke 1)")
    ap.add_argument("--only", default=None, help=f"comma-separated shapes of {', '.join(SHAPES)}")
    ap.add_argument("--smoke", action="store_true", help="tiny shapes on the CPU, in seconds")
    ap.add_argument("--budget", type=float, default=190.0, help="seconds after which no new measurement starts")
    ap.add_argument("--device", default=None)
    ap.add_argument("--out", default=os.environ.get("OUT") or os.path.join(HERE, "results", "batched_runs"))
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--sync-dir", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    import torch
    a.device = a.device or ("cpu" if a.smoke or not torch.cuda.is_available() else "cuda")
    if a.child:
        return child(a)
    torch.set_num_threads(1 if a.device == "cpu" else torch.get_num_threads())
    runs = [int(x) for x in (a.runs or ("2" if a.smoke else "4,8")).split(",")]
    secs = a.seconds or (1.0 if a.smoke else 3.0)
    names = a.only.split(",") if a.only else (["s5-deltanet"] if a.smoke else list(DEFAULT))
    t_start = time.perf_counter()
    rows = []

    def measure(name, mode, R, fn):
        row = {"shape": name, "mode": mode, "runs": R}
        if time.perf_counter() - t_start > a.budget:
            row["error"] = "skipped (budget)"
        else:
            try:
                row.update(fn())
            except Exception as exc:  # noqa: BLE001 - one failed measurement is a row, the others still run
                row["error"] = f"{type(exc).__name__}: {exc}"[:300]
        if "runs_x_steps_per_s" not in row and "steps_per_s" in row:
            row["runs_x_steps_per_s"] = row["steps_per_s"]
        rows.append(row)
        if a.device == "cuda":
            torch.cuda.empty_cache()      # what this measurement held goes back before the next one
        print(json.dumps({k: v for k, v in row.items() if k != "children"}), flush=True)
        return row

    check = batched_check(a.device)
    print(json.dumps({"check": check}), flush=True)
    # the in-process measurements of every shape first (seconds each), then the packed processes (each starts R
    # fresh processes), so that a budget cut leaves whole shapes' batched numbers
    for name in names:
        cfg = shape_config(name, a.smoke, a.device)
        measure(name, "alone", 1, lambda: time_alone(cfg, secs))
        for R in runs:
            measure(name, f"batched {R}", R, lambda: time_batched(cfg, R, secs))
    for name in names:
        for R in runs:
            measure(name, f"packed {R}", R, lambda: time_packed(name, R, secs, a.smoke, a.device))
    order = {(n, m): i for i, (n, m) in enumerate((n, m) for n in names for m in
                                                   ["alone"] + [f"{k} {R}" for R in runs for k in ("batched", "packed")])}
    rows.sort(key=lambda r: order.get((r["shape"], r["mode"]), 0))
    for name in names:
        base = next((r.get("runs_x_steps_per_s") for r in rows if r["shape"] == name and r["mode"] == "alone"), None)
        for r in rows:
            if r["shape"] == name and base and "runs_x_steps_per_s" in r:
                r["speedup_vs_alone"] = round(r["runs_x_steps_per_s"] / base, 2)
    dev = torch.cuda.get_device_name() if a.device == "cuda" else "cpu"
    print(f"\nruns x steps/s on {dev} (device loop; {secs:g} s timed after {WARM} warm-up steps)\n")
    print("| shape | mode | runs x steps/s | x alone | graph |")
    print("|---|---|---:|---:|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['shape']} | {r['mode']} | error: {r['error'][:80]} | | |")
            continue
        g = r.get("graph") or (r["children"][0].get("graph") if r.get("children") else "")
        print(f"| {r['shape']} | {r['mode']} | {r['runs_x_steps_per_s']} | {r.get('speedup_vs_alone', '')} | {g} |")
    print(f"\nbatched = alone on this device (3 DeltaProduct runs, 12 steps): {check.get('ok')} "
          f"(max |difference| {max(check.get('max_abs', [float('nan')])):.1e}, step graph {check.get('graph')})")
    doc = {"device": dev, "torch": torch.__version__, "seconds_timed": secs, "warm": WARM, "check": check,
           "rows": rows,
           "seconds": round(time.perf_counter() - t_start, 1), "smoke": a.smoke}
    from lrnnkit.fileio import atomic_write_text
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "bench_batched_runs.json")
    atomic_write_text(path, json.dumps(doc, indent=1) + "\n")
    print(f"\n{doc['seconds']} s; JSON: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
