"""Choose the kernel settings of ``chunk_gh`` ahead of time, on the GPU that will run them: a small candidate set per
kernel (value block, warps, pipeline stages; key blocks; the T pass's warps), each kernel timed on its own at two
shapes, and the winners written as the table that :mod:`lrnnkit.ops.gh.wy_tuned` reads at import -- no
autotuning at a call.

    python3 benchmarks/tune_gh_configs.py --out $OUT [--budget 280]     # on the GPU machine (<= budget s + a few)
    python3 benchmarks/tune_gh_configs.py --install $OUT/gh_tiles.json   # here: check it, put it in lrnnkit/data/
    python3 benchmarks/tune_gh_configs.py --smoke                        # CPU: the interpreter, tiny shapes

First the chunk size (:func:`choose_chunk`: the whole forward + backward at chunk 64, 32 and 16 with the built-in
tiles; the fastest whose errors against float64 stay within CHUNK_SLACK of the built-in chunk's), written as the
entry's ``chunk`` where it differs (a call that names no chunk size runs it: ``wy_config.default_chunk``); then the
tiles at that chunk. ``--jobs bf16/race`` tunes one job; ``--no-chunks`` keeps the built-in chunk.

Shapes: the kernel benchmark (B=8, T=4096, H=16, K=V=128, n_h=2) and the race of bench_layer_vs_fla.py (12 heads of
K=V=32, B=512, T=128, n_h=2); product modes bf16, float32 3xTF32 and one-pass tf32, in that order of priority
(bf16 at both shapes first). Each kernel's settings are tried one key at a time in launch order (coordinate descent
from the built-in table, :mod:`lrnnkit.ops.gh.wy_config`): first the (value block, warps) pairs that
proofs_tests/ops/gh/test_wy.py checks compiled, then the winner with other pipeline stages. A candidate counts
only if every tensor its kernel writes is within ``TOL`` (max |a - b| / max |b|) of the built-in setting's output
on the same inputs -- a different tile only reorders float32 sums, a miscompile is off by O(1) -- and it replaces the
current setting only when faster by more than ``GAIN``. The table holds the settings that differ from the built-in
ones. Writes tune.json (every candidate: ms, error or failure) and gh_tiles.json (this GPU's entries over the
shipped table's others) under --out; prints a short table last. The budget is checked before every candidate:
past it, the jobs not reached keep the built-in settings. A CUDA fault poisons the process: the sweep then stops
and writes what it has.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

BENCH = (8, 4096, 16, 128, 128)
RACE = (512, 128, 12, 32, 32)
JOBS = (("bf16", "bench", BENCH), ("bf16", "race", RACE), ("tf32x3", "bench", BENCH), ("tf32", "bench", BENCH),
        ("tf32x3", "race", RACE), ("tf32", "race", RACE))
NH = 2
TILES = ((32, 4), (64, 4), (128, 4), (64, 8))      # the pairs test_every_kernel_setting_compiled checks
KEYS = {"t": ("t_warps", "t_sub"), "state_fwd": ("state_fwd",), "state_rec": ("state_rec",), "output": ("output",),
        "state_bwd": ("state_bwd",), "dqkwy": ("dqkwy", "dqkwy_bk"), "dqkwg": ("dqkwg", "dqkwg_bk"),
        "wy_bwd": ("wy_bwd", "wy_bk"), "dqkwy_once": ("dqkwy_once",)}
TOL = {"bf16": 2e-2, "tf32": 1e-3, "tf32x3": 1e-4}   # bf16: a few roundings of the stored outputs (2^-8 each)
GAIN = 0.02
# a chunk size counts only if its worst error against float64 (relative Frobenius, over o and every gradient) is at
# most CHUNK_SLACK times the built-in chunk's: the chunk moves where bf16 / tf32 rounding happens (T, the chunk
# states), which may change the error by a small factor either way; a miscompile is off by O(1)
CHUNK_SLACK = 1.5


def candidates(cfg, key, two_byte, BK, BVF, mode, winner=None):
    """The settings of ``key`` to try, as the kernels would run them (value blocks clamped to the value width, key
    blocks to the key width), the current one first, duplicates dropped. ``winner``: the second pass, the winning
    (block, warps) with other pipeline stages."""
    from lrnnkit.ops.gh.wy_config import _settings
    cur = cfg[key]
    if key == "t_warps":
        opts = [cur, 2, 4, 8]
    elif key == "t_sub":
        opts = [cur, 16, 8, 4]
    elif key.endswith("_bk"):
        opts = [cur] + [min(BK, b) for b in (32, 64, 128)]
    elif winner is not None:
        bv, nw, st = _settings({key: winner}, key, two_byte, BVF)
        opts = [(bv, nw, s) for s in ((2, 3) if two_byte else (1, 2)) if s != st]
    else:
        opts = [cur] + [t for t in TILES if not (mode == "bf16" and key == "state_bwd" and t == (32, 4) and BVF > 32)]
    seen, out = set(), []
    for o in opts:
        eff = _settings({key: o}, key, two_byte, BVF) if isinstance(o, tuple) else \
            (min(BK, o) if key.endswith("_bk") else o)
        if eff not in seen:
            seen.add(eff)
            out.append(o)
    return out


def outputs(st, s, wrote):
    """The tensors stage ``s`` writes (its scratch left out), cloned."""
    return {n: (wrote.get(n) if n in wrote else st.named[n]).detach().clone() for n in s.writes
            if n not in s.scratch}


def err(got, ref) -> float:
    worst = 0.0
    for n, r in ref.items():
        g = got[n].double()
        r = r.double()
        if not bool(g.isfinite().all()):
            return float("inf")
        worst = max(worst, float((g - r).abs().max() / r.abs().max().clamp_min(1e-30)))
    return worst


def _dtype(mode):
    import torch
    return (torch.bfloat16, None) if mode == "bf16" else (torch.float32, mode)


def choose_chunk(mode, label, shape, bench, dev, deadline, log, tiles):
    """The chunk size of one (mode, shape): chunk_gh's whole forward + backward (n_h = NH) timed at each chunk size,
    each with its own tiles (``tiles``: {chunk: the entry's tile settings tuned at that chunk, :func:`tune_job`;
    ``{}``: the built-in ones}), and its errors against a float64 run of the same inputs; the fastest
    whose error is within CHUNK_SLACK of the built-in chunk's, and faster than it by GAIN. The shipped table's
    entries are set aside meanwhile. Returns (the chunk, a record per chunk tried)."""
    import torch

    import _floor
    from lrnnkit.ops.gh import wy_tuned
    from lrnnkit.ops.gh.api import chunk_gh
    from lrnnkit.ops.gh.wy_config import default_chunk, fp32_mode
    dtype, prec = _dtype(mode)
    B, T, H, K, V = shape
    ins = _floor.inputs(NH, B, T, H, K, V, dtype, dev)
    where = wy_tuned.key(wy_tuned.arch(dev), wy_tuned.mode(dtype, fp32_mode(prec)), K, V)

    def grads(xs, C, prec_):
        q, k, v, b, do = xs
        leaves = [x.detach().requires_grad_(True) for x in (q, k, v, b)]
        o, _ = chunk_gh(*leaves[:3], None, leaves[3], NH, chunk_size=C, fp32_precision=prec_, validate=False)
        return [o] + list(torch.autograd.grad(o, leaves, do))

    ref = [x.detach() for x in grads([x.double() for x in ins], 64, None)]
    built = default_chunk(dtype, prec)
    saved = dict(wy_tuned.ENTRIES)
    records = []
    try:
        for C in sorted(tiles, key=lambda c: (c != built, -c)):   # the built-in chunk first: it judges the others
            if time.time() > deadline:
                break
            wy_tuned.ENTRIES.clear()
            wy_tuned.ENTRIES[where] = {n: tuple(x) if isinstance(x, list) else x for n, x in tiles[C].items()}
            rec = dict(mode=mode, shape=label, stage="chunk", key="chunk", setting=C, tiles=tiles[C])
            records.append(rec)
            try:
                got = grads(ins, C, prec)
                rec["err"] = max(float((g.detach().double() - r).norm() / r.norm()) for g, r in zip(got, ref))
                rec["ms"] = bench(lambda: grads(ins, C, prec))
            except Exception as exc:
                rec["failed"] = repr(exc)[:200]
            log(rec)
    finally:
        wy_tuned.ENTRIES.clear()
        wy_tuned.ENTRIES.update(saved)
    base = next((r for r in records if r["setting"] == built and "ms" in r), None)
    best = base
    for r in records:
        if base and "ms" in r and r["err"] <= CHUNK_SLACK * base["err"] and r["ms"] < best["ms"] * (1 - GAIN):
            best = r
    for r in records:
        r["adopted"] = r is best
    return (best["setting"] if best else built), records


def tune_job(mode, label, shape, bench, dev, deadline, log, chunk=None):
    """Coordinate descent over the kernels of one (mode, shape) at chunk size ``chunk`` (None: the built-in one),
    from the built-in table: returns (a record per setting tried, the adopted one of each key marked, and why it
    stopped: "done", "budget" or "cuda fault")."""
    import _floor
    from lrnnkit.ops.gh.wy_config import _settings, config_table, default_chunk
    dtype, prec = _dtype(mode)
    B, T, H, K, V = shape
    q, k, v, beta, do = _floor.inputs(NH, B, T, H, K, V, dtype, dev)
    st = _floor.Stages(q, k, v, beta, do, NH, chunk or default_chunk(dtype, prec), prec)
    c = st.c
    built = dict(config_table(dtype, prec))
    c.cfg = dict(built)                     # from the built-in table, whatever the shipped one says
    plan = _floor.plan(dtype, NH, B, T, H, c.K, c.V, c.BT, prec, c.cfg)
    two = c.DT != c.ACC
    snap = {n: st.named[n].clone() for n in set().union(*(set(s.reads) & set(s.writes) for s in plan))
            if n in st.named}

    def check_run(s):   # one launch from the same inputs (tensors a stage reads and writes put back first)
        for n in set(s.reads) & set(s.writes):
            if n in snap:
                st.named[n].copy_(snap[n])
        return outputs(st, s, st.run[s.name]())

    def ran(opt, key):   # a setting as the kernels run it
        if isinstance(opt, tuple):
            return _settings({key: opt}, key, two, c.BVF)
        return min(c.BK, opt) if key.endswith("_bk") else opt
    records = []
    for s in plan:
        if s.name not in KEYS:
            continue
        ref = check_run(s)
        for key in KEYS[s.name]:
            best = dict(mode=mode, shape=label, stage=s.name, key=key, setting=c.cfg[key], err=0.0,
                        ms=bench(st.run[s.name]), adopted=True)
            records.append(best)
            log(best)
            stop = None
            tried = [best["setting"]]
            for rnd in (None, "stages"):
                if rnd and (key in ("t_warps", "t_sub") or key.endswith("_bk")):
                    break
                for opt in candidates(c.cfg, key, two, c.BK, c.BVF, mode, best["setting"] if rnd else None):
                    if any(ran(opt, key) == ran(t, key) for t in tried):
                        continue
                    tried.append(opt)
                    if time.time() > deadline:
                        stop = "budget"
                        break
                    c.cfg[key] = opt
                    rec = dict(mode=mode, shape=label, stage=s.name, key=key, setting=opt)
                    records.append(rec)
                    try:
                        rec["err"] = err(check_run(s), ref)
                        if rec["err"] <= TOL[mode]:
                            rec["ms"] = bench(st.run[s.name])
                            if rec["ms"] < best["ms"] * (1 - GAIN):
                                best["adopted"] = False
                                best = rec
                                rec["adopted"] = True
                    except Exception as exc:   # e.g. out of shared memory; a CUDA fault ends the sweep
                        rec["failed"] = repr(exc)[:200]
                        if "CUDA" in repr(exc) or "illegal" in repr(exc):
                            stop = "cuda fault"
                    log(rec)
                    if stop:
                        break
                if stop:
                    break
            c.cfg[key] = best["setting"]
            if stop:
                return records, stop
    return records, "done"


def _log(r):
    print(f"  {r['mode']} {r['shape']} {r['key']}={r['setting']}: " + (f"{r['ms']:.3f} ms" if "ms" in r else "")
          + (f" err {r['err']:.1e}" if "err" in r else "") + (f" failed {r['failed'][:80]}" if "failed" in r else ""),
          flush=True)


def _diff(recs, built) -> dict:
    """The adopted tile settings of ``recs`` that differ from the ``built``-in table, as the table file holds them."""
    return {r["key"]: list(r["setting"]) if isinstance(r["setting"], tuple) else r["setting"] for r in recs
            if r.get("adopted") and r["key"] != "chunk" and r["setting"] != built[r["key"]]}


def run_job(mode, label, shape, bench, dev, deadline, chunks=True):
    """One (mode, shape): the tiles tuned at each chunk size (:func:`tune_job`; ``chunks`` False: the built-in chunk
    alone), then the chunk whose whole forward + backward is fastest with its tiles (:func:`choose_chunk`).
    Returns (records, each tagged with the chunk it was tuned at; the entry's settings that differ from the
    built-in ones, ``chunk`` among them where it differs; why it stopped)."""
    from lrnnkit.ops.gh.wy_config import config_table, default_chunk
    from lrnnkit.ops.gh.wy_tuned import CHUNKS
    dtype, prec = _dtype(mode)
    built, built_chunk = config_table(dtype, prec), default_chunk(dtype, prec)
    recs, per, why = [], {}, "done"
    try:
        for C in sorted(CHUNKS if chunks else (built_chunk,), key=lambda c: (c != built_chunk, -c)):
            more, why = tune_job(mode, label, shape, bench, dev, deadline, _log, C)
            recs += [dict(r, chunk=C) for r in more]
            if why != "done":
                break
            per[C] = _diff(more, built)
        chunk = built_chunk
        if len(per) > 1:
            chunk, crecs = choose_chunk(mode, label, shape, bench, dev, deadline, _log, per)
            recs += crecs
    except Exception as exc:
        traceback.print_exc()
        why = f"error {repr(exc)[:120]}"
        chunk = built_chunk
    if chunk not in per:          # cut short: the settings tuned at the built-in chunk, as far as they got
        chunk = built_chunk
        per[chunk] = _diff([r for r in recs if r.get("chunk") == chunk], built)
    diff = dict(per[chunk])
    if chunk != built_chunk:
        diff["chunk"] = chunk
    return recs, diff, why


def table_text(doc) -> str:
    """The table file's text: one line per entry (diffs of a re-tuned table stay readable)."""
    lines = [f'{json.dumps(k)}: {json.dumps(v)}' for k, v in doc["entries"].items()]
    return (f'{{"format": 1, "source": {json.dumps(doc["source"])}, "entries": {{'
            + ("\n " + ",\n ".join(lines) + "\n" if lines else "") + "}}\n")


def write(out, entries, records, status, device, budget):
    """gh_tiles.json (the shipped table with the entries of the jobs run replaced: None drops one) and tune.json
    (every candidate) under ``out``."""
    import torch

    from lrnnkit.fileio import atomic_write_text
    from lrnnkit.ops.gh import wy_tuned
    os.makedirs(out, exist_ok=True)
    table = {k: v for k, v in dict(wy_tuned.ENTRIES, **entries).items() if v is not None}
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    doc = {"source": f"benchmarks/tune_gh_configs.py on {device}, {when}, torch {torch.__version__}",
           "entries": dict(sorted(table.items()))}
    text = table_text(doc)
    wy_tuned.parse(text, "the written table")   # the table it writes is one the package accepts
    atomic_write_text(os.path.join(out, "gh_tiles.json"), text)
    atomic_write_text(os.path.join(out, "tune.json"), json.dumps(
        dict(device=device, when=when, budget=budget, status={f"{m}/{s}": v for (m, s), v in status.items()},
             records=records), indent=1, default=str) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT") or "sweep_out")
    ap.add_argument("--budget", type=float, default=280.0, help="seconds for the whole sweep (checked per candidate)")
    ap.add_argument("--smoke", action="store_true", help="tiny shapes, two candidates a key, CPU when no GPU")
    ap.add_argument("--install", help="a gh_tiles.json from a GPU run: check it and put it in lrnnkit/data/")
    ap.add_argument("--jobs", default=None, metavar="MODE/SHAPE,...",
                    help="the jobs to tune, e.g. bf16/race (default: all: " + ", ".join(f"{m}/{s}" for m, s, _ in JOBS)
                         + ")")
    ap.add_argument("--no-chunks", dest="chunks", action="store_false",
                    help="keep the built-in chunk size (default: choose it first, choose_chunk)")
    a = ap.parse_args()
    from lrnnkit.fileio import atomic_write_text
    from lrnnkit.ops.gh import wy_tuned
    if a.install:
        from lrnnkit.errors import InputError
        from lrnnkit.fileio import read_regular
        from lrnnkit.limits import MAX_FILE_BYTES
        try:
            text = read_regular(a.install, MAX_FILE_BYTES, "kernel tile table").decode("utf-8", "replace")
            wy_tuned.parse(text, a.install)
        except InputError as exc:
            print(f"tune_gh_configs: {exc}", file=sys.stderr)
            sys.exit(2)
        atomic_write_text(wy_tuned.PATH, text)
        print(f"installed {a.install} as {wy_tuned.PATH}")
        return
    import torch
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    jobs = JOBS
    if a.jobs:
        names = [j.strip() for j in a.jobs.split(",") if j.strip()]
        unknown = [n for n in names if n not in {f"{m}/{s}" for m, s, _ in JOBS}]
        if unknown:
            ap.error(f"unknown job {unknown[0]!r} (known: {', '.join(f'{m}/{s}' for m, s, _ in JOBS)})")
        jobs = tuple(j for j in JOBS if f"{j[0]}/{j[1]}" in names)
    if dev == "cpu" and not a.smoke:
        ap.error("no GPU here: run with --smoke (the interpreter, tiny shapes) or on the GPU machine")
    if a.smoke:
        jobs = tuple((m, lab, (1, 24, 2, s[3] // 4, s[4] // 4)) for m, lab, s in jobs)
        global TILES
        TILES = TILES[:2]

    def bench(fn):
        if dev == "cpu":
            t0 = time.perf_counter()
            fn()
            return (time.perf_counter() - t0) * 1e3
        from triton.testing import do_bench
        return do_bench(fn, warmup=10, rep=40, return_mode="median")
    t_start = time.time()
    deadline = t_start + a.budget
    arch = wy_tuned.arch(dev)
    records, entries, status = [], {}, {}
    for mode, label, shape in jobs:
        if time.time() > deadline:
            status[(mode, label)] = "not reached"
            continue
        t0 = time.time()
        recs, diff, why = run_job(mode, label, shape, bench, dev, deadline, a.chunks)
        status[(mode, label)] = f"{why} ({time.time() - t0:.0f} s)"
        if dev == "cuda":
            torch.cuda.empty_cache()
        records += recs
        # the kernels run these shapes unpadded (wy_config._padded: K = V = 32 and 128 stay); None: back to built-in
        entries[wy_tuned.key(arch if arch != "cpu" else "sm0", mode, shape[3], shape[4])] = diff or None
        device = torch.cuda.get_device_name(0) if dev == "cuda" else "cpu (interpreter)"
        write(a.out, entries, records, status, device, a.budget)   # after every job: a run cut short keeps them
        if "fault" in why:
            break
    print()
    device = torch.cuda.get_device_name(0) if dev == "cuda" else "cpu (interpreter)"
    print(f"tune_gh_configs on {device} ({arch}), {time.time() - t_start:.0f} s; tables under {a.out}")
    print(f"{'mode':7s} {'shape':6s} {'key':10s} {'built-in':>14s} {'ms':>8s} {'chosen':>14s} {'ms':>8s}  status")
    for (mode, label), why in status.items():
        rs = [r for r in records if r["mode"] == mode and r["shape"] == label]
        won = next((r["setting"] for r in rs if r["key"] == "chunk" and r.get("adopted")), None)
        rs = [r for r in rs if r["key"] == "chunk" or won is None or r.get("chunk") == won]   # the chosen chunk's
        first = {}
        for r in rs:
            first.setdefault(r["key"], r)
        for key, r0 in first.items():
            win = next((r for r in rs if r["key"] == key and r.get("adopted")), r0)
            print(f"{mode:7s} {label:6s} {key:10s} {str(r0['setting']):>14s} {r0.get('ms', float('nan')):8.3f} "
                  f"{str(win['setting']):>14s} {win.get('ms', float('nan')):8.3f}  {why}")
        if not rs:
            print(f"{mode:7s} {label:6s} {'-':10s} {'':>14s} {'':>8s} {'':>14s} {'':>8s}  {why}")


if __name__ == "__main__":
    main()
