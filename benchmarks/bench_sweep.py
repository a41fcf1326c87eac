"""Benchmark of lrnnkit sweep: the collapse grid (every construction x 5 formats x 3 cast policies)
serial vs Ray on this machine's cores, Ray's overhead per task, and a small training grid packed with fractional
resources vs run one after the other.

    .venv/bin/python benchmarks/bench_sweep.py [--steps 10000] [--proof-steps 100] [--cpus N] [--train-runs 4]
                                               [--section sweep] [--results PATH] [--no-record] [--out DIR]

    .venv/bin/python benchmarks/bench_sweep.py --packing 1,2,4,8 [--device cuda] [--packing-steps 300]
                                               [--packing-layers 3] [--packing-width 256] [--packing-batch 64]

``--packing K1,K2,..``: the same train point run K at a time on one GPU (Ray, ``num_gpus = 1/K``) for each K,
printing runs per hour and each run's peak GPU memory (``torch.cuda.max_memory_allocated`` in the run's worker)
beside the peak that ``num_gpus = "auto"`` measures before the sweep (:mod:`lrnnkit.sweep.packing`: one step on
the driver's GPU, and the CPU estimate of the same step) and the share it would give; records the section
``sweep-packing``. ``--device cpu`` (a logical GPU, runs on the CPU; peaks not measured) is a dry run of the
script.

Each construction runs on an automaton it applies to (table CASES). The ``proof`` cast policy (paper 000, App. A.3:
every term of the unrolled sum cast) recomputes O(t) exact terms per step, so it runs ``--proof-steps`` steps
(lrnnkit caps it at 3000; 2000 steps take ~200 s per point here). Records the section ``sweep`` of
benchmarks/RESULTS.md (unless --no-record).
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from fractions import Fraction

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _record import RESULTS, record, table  # noqa: E402

from lrnnkit.sweep import run_sweep, strip_meta  # noqa: E402

CASES = [("cyclic-rotation", "counter:5"), ("householder-permutation", "group:S3"), ("krohn-rhodes", "flipflop"),
         ("krohn-rhodes-as-printed", "flipflop"), ("modadd-reflections", "counter:5"), ("parity-affine", "parity"),
         ("parity-sign", "parity"), ("deltaproduct-symmetric", "group:S3"), ("dihedral-deltanet", "group:D4"),
         ("dihedral-deltanet-as-printed", "group:D4"), ("rotation-3d", "group:S4"),
         ("block-diagonal-normalized", "even-pairs"), ("bilinear-abelian-rotations", "group:Z5"),
         ("bilinear-onehot", "flipflop"), ("bilinear-random-parity", "parity")]
FORMATS = ["fp8-e4m3-ieee", "bf16", "fp16", "e5m7", "fp32"]


def collapse_spec(steps: int, proof_steps: int, cases=CASES) -> dict:
    return {"kind": "collapse", "seed": 0,
            "grid": {"case": [{"construction": c, "source": s} for c, s in cases], "format": FORMATS,
                     "run": [{"policy": "op", "steps": steps}, {"policy": "matvec", "steps": steps},
                             {"policy": "proof", "steps": proof_steps}]}}


def noop(point, seed):
    return {"x": point["i"]}


def train_and_peak(point, seed):
    """A train point (the sweep's own job), with the peak GPU memory of its worker process."""
    import torch
    from lrnnkit.sweep.jobs import run_train
    res = run_train(point, seed)
    res["peak_bytes"] = torch.cuda.max_memory_allocated() if torch.cuda.is_available() else None
    return res


def packing_main(a) -> int:
    """``--packing``: runs per hour and peak memory per run, K runs at a time on one card (module docstring)."""
    import ray
    import torch
    from lrnnkit.learn.memory import peak_bytes
    from lrnnkit.learn.train import TrainConfig
    from lrnnkit.sweep.packing import gpu_share
    ks = [int(k) for k in a.packing.split(",")]
    cuda = a.device == "cuda"
    if cuda and not torch.cuda.is_available():
        print("--device cuda: no CUDA device here (use --device cpu for a dry run)", file=sys.stderr)
        return 2
    point = {"task": "parity", "layer": a.train_layer, "layers": a.packing_layers, "width": a.packing_width,
             "heads": 4, "short_conv": True, "steps": a.packing_steps, "batch": a.packing_batch,
             "train_len": [2, a.packing_len], "test_len": [a.packing_len], "eval_n": 256, "log_every": 50,
             "device": a.device}
    card = torch.cuda.get_device_properties(0).total_memory if cuda else None
    est_cpu = peak_bytes(TrainConfig(**{**point, "device": "cpu"}))
    est_gpu = peak_bytes(TrainConfig(**point)) if cuda else None
    share = gpu_share(est_gpu, card) if cuda else None
    work = a.out or tempfile.mkdtemp(prefix="bench-packing-")
    ray.init(address="local", num_cpus=max(ks) * 2, num_gpus=1, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    mib = 2**20
    rows, ok = [], True
    run_peaks = []
    for k in ks + ["auto"]:
        n = max(ks) if k == "auto" else k
        spec = {"kind": "train", "num_gpus": 1 / k if k != "auto" else "auto", "num_cpus": 1, "params": point,
                "grid": {"replicate": list(range(n))}}
        if k == "auto" and not cuda:
            spec["gpu_memory_gb"] = 80
        res, wall = timed(lambda: run_sweep(spec, os.path.join(work, f"k{k}"), "ray", job_fn=train_and_peak,
                                            progress=False, plots=False))
        ok = ok and res["done"] == n
        peaks = [r.get("peak_bytes") for r in res["records"] if r["status"] == "ok"]
        run_peaks += [x for x in peaks if x is not None]
        peak = f"{max(peaks) / mib:.0f}" if peaks and peaks[0] is not None else "n/a"
        errs = sorted({r["error"].splitlines()[0][:80] for r in res["records"] if r["status"] != "ok"})
        got = sorted({r["meta"].get("gpu_share") for r in res["records"]} - {None})
        label = f"auto ({n} runs): {', '.join(str(Fraction(x)) for x in got)}" if k == "auto" else f"1/{k}"
        rows.append([n, label, res["done"], f"{wall:.1f}", f"{3600 * res['done'] / wall:.0f}", peak,
                     "; ".join(errs) or "-"])
        print(f"num_gpus {label}: {res['done']}/{n} ok in {wall:.1f} s, peak {peak} MiB per run", flush=True)
    ray.shutdown()
    body = table(["runs", "num_gpus (auto: the shares it gave)", "ok", "wall s", "runs per hour",
                  "peak MiB per run (max)", "errors"], rows)
    est = (f"Peak of one step measured before the sweep (num_gpus = \"auto\"): "
           f"{'on the GPU ' + format(est_gpu / mib, '.0f') + ' MiB, ' if cuda else ''}CPU estimate "
           f"{est_cpu / mib:.0f} MiB" + (f"; share on this {card / 2**30:.1f} GiB card: {share}" if cuda else "")
           + (f"; largest peak of a whole run {max(run_peaks) / mib:.0f} MiB (GPU probe / run: "
              f"{est_gpu / max(run_peaks):.2f}, CPU estimate / run: {est_cpu / max(run_peaks):.2f})"
              if run_peaks else "") + ".")
    notes = (f"One train point ({a.train_layer}, {a.packing_layers} layers, width {a.packing_width}, 4 heads, "
             f"batch {a.packing_batch}, lengths 2..{a.packing_len}, {a.packing_steps} steps, eval 256 words) run k at "
             f"a time on one {'GPU (' + torch.cuda.get_device_name(0) + ')' if cuda else 'logical GPU, on the CPU'}; "
             f"wall time includes Ray's start of one worker process per run (auto: and the memory probe). {est} "
             f"Reproduce: "
             f"`.venv/bin/python benchmarks/bench_sweep.py --packing {a.packing} --device {a.device} "
             f"--packing-steps {a.packing_steps} --packing-layers {a.packing_layers} --packing-width "
             f"{a.packing_width} --packing-batch {a.packing_batch} --packing-len {a.packing_len}`.")
    if not a.no_record:
        record(a.section if a.section != "sweep" else "sweep-packing", body, notes, path=a.results)
    else:
        print(body)
        print(notes)
    if a.out is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


def timed(f):
    t0 = time.perf_counter()
    r = f()
    return r, time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10_000)
    ap.add_argument("--proof-steps", type=int, default=100)
    ap.add_argument("--cpus", type=int, default=os.cpu_count())
    ap.add_argument("--noop-tasks", type=int, default=400)
    ap.add_argument("--train-runs", type=int, default=4)
    ap.add_argument("--train-steps", type=int, default=20)
    ap.add_argument("--gpu-fraction", type=float, default=0.25)
    ap.add_argument("--train-layer", default="deltanet")
    ap.add_argument("--section", default="sweep")
    ap.add_argument("--results", default=RESULTS)
    ap.add_argument("--out", default=None, help="keep the sweep outputs (records, heat map) here")
    ap.add_argument("--no-record", action="store_true")
    ap.add_argument("--packing", default=None, help="K1,K2,..: one train point K at a time on one GPU")
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda", help="--packing: where the runs train")
    ap.add_argument("--packing-steps", type=int, default=300)
    ap.add_argument("--packing-layers", type=int, default=3)
    ap.add_argument("--packing-width", type=int, default=256)
    ap.add_argument("--packing-batch", type=int, default=64)
    ap.add_argument("--packing-len", type=int, default=64)
    a = ap.parse_args(argv)
    if a.packing:
        return packing_main(a)
    import ray
    import torch
    work = a.out or tempfile.mkdtemp(prefix="bench-sweep-")
    spec = collapse_spec(a.steps, a.proof_steps)
    n = len(CASES) * len(FORMATS) * 3
    print(f"collapse grid: {n} points ({len(CASES)} constructions x {len(FORMATS)} formats x 3 policies), "
          f"{a.steps} steps (proof policy: {a.proof_steps}); {a.cpus} CPUs", flush=True)

    ser, t_ser = timed(lambda: run_sweep(spec, os.path.join(work, "serial"), "serial", progress=False))
    print(f"serial: {t_ser:.1f} s", flush=True)
    _, t_init = timed(lambda: ray.init(address="local", num_cpus=a.cpus, include_dashboard=False, log_to_driver=False,
                                       configure_logging=False))
    rr, t_ray = timed(lambda: run_sweep(spec, os.path.join(work, "ray"), "ray", progress=False))
    print(f"ray: {t_ray:.1f} s (+ {t_init:.1f} s to start Ray)", flush=True)
    same = strip_meta(ser["records"]) == strip_meta(rr["records"])
    task_s = sum(r["meta"]["seconds"] for r in rr["records"])
    ser_task_s = sum(r["meta"]["seconds"] for r in ser["records"])
    over_grid = (t_ray * a.cpus - task_s) / n

    noop_spec = {"kind": "noop", "grid": {"i": list(range(a.noop_tasks))}}
    _, t_noop = timed(lambda: run_sweep(noop_spec, os.path.join(work, "noop"), "ray", job_fn=noop, progress=False,
                                        plots=False))
    _, t_noop_ser = timed(lambda: run_sweep(noop_spec, os.path.join(work, "noop-serial"), "serial", job_fn=noop,
                                            progress=False, plots=False))
    print(f"no-op tasks: {a.noop_tasks} in {t_noop:.2f} s on Ray, {t_noop_ser:.2f} s serial", flush=True)

    rows = [["collapse grid, serial (1 process)", n, f"{t_ser:.1f}", "1.00", f"{ser_task_s:.1f}", ""],
            [f"collapse grid, Ray ({a.cpus} CPUs)", n, f"{t_ray:.1f}", f"{t_ser / t_ray:.2f}", f"{task_s:.1f}",
             f"{1e3 * over_grid:.0f}"],
            ["Ray start (ray.init, local)", "", f"{t_init:.1f}", "", "", ""],
            [f"no-op tasks, Ray ({a.cpus} CPUs)", a.noop_tasks, f"{t_noop:.2f}", "", "",
             f"{1e3 * (t_noop * a.cpus) / a.noop_tasks:.1f} (wall/task {1e3 * t_noop / a.noop_tasks:.1f})"],
            ["no-op tasks, serial", a.noop_tasks, f"{t_noop_ser:.2f}", "", "",
             f"{1e3 * t_noop_ser / a.noop_tasks:.2f}"]]

    # training grid: runs packed with fractional resources vs one after the other
    cuda = torch.cuda.is_available()
    tr = {"kind": "train", "params": {"layer": a.train_layer, "width": 32, "heads": 2, "short_conv": True,
                                      "lr": 1e-3, "steps": a.train_steps, "batch": 16, "train_len": [2, 16],
                                      "test_len": [16], "eval_n": 32, "log_every": 10,
                                      "device": "cuda" if cuda else "cpu"},
          "grid": {"task": ["parity"], "replicate": list(range(a.train_runs))}}
    if cuda:
        tr.update(num_gpus=a.gpu_fraction, num_cpus=1)
        packing = f"num_gpus = {a.gpu_fraction} per run (one GPU)"
    else:
        tr.update(num_cpus=0.5)
        packing = "num_cpus = 0.5 per run (no GPU here: CPU-scale stand-in)"
    trs, t_trs = timed(lambda: run_sweep(tr, os.path.join(work, "train-serial"), "serial", progress=False))
    trr, t_trr = timed(lambda: run_sweep(tr, os.path.join(work, "train-ray"), "ray", progress=False))
    print(f"training grid: serial {t_trs:.1f} s, packed {t_trr:.1f} s; ok {trs['done']}/{trr['done']}", flush=True)
    rows += [[f"train grid ({a.train_runs} runs x {a.train_steps} steps), serial", a.train_runs, f"{t_trs:.1f}",
              "1.00", "", ""],
             [f"train grid, Ray packed: {packing}", a.train_runs, f"{t_trr:.1f}", f"{t_trs / t_trr:.2f}", "", ""]]
    ray.shutdown()

    body = table(["run", "tasks", "wall s", "speedup", "sum of task s", "Ray overhead ms/task (worker time)"], rows)
    notes = (f"Collapse grid: {len(CASES)} constructions (each on an automaton it applies to) x "
             f"{', '.join(FORMATS)} x policies op, matvec ({a.steps} steps) and proof ({a.proof_steps} steps: the "
             f"proof model is O(t^2)), nearest-even; seeded random words (one-letter alphabets: the periodic word). "
             f"Serial and Ray records identical (timing excluded): {'yes' if same else 'NO'}; "
             f"{ser['done']} ok, {ser['failed']} failed per run. Ray overhead per task = (wall x CPUs - sum of task "
             f"times) / tasks, i.e. worker time lost to scheduling, transfers and the driver's store writes "
             f"(fsync per record). Training: {a.train_runs} tiny lrnnkit.learn runs ({a.train_layer}, width 32, "
             f"{a.train_steps} steps), "
             f"{'on ' + torch.cuda.get_device_name(0) if cuda else 'on CPU'}. Reproduce: "
             f"`.venv/bin/python benchmarks/bench_sweep.py --steps {a.steps} --proof-steps {a.proof_steps} "
             f"--cpus {a.cpus}`.")
    if not a.no_record:
        if a.results != RESULTS and not os.path.exists(a.results):
            with open(a.results, "w") as fh:
                fh.write("# Benchmark results\n")
        record(a.section, body, notes, path=a.results)
    else:
        print(body)
        print(notes)
    if a.out is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
