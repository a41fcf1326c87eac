"""Milliseconds per training batch: today's numpy sampler against :mod:`lrnnkit.learn.device_sampler`, for every task
shape (task, batch, training lengths) of ``lrnnkit experiment NAME --scale paper``.

    python3 benchmarks/bench_device_sampler.py [--device cuda] [--only parity,mod-arith-br:5] [--budget 0.3]
                                               [--block 16] [--compile mod-arith-br:5] [--out DIR]

Columns (each a median over repeats of about ``--budget`` seconds, after a warm-up):

* ``numpy``: ``Task.sample(batch, length, batch_rng(seed, s))`` and both arrays moved to the device with
  ``torch.as_tensor`` (synchronised), as the training loop does today;
* ``eager``: ``DeviceSampler.sample(step)`` with ``step`` a device tensor incremented in place, synchronised once
  after the repeats (the kernels queue; no host sync inside);
* ``graph``: ``sample(step)`` and ``step += 1`` captured in one CUDA graph, replayed (CUDA only);
* ``graph/K``: ``sample_block(step, K)`` (K batches at once, the same kernels) and ``step += K`` in one graph,
  per batch (CUDA only);
* ``compiled graph/K`` (only for the tasks named by ``--compile``): ``sample_block`` through
  ``torch.compile(fullgraph=True)`` (inductor fuses each level's pointwise ops), captured as above;
* ``kernels``: CUDA kernels launched by one ``sample`` (torch.profiler; CUDA only), ``graph MiB``: the memory pool
  the captured graph keeps.

Checks on the way (in the JSON and the table): ``equals_cpu`` (the batch on the device is bit-identical to the
same sampler's on the CPU), ``graph equals eager`` (a replay with the step incremented in the graph gives the
eager batches of those steps).

Prints a table; writes ``bench_device_sampler.json`` under ``--out`` (default ``$OUT``, else
``benchmarks/results/device_sampler``). On an H200 the whole run takes about 2 minutes (the numpy sampler of the
two 1024-word bracket shapes is the slowest part); ``--device cpu`` runs the numpy and eager columns only.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


def paper_shapes() -> dict:
    """{(task, batch, (lo, hi)): [experiments]} of every configuration at paper scale."""
    from lrnnkit.learn.experiments import EXPERIMENTS
    shapes: dict = {}
    for name, exp in EXPERIMENTS.items():
        for _, cfg in exp.runs("paper"):
            key = (cfg.task, cfg.batch, tuple(cfg.train_len))
            shapes.setdefault(key, [])
            if name not in shapes[key]:
                shapes[key].append(name)
    return dict(sorted(shapes.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2])))


def timed(fn, budget: float, sync, per: int = 1) -> float:
    """Median ms per call of ``fn`` over rounds of about ``budget`` / 5 seconds (warm-up call first)."""
    fn()
    sync()
    t0 = time.perf_counter()
    fn()
    sync()
    one = max(time.perf_counter() - t0, 1e-6)
    n = max(1, int(budget / 5 / one))
    rounds = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        sync()
        rounds.append((time.perf_counter() - t0) / n)
    return round(1e3 * statistics.median(rounds) / per, 4)


def capture(fn, step, K: int, sync):
    """``fn(step, K)`` and ``step += K`` captured in one CUDA graph (after two warm-up calls on a side stream)."""
    import torch
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            fn(step, K)
    torch.cuda.current_stream().wait_stream(side)
    sync()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = fn(step, K)
        step.add_(K)
    sync()
    return g, out


def bench_shape(task_name: str, batch: int, length, device, budget: float, block: int, compiled: bool) -> dict:
    import torch
    from lrnnkit.learn.device_sampler import device_sampler
    from lrnnkit.learn.tasks import batch_rng, make_task
    task = make_task(task_name)
    cuda = device.type == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    row: dict = {}
    s_old = [0]

    def old():
        x, y = task.sample(batch, length, batch_rng(0, s_old[0]))
        s_old[0] += 1
        return torch.as_tensor(x, device=device), torch.as_tensor(y, device=device)   # as the loop does today

    row["numpy"] = timed(old, budget, sync)
    t0 = time.perf_counter()
    samp = device_sampler(task, batch, length, 0, device)
    row["init_s"] = round(time.perf_counter() - t0, 3)
    row["T"] = samp.T
    step = torch.zeros((), dtype=torch.int64, device=device)

    def eager():
        samp.sample(step)
        step.add_(1)

    row["eager"] = timed(eager, budget, sync)
    if not cuda:
        return row
    cpu = device_sampler(task, batch, length, 0, "cpu").sample(3)
    row["equals_cpu"] = all(torch.equal(u.cpu(), v) for u, v in zip(samp.sample(3), cpu))
    columns = [(samp.sample_block, 1, "graph"), (samp.sample_block, block, f"graph/{block}")]
    if compiled:
        columns.append((torch.compile(samp.sample_block, fullgraph=True, dynamic=False), block,
                        f"compiled graph/{block}"))
    for fn, K, col in columns:
        try:
            before = torch.cuda.memory_allocated()
            t0 = time.perf_counter()
            g, out = capture(fn, step, K, sync)
            row[f"{col} capture_s"] = round(time.perf_counter() - t0, 2)
            row[f"{col} MiB"] = round((torch.cuda.memory_allocated() - before) / 2 ** 20, 1)
            step.fill_(7)
            g.replay()
            row[f"{col} equals eager"] = int(step) == 7 + K and all(
                torch.equal(u, v) for u, v in zip(out, samp.sample_block(7, K)))
            row[col] = timed(g.replay, budget, sync, per=K)
            del g, out
        except Exception as exc:  # noqa: BLE001 - one failed column, the others still run
            row[col] = f"{type(exc).__name__}: {exc}"[:200]
    try:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            samp.sample(step)
            sync()
        row["kernels"] = sum(1 for e in prof.events() if str(e.device_type).endswith("CUDA"))
    except Exception as exc:  # noqa: BLE001 - the count is a side column
        row["kernels"] = f"{type(exc).__name__}"
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default=None, help="cuda (default when available) or cpu")
    ap.add_argument("--only", default=None, help="comma-separated task names")
    ap.add_argument("--budget", type=float, default=0.3, help="seconds of timing per column and shape")
    ap.add_argument("--block", type=int, default=16, help="K of the graph/K column")
    ap.add_argument("--compile", default="", help="comma-separated task names that also get a column "
                    "'compiled graph/K': sample_block through torch.compile (inductor) captured in a graph")
    ap.add_argument("--out", default=os.environ.get("OUT") or os.path.join(HERE, "results", "device_sampler"))
    a = ap.parse_args(argv)
    import torch
    device = torch.device(a.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    only = None if a.only is None else set(a.only.split(","))
    t_start = time.perf_counter()
    rows = []
    for (task, batch, length), exps in paper_shapes().items():
        if only is not None and task not in only:
            continue
        r = {"task": task, "batch": batch, "length": list(length), "experiments": exps}
        try:
            r.update(bench_shape(task, batch, length, device, a.budget, a.block, task in a.compile.split(",")))
        except Exception as exc:  # noqa: BLE001 - one failed shape is a row, the others still run
            r["error"] = f"{type(exc).__name__}: {exc}"[:400]
        rows.append(r)
        print(json.dumps(r), flush=True)
    B = a.block
    cols = ["numpy", "eager", "graph", f"graph/{B}", f"compiled graph/{B}", "kernels", "graph MiB", f"graph/{B} MiB",
            "equals_cpu", "graph equals eager", f"graph/{B} equals eager", f"compiled graph/{B} equals eager"]
    cols = [c for c in cols if any(c in r for r in rows)]
    print(f"\nms per batch on {torch.cuda.get_device_name(device) if device.type == 'cuda' else 'cpu'}\n")
    print("| task | batch | length | T | " + " | ".join(cols) + " |")
    print("|---|---:|---|---:|" + "---:|" * len(cols))
    for r in rows:
        if "error" in r:
            print(f"| {r['task']} | {r['batch']} | {r['length']} | | error: {r['error'][:100]} |")
            continue
        print(f"| {r['task']} | {r['batch']} | {r['length'][0]}..{r['length'][1]} | {r['T']} | "
              + " | ".join(str(r.get(c, "")) for c in cols) + " |")
    doc = {"device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
           "torch": torch.__version__, "budget_s": a.budget, "block": a.block, "rows": rows,
           "seconds": round(time.perf_counter() - t_start, 1)}
    from lrnnkit.fileio import atomic_write_text
    os.makedirs(a.out, exist_ok=True)
    atomic_write_text(os.path.join(a.out, "bench_device_sampler.json"), json.dumps(doc, indent=1) + "\n")
    print(f"\n{doc['seconds']} s; JSON: {os.path.join(a.out, 'bench_device_sampler.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
