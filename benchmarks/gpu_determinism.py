"""Which of the ways a sweep runs a training point changes its bits on a GPU (a sweep carried across
GPU runs was not bit-identical to an uninterrupted one; RESULTS.md "sweep across GPU runs").

    python benchmarks/gpu_determinism.py --device cuda --out DIR [--steps 600] [--stop-at 300] [--ray]

One training configuration (the carry spec's S3 [-1, 1] point, ``deterministic = true``, a loss logged every 10
steps) is run in several ways, each in a fresh Python process unless said otherwise:

* ``fresh-a``, ``fresh-b``: the same run twice (is a run repeatable at all?);
* ``hashseed``: another ``PYTHONHASHSEED`` (set and dict orders);
* ``omp1``: ``OMP_NUM_THREADS=1`` (what a Ray worker gets);
* ``cublas-first``: cuBLAS started before the run sets ``CUBLAS_WORKSPACE_CONFIG`` (no workspace setting);
* ``second-in-process``: the run after another run in the same process (what the serial executor does);
* ``resume``: stopped at ``--stop-at`` in one process, resumed from its checkpoint in another (the carry);
* ``nondeterministic``: ``deterministic = false`` (does the setting matter here?);
* with ``--ray``: the run as a one-point sweep with ``--executor ray`` and with the serial executor.

Each is compared with ``fresh-a``: the first logged step whose loss differs (bit for bit), whether the final
parameters and optimizer state are identical, and whether the result (accuracies, eigenvalues) is. Prints a table
and writes ``DIR/determinism.json``.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

BASE = dict(task="group:S3", layer="deltaproduct", n_h=2, eig_range=[-1.0, 1.0], width=128, heads=4, batch=128,
            lr=2e-3, train_len=[2, 64], test_len=[64, 256], seed=1, log_every=10, checkpoint_every=100,
            deterministic=True)
RESULT_KEYS = ("test_accuracy", "final_accuracy", "eigenvalues", "train_accuracy")


def child(doc: dict) -> None:
    """Run in a fresh process: ``doc = {"config": ..., "out": ..., "stop_at": ..., "before": ...}``."""
    import torch
    from lrnnkit.learn.train import TrainConfig, train
    if doc.get("before") == "cublas" and torch.cuda.is_available():
        a = torch.ones(64, 64, device="cuda")
        (a @ a).sum().item()
    if doc.get("before") == "other-run":
        other = dict(doc["config"], task="parity", seed=7, steps=50)
        train(TrainConfig(**other), None, evaluate_at_end=False)
    res = train(TrainConfig(**doc["config"]), doc["out"], stop_at=doc.get("stop_at"))
    print(json.dumps({k: res.get(k) for k in RESULT_KEYS}, default=str))


def spawn(doc: dict, env_extra: dict | None = None) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(x for x in (ROOT, os.environ.get("PYTHONPATH")) if x))
    env.setdefault("PYTHONHASHSEED", "0")
    env.update(env_extra or {})
    if doc.get("before") == "cublas":
        env.pop("CUBLAS_WORKSPACE_CONFIG", None)
    proc = subprocess.run([sys.executable, __file__, "--child", json.dumps(doc)], capture_output=True, text=True,
                          env=env, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"child failed ({proc.returncode}): {proc.stderr[-1500:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def losses(run_dir: str) -> dict:
    out = {}
    with open(os.path.join(run_dir, "metrics.jsonl")) as fh:
        for line in fh:
            r = json.loads(line)
            out[r["step"]] = r["loss"]
    return out


def final_state(run_dir: str):
    """``(step, {name: tensor})`` of the run's last checkpoint (model and optimizer tensors)."""
    from lrnnkit.learn import checkpoint as ck
    from lrnnkit.learn.train import TrainConfig
    doc, tensors, _ = ck.find(run_dir, TrainConfig.from_json)
    return int(doc["step"]), tensors


def compare(ref_dir: str, ref_res: dict, run_dir: str, res: dict) -> dict:
    import torch
    la, lb = losses(ref_dir), losses(run_dir)
    first = next((s for s in sorted(la) if s in lb and la[s] != lb[s]), None)
    sa, ta = final_state(ref_dir)
    sb, tb = final_state(run_dir)
    same_state = sa == sb and ta.keys() == tb.keys() and all(          # bit for bit (torch.equal: -0.0 == 0.0)
        ta[k].dtype == tb[k].dtype and ta[k].contiguous().view(-1).view(torch.uint8).equal(
            tb[k].contiguous().view(-1).view(torch.uint8)) for k in ta)
    differ = [k for k in RESULT_KEYS if ref_res.get(k) != res.get(k)]
    return {"first_loss_difference_at_step": first, "losses_compared": len(set(la) & set(lb)),
            "final_state_identical": same_state, "result_differs_in": differ,
            "final_loss": [la[max(la)], lb[max(lb)]]}


def ray_pair(cfg: dict, out: str) -> dict:
    """The configuration as a one-point sweep, Ray executor and serial executor, compared with
    ``compare_sweep_stores``."""
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    from compare_sweep_stores import compare as compare_stores
    lines = ['kind = "train"', 'num_gpus = "auto"' if cfg["device"].startswith("cuda") else "", "", "[params]"]
    for k, v in cfg.items():
        if k not in ("seed",):
            lines.append(f"{k} = {json.dumps(v)}")
    lines += ["", "[grid]", "seed = [1]"]
    spec = os.path.join(out, "one_point.toml")
    with open(spec, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(x for x in (ROOT, os.environ.get("PYTHONPATH")) if x))
    stores = {}
    for ex in ("ray", "serial"):
        d = os.path.join(out, f"sweep-{ex}")
        p = subprocess.run([sys.executable, "-m", "lrnnkit", "sweep", spec, "--executor", ex, "--out", d, "--no-plots"],
                           capture_output=True, text=True, env=env, check=False)
        if p.returncode != 0:
            return {"error": f"{ex} sweep failed ({p.returncode}): {p.stderr[-600:]}"}
        stores[ex] = d
    return compare_stores(stores["ray"], stores["serial"])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--out", required=False)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--stop-at", type=int, default=300)
    ap.add_argument("--ray", action="store_true")
    ap.add_argument("--only", default=None, help="comma-separated variant names")
    a = ap.parse_args(argv)
    if a.child is not None:
        child(json.loads(a.child))
        return 0
    if not a.out:
        ap.error("--out is required")
    os.makedirs(a.out, exist_ok=True)
    cfg = dict(BASE, steps=a.steps, device=a.device)
    d = lambda nm: os.path.join(a.out, nm)  # noqa: E731
    variants = {
        "fresh-b": lambda: spawn({"config": cfg, "out": d("fresh-b")}),
        "hashseed": lambda: spawn({"config": cfg, "out": d("hashseed")}, {"PYTHONHASHSEED": "12345"}),
        "omp1": lambda: spawn({"config": cfg, "out": d("omp1")}, {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}),
        "cublas-first": lambda: spawn({"config": cfg, "out": d("cublas-first"), "before": "cublas"}),
        "second-in-process": lambda: spawn({"config": cfg, "out": d("second-in-process"), "before": "other-run"}),
        "resume": lambda: (spawn({"config": cfg, "out": d("resume"), "stop_at": a.stop_at}),
                           spawn({"config": cfg, "out": d("resume")}))[1],
        "nondeterministic": lambda: spawn({"config": dict(cfg, deterministic=False), "out": d("nondeterministic")}),
    }
    only = None if a.only is None else set(a.only.split(","))
    t0 = time.perf_counter()
    ref = spawn({"config": cfg, "out": d("fresh-a")})
    rows = {}
    for name, fn in variants.items():
        if only is not None and name not in only:
            continue
        t = time.perf_counter()
        try:
            res = fn()
            rows[name] = compare(d("fresh-a"), ref, d(name), res)
        except Exception as exc:  # noqa: BLE001 - one failed variant is a row, the others still run
            rows[name] = {"error": f"{type(exc).__name__}: {exc}"[:800]}
        rows[name]["seconds"] = round(time.perf_counter() - t, 1)
        print(name, json.dumps(rows[name]), flush=True)
    if a.ray:
        rows["ray-vs-serial sweep"] = ray_pair(cfg, a.out)
        print("ray-vs-serial", json.dumps(rows["ray-vs-serial sweep"])[:1500], flush=True)
    import torch
    dev = torch.cuda.get_device_name(0) if a.device.startswith("cuda") else "cpu"
    doc = {"device": dev, "torch": torch.__version__, "config": cfg, "stop_at": a.stop_at, "rows": rows,
           "seconds": round(time.perf_counter() - t0, 1)}
    print("\n| variant | first logged step with another loss | final parameters and optimizer identical | "
          "result differs in |\n|---|---|---|---|")
    for name, r in rows.items():
        if "rows" in r or "equal" in r:
            print(f"| {name} | | stores equal: {r.get('equal')} | {[x.get('why') for x in r.get('rows', [])]} |")
        elif "error" in r:
            print(f"| {name} | error: {r['error'][:120]} | | |")
        else:
            print(f"| {name} | {r['first_loss_difference_at_step']} | {r['final_state_identical']} | "
                  f"{', '.join(r['result_differs_in']) or '-'} |")
    from lrnnkit.fileio import atomic_write_text
    atomic_write_text(os.path.join(a.out, "determinism.json"), json.dumps(doc, indent=1, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
