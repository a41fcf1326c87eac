"""What each paper-scale experiment needs on this machine's GPU: every configuration of ``lrnnkit experiment NAME
--scale paper`` timed on a few training steps ("every other one says what it needs").

    python benchmarks/paper_scale_cost.py --device cuda [--only 000-parity,...] [--labels S3,...] [--steps 20] [--loops host,device]
                                          [--json OUT.json]
    python benchmarks/paper_scale_cost.py --record COST.json [--ran RESULTS.json ...]   # RESULTS.md section
    python benchmarks/paper_scale_cost.py --gemm-floor [--protocol] [--only ...]   # CPU: the matrix-product floor

For each configuration and each training loop of ``--loops`` (:mod:`lrnnkit.learn.step`: ``host``, the loop driven
from the CPU with numpy batches; ``device``, batches made on the GPU and the step captured as one CUDA graph), in one
process on one GPU: the model is built as the run builds it and trained with :func:`lrnnkit.learn.train.train` (the
run's own loop: data, bf16 autocast on CUDA, AdamW, clipping) for ``W`` = 5 steps (Triton compilation, caches, the
device loop's capture) and then, twice over, for ``W`` and for ``W + steps`` steps from scratch; ms per step = the
difference of the fastest of each over ``steps`` (a difference that is not positive is the row's error). Hours = the
paper's step count x ms per step, the training loop only (the final evaluation on ``eval_n`` words per test length and
the horizon are not in it); peak bytes from :func:`lrnnkit.learn.memory.peak_bytes` say how many such runs share one
card. Prints a table per experiment and the sum; a configuration that fails (out of memory, a size limit) is a row
with its error.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

HERE = os.path.dirname(os.path.abspath(__file__))
WARM = 5
REPEATS = 2             # (short, long) pairs timed; the fastest of each is kept
SECTION = "learning at paper scale"
HEADERS = ["experiment", "configurations", "ms/step", "paper steps", "GPU-hours", "peak MiB"]
RUN_MINUTES = 10        # one call of the GPU machine
GPUS = 2                # the two-GPU kind


def _time_loop(cfg, steps: int) -> dict:
    import torch
    from lrnnkit.learn.train import train
    short = dataclasses.replace(cfg, steps=WARM, max_seconds=None, auto_steps=False, checkpoint_every=0)
    train(short, None, evaluate_at_end=False)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    long = dataclasses.replace(short, steps=WARM + steps)
    t_short, t_long = [], []
    for _ in range(REPEATS):        # the fastest of each: a one-off stall (a late compilation, the allocator)
        t0 = time.perf_counter()    # in a single pair made the difference negative once (000-s5, 2026-11-29)
        train(short, None, evaluate_at_end=False)
        t1 = time.perf_counter()
        res = train(long, None, evaluate_at_end=False)
        t2 = time.perf_counter()
        t_short.append(t1 - t0)
        t_long.append(t2 - t1)
    ms = round(1e3 * (min(t_long) - min(t_short)) / steps, 2)    # the hours below follow from the stored ms
    if ms <= 0:
        raise RuntimeError(f"timing not positive ({ms} ms/step from {REPEATS} pairs: {steps} steps too few to "
                           "time; raise --steps)")
    return {"ms_per_step": ms, "hours": round(cfg.steps * ms / 3.6e6, 3), "step_graph": res.get("step_graph")}


def _configurations(name: str, exp, protocol: bool) -> list:
    """``[(label, TrainConfig)]``: the experiment's ``--scale paper`` runs, or with ``protocol`` each configuration's
    first run as the paper's protocol has it (:func:`lrnnkit.learn.protocols.follow`: e.g. 003's copy at the
    fixed-point training cap of 100)."""
    if not protocol:
        return exp.runs("paper")
    from lrnnkit.learn.protocols import _groups, follow
    return [(label, cfgs[0]) for label, cfgs in _groups(follow(name))]


def time_config(cfg, steps: int, loops=(None,)) -> dict:
    """The configuration's ms per step and hours at the paper's steps on each loop of ``loops`` (None: the
    config's own); the row's top-level ``ms_per_step`` / ``hours`` are the last loop's (the new one, when both)."""
    from lrnnkit.learn.memory import peak_bytes
    row = {"paper_steps": cfg.steps}
    for loop in loops:
        r = _time_loop(cfg if loop is None else dataclasses.replace(cfg, loop=loop), steps)
        if loop is not None:
            row[loop] = r
        row["ms_per_step"], row["hours"] = r["ms_per_step"], r["hours"]
    peak = peak_bytes(cfg)
    row["peak_mib"] = None if peak is None else round(peak / 2**20, 1)
    return row


def gemm_floor(cfg, rate: float) -> dict:
    """The least time a configuration's training can take on its matrix products alone: ``6 P N`` FLOPs at ``rate``
    FLOP/s, P the weights of its ``nn.Linear`` layers (projections, MLP, head; not the embedding, the short
    convolutions or the norms), N the tokens of the paper's steps (steps x batch x the mean training length), 6 =
    2 (multiply-add) x 3 (the forward product and the backward's two). Everything else a step does (the recurrence,
    norms, convolutions, the optimizer) comes on top, so no loop runs the configuration in less."""
    import torch
    from lrnnkit.learn.train import build
    cfg = dataclasses.replace(cfg, device="cpu")
    _, model, _ = build(cfg)
    P = sum(m.weight.numel() for m in model.modules() if isinstance(m, torch.nn.Linear))
    tokens = cfg.steps * cfg.batch * (cfg.train_len[0] + cfg.train_len[1]) / 2
    return {"matmul_params": P, "tokens": tokens, "hours": 6 * P * tokens / rate / 3600}


def makespan_minutes(hours: list, gpus: int = GPUS) -> float:
    """Wall-clock minutes of runs of the given GPU-hours on ``gpus`` cards, one run per card at a time, longest
    first onto the least loaded card (LPT; within 4/3 of the optimum)."""
    load = [0.0] * gpus
    for h in sorted(hours, reverse=True):
        load[load.index(min(load))] += h
    return round(60 * max(load), 1)


def summary_rows(cost: dict) -> list:
    """One row per experiment of a cost document (``--json``): configurations (failed ones counted), the range of
    ms per step, the paper's step counts, the GPU-hours one run after another and the largest peak (``HEADERS``)."""
    rows = []
    for name, e in cost["experiments"].items():
        ok = [r for r in e["rows"] if "error" not in r]
        ms = [r["ms_per_step"] for r in ok]
        pk = [r["peak_mib"] for r in ok if r.get("peak_mib") is not None]
        row = [name, f"{len(e['rows'])}" + (f" ({e['failed']} failed)" if e["failed"] else ""),
               f"{min(ms):.1f}-{max(ms):.1f}" if ms else "-",
               "/".join(f"{n // 1000}k" for n in sorted({r["paper_steps"] for r in e["rows"]})),
               f"{e['hours']:.2f}", f"{max(pk):.0f}" if pk else "-"]
        if len(cost.get("loops", [])) == 2:          # before (host loop) and after (device loop), one run
            old, new = cost["loops"]
            hms = [r[old]["ms_per_step"] for r in ok]
            oh = sum(r[old]["hours"] for r in ok)
            row[2] = f"{min(hms):.1f}-{max(hms):.1f} -> {row[2]}" if hms else "-"
            row[4] = f"{oh:.2f} -> {e['hours']:.2f} ({oh / max(e['hours'], 1e-9):.1f}x)"
            row.append(f"{makespan_minutes([r['hours'] for r in ok]):.1f}")
        rows.append(row)
    return rows


def headers(cost: dict) -> list:
    """The table's columns: with two loops, ms/step and GPU-hours read 'before -> after', and the minutes the
    experiment takes on the two-GPU kind follow."""
    if len(cost.get("loops", [])) == 2:
        old, new = cost["loops"]
        return ["experiment", "configurations", f"ms/step {old} -> {new}", "paper steps",
                f"GPU-hours {old} -> {new}", "peak MiB", f"minutes on {GPUS} GPUs"]
    return HEADERS


def _total(cost: dict, loop: str) -> float:
    return sum(r[loop]["hours"] for e in cost["experiments"].values() for r in e["rows"] if loop in r)


def _verdict(d: dict) -> str:
    """``"; registry: V"``: the verdict of the registry's entry for the results ``d`` (its experiment at its scale)."""
    from lrnnkit.theorems import get
    from lrnnkit.theorems.empirical import entry_id
    return f"; registry: {get(entry_id(d)).verdict}"


def record(cost_path: str, ran: list, notes: str = "", path: str | None = None) -> str:
    """The section "learning at paper scale" of RESULTS.md: per experiment the measured cost of the paper's
    settings (``cost_path``, written by ``--json``) and, where one ran (``ran``: results files of
    ``lrnnkit experiment`` / ``bench_learning.py`` at scale paper), its outcome and why it does or does not count."""
    from benchmarks._record import record as write, table
    from lrnnkit.theorems.empirical import capped_runs
    cost = json.load(open(cost_path))
    runs = {}
    for p in ran:
        d = json.load(open(p))
        runs[d["name"]] = (p, d)
    rows = []
    for row, (name, e) in zip(summary_rows(cost), cost["experiments"].items()):
        if name in runs and not runs[name][1]["runs"]:     # every run superseded (kept in the file, not judged)
            p, d = runs[name]
            status = (f"not run on its current configurations: {len(d.get('superseded') or {})} superseded runs "
                      f"kept{_verdict(d)} (`{os.path.relpath(p, os.path.dirname(HERE))}`)")
        elif name in runs:
            p, d = runs[name]
            caps = capped_runs(d["runs"])
            got = max(r.get("steps", 0) for r in d["runs"].values())
            # the steps the runs were configured for (a protocol's own, e.g. 002's 40,000), else the table's
            paper = max([int((r.get("config") or {}).get("steps") or 0) for r in d["runs"].values()]
                        or [0]) or max(r["paper_steps"] for r in e["rows"])
            cfgs = {r.get("config_label") or k for k, r in d["runs"].items()}
            seeds = {(r.get("config") or {}).get("seed") for r in d["runs"].values()}
            status = (f"ran {len(cfgs)} configurations x {len(seeds)} seed(s) ({len(d['runs'])} runs), {got} of "
                      f"{paper} steps at most ({'capped: open' if caps else 'uncapped'}): "
                      f"{d['judgement'].get('outcome')}{_verdict(d)} (`{os.path.relpath(p, os.path.dirname(HERE))}`)")
        else:
            status = f"not run: needs {e['hours']:.2f} GPU-hours"
        rows.append(row + [status])
    total = sum(e["hours"] for e in cost["experiments"].values())
    body = (f"Cost of every experiment at `--scale paper` on {cost['device']} (torch {cost['torch']}), measured by "
            f"`python3 benchmarks/paper_scale_cost.py --device cuda --steps {cost['steps_timed']} --json COST.json`: "
            "each configuration built as its run builds it and timed on its own training loop (bf16 autocast, AdamW, "
            f"clipping) over a few steps after {cost.get('warm', 3)} warm-up steps; hours = the paper's steps x ms per step, one run after "
            "another, training only (the final evaluation and the horizon are not in it). Peak MiB from "
            "`lrnnkit.learn.memory.peak_bytes` (the sweep packs runs by it).\n\n"
            + table(headers(cost) + ["status"], rows)
            + f"\n\nTotal: {total:.1f} GPU-hours for every experiment at the papers' settings, run one after another"
            + (f" ({cost['loops'][1]} loop; {_total(cost, cost['loops'][0]):.1f} on the {cost['loops'][0]} loop in "
               "the same run)." if len(cost.get("loops", [])) == 2 else "."))
    write(SECTION, body, notes, path=path or os.path.join(HERE, "RESULTS.md"))
    return body


def print_gemm_floor(names: list, protocol: bool, labels: str | None) -> float:
    """The table of :func:`gemm_floor` for the experiments ``names`` (at the H200's dense bf16 rate,
    benchmarks/_floor.py's ``H200``); returns the total hours."""
    from benchmarks._floor import H200
    from lrnnkit.learn.experiments import get_experiment
    rows, total = [], 0.0
    for name in names:
        for label, cfg in _configurations(name, get_experiment(name), protocol):
            if labels and not any(x in label for x in labels.split(",")):
                continue
            f = gemm_floor(cfg, H200["bf16"])
            total += f["hours"]
            rows.append([name, label, f"{f['matmul_params'] / 1e6:.2f}M", f"{f['tokens'] / 1e9:.1f}G",
                         f"{60 * f['hours']:.1f}"])
    from benchmarks._record import table
    print(table(["experiment", "configuration", "matmul weights", "tokens", "floor minutes"], rows))
    print(f"\ntotal: {total:.2f} GPU-hours of matrix products at {H200['bf16'] / 1e12:.0f} TFLOP/s")
    return total


def main(argv=None) -> int:
    from lrnnkit.learn.experiments import get_experiment, list_experiments
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--only", default=None)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--loops", default="host,device", help="training loops timed, in this order (before,after)")
    ap.add_argument("--protocol", action="store_true",
                    help="time each configuration as the paper's protocol runs it (lrnnkit.learn.protocols.follow: "
                         "its first seed and rate), not as --scale paper does")
    ap.add_argument("--labels", default=None,
                    help="comma-separated substrings: time only the configurations whose label holds one")
    ap.add_argument("--json", default=None)
    ap.add_argument("--gemm-floor", action="store_true",
                    help="print each configuration's matrix-product floor (gemm_floor) at the H200's dense bf16 rate "
                         "and stop (the CPU: nothing is timed)")
    ap.add_argument("--record", metavar="COST_JSON", default=None, help="write RESULTS.md's section from a --json file")
    ap.add_argument("--ran", nargs="*", default=[], help="with --record: results files of paper-scale runs")
    ap.add_argument("--notes", default=None, help="with --record: a markdown file of notes below the table")
    a = ap.parse_args(argv)
    if a.record:
        record(a.record, a.ran, open(a.notes).read().strip() if a.notes else "")
        return 0
    names = a.only.split(",") if a.only else [e["name"] for e in list_experiments()]
    if a.gemm_floor:
        print_gemm_floor(names, a.protocol, a.labels)
        return 0
    loops = tuple(a.loops.split(","))
    out = {}
    for name in names:
        exp = get_experiment(name)
        rows = []
        for label, cfg in _configurations(name, exp, a.protocol):
            if a.labels and not any(x in label for x in a.labels.split(",")):
                continue
            cfg = dataclasses.replace(cfg, device=a.device)
            try:
                r = time_config(cfg, a.steps, loops)
            except Exception as exc:  # noqa: BLE001 - a configuration that cannot run is a row with its reason
                r = {"error": f"{type(exc).__name__}: {exc}"[:300], "paper_steps": cfg.steps}
            r["label"] = label
            r["layer"], r["batch"], r["width"], r["layers"] = cfg.layer, cfg.batch, cfg.width, cfg.layers
            r["train_len"] = list(cfg.train_len)
            if cfg.layer == "fixed-point":      # the iteration cap it was timed at (the dry run scales others)
                r["fp_train_iters"] = cfg.fp_train_iters
            rows.append(r)
            print(name, json.dumps(r), flush=True)
        out[name] = {"rows": rows, "hours": round(sum(r.get("hours", 0) for r in rows), 2),
                     "failed": sum("error" in r for r in rows)}
    import torch
    doc = {"device": torch.cuda.get_device_name(0) if a.device.startswith("cuda") else "cpu",
           "torch": torch.__version__, "steps_timed": a.steps, "warm": WARM, "loops": list(loops), "experiments": out}
    from benchmarks._record import table
    print("\n" + table(headers(doc), summary_rows(doc)))
    print(f"\ntotal GPU-hours: {sum(e['hours'] for e in out.values()):.1f}"
          + "".join(f"; {lp} loop {_total(doc, lp):.1f}" for lp in loops))
    if a.json:
        from lrnnkit.fileio import atomic_write_text
        atomic_write_text(a.json, json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
