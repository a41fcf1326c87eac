"""``lrnnkit sweep SPEC.toml [--executor serial|ray] [--address ADDR] [--out DIR] [--json]`` (docs/cli.rst).

``--dry-run --gpus 4,8`` runs nothing: it checks the spec and prints, per GPU count, where each point still to run
(points with an ``ok`` record in ``--out`` are done) would start (:func:`lrnnkit.sweep.plan.pack`, every run one
unit of time: the start column counts waves).

Prints the summary table (or, with ``--json``, the keys ``records``, ``done``, ``failed``, ``computed``,
``spec_hash``, ...). Exit 0 when every point has an ``ok`` record, 1 when some failed, 2 on a bad spec or option
(one line on stderr), 130 on Ctrl-C (everything finished is kept in ``OUT/records.jsonl``; rerun to resume).
"""
from __future__ import annotations

import json
import os
import sys
from ..errors import MESSAGE_CHARS, InputError
from ..fileio import read_regular
from .. import limits
from ..limits import check_int
from ..sweep import packing
from ..sweep.executors import SweepTerminated
from ..sweep.plan import pack
from ..sweep.store import RecordStore
from ..sweep.runner import check_spec_file, run_sweep

ORDER = 100

__all__ = ["add_parser", "run"]


def add_parser(subparsers) -> None:
    s = subparsers.add_parser("sweep", help="run a grid of jobs (collapse, certify, theorems, train) from a TOML "
                              "spec, serially or on Ray; resumable")
    s.add_argument("spec", metavar="SPEC.toml", help="sweep spec: kind and [grid] (see docs/sweeps.rst)")
    s.add_argument("--executor", choices=["serial", "ray"], default="serial",
                   help="serial (default, no Ray needed) or ray (in the lrnnkit checkout: "
                   "pip install -e '.[ray]')")
    s.add_argument("--address", default=None,
                   help="join a running Ray cluster (e.g. auto or ray://HOST:10001); default: start a local Ray")
    s.add_argument("--num-cpus", type=int, default=None, help="local Ray: CPUs to use (default: all)")
    s.add_argument("--out", default=None, help="output directory (default: sweep_out/<spec hash>)")
    s.add_argument("--progress", action="store_true", help="show the progress bar even when stderr is no terminal")
    s.add_argument("--no-plots", action="store_true", help="skip the heat map")
    s.add_argument("--json", action="store_true", help="print machine-readable JSON instead of text")
    s.add_argument("--dry-run", action="store_true", help="run nothing: print how the points still to run would "
                   "pack on --gpus GPUs (card and wave of each point)")
    s.add_argument("--gpus", default=None, metavar="N[,N...]", help="with --dry-run: GPU counts to plan for "
                   "(default 1)")


def run(args) -> int:
    spec = check_spec_file(args.spec)
    if args.num_cpus is not None and (args.num_cpus < 1 or args.executor != "ray" or args.address):
        raise InputError(f"--num-cpus {args.num_cpus} needs --executor ray without --address and a value >= 1")
    if args.num_cpus is not None:
        check_int("--num-cpus", args.num_cpus, 1, limits.SWEEP_MAX_CPUS, "SWEEP_MAX_CPUS")
    out = args.out or f"sweep_out/{spec.spec_hash}"
    if args.gpus is not None and not args.dry_run:
        raise InputError(f"--gpus {args.gpus} plans a --dry-run; it is not given (a run takes Ray's GPUs)")
    if args.dry_run:
        return _dry_run(spec, out, args.gpus or "1", args.json)
    opts = {"num_cpus": args.num_cpus} if args.executor == "ray" and not args.address else {}
    try:
        res = run_sweep(spec, out, args.executor, args.address, progress=True if args.progress else None,
                        plots=not args.no_plots, executor_options=opts)
    except KeyboardInterrupt as exc:
        status = 143 if isinstance(exc, SweepTerminated) else getattr(exc, "exit_status", 130)
        how = {143: "terminated", 129: "stopped by SIGHUP"}.get(status, "interrupted")
        print(f"lrnnkit: {how}; finished points are kept in {out}/records.jsonl (rerun the same command to resume)",
              file=sys.stderr)
        return status
    if args.json:
        print(json.dumps(res, indent=1, sort_keys=False))
    else:
        sys.stdout.write(read_regular(f"{res['out']}/summary.txt", limits.MAX_FILE_BYTES, "sweep summary")
                         .decode("utf-8", "replace"))
        print(f"computed {res['computed']} point(s) now; records in {res['out']}/records.jsonl")
    return 0 if res["failed"] == 0 and res["missing"] == 0 else 1


def _gpu_counts(text: str) -> list:
    counts = []
    for part in str(text).split(","):
        try:
            n = int(part)
        except ValueError:
            raise InputError(f"--gpus must be positive integers separated by commas, got {text!r}"[:MESSAGE_CHARS]) from None
        check_int("--gpus", n, 1, limits.SWEEP_MAX_CPUS, "SWEEP_MAX_CPUS")
        counts.append(n)
    return counts


def _dry_run(spec, out: str, gpus_text: str, as_json: bool) -> int:
    """The plan of ``--dry-run`` (module docstring); nothing is written."""
    counts = _gpu_counts(gpus_text)
    points = spec.points()
    done = RecordStore(out).done_keys() if os.path.isdir(out) else set()
    todo = [(i, p) for i, p in enumerate(points) if spec.point_key(p) not in done]
    if spec.num_gpus == "auto":
        got = packing.point_shares(spec, dict(todo))
        shares = [got[i] for i, _ in todo]
    else:
        shares = [spec.num_gpus] * len(todo)
    plans = {n: pack(shares, n) for n in counts}
    axes = [k for k in points[0] if len({json.dumps(p.get(k), sort_keys=True) for p in points}) > 1] if points else []
    rows = [{"point": i, **{k: p.get(k) for k in axes}, "num_gpus": sh,
             **{f"{n} GPUs": {"gpus": plans[n]["placements"][j]["gpus"],
                              "wave": int(plans[n]["placements"][j]["start"])} for n in counts}}
            for j, ((i, p), sh) in enumerate(zip(todo, shares))]
    doc = {"spec_hash": spec.spec_hash, "total": len(points), "done": len(points) - len(todo), "to_run": len(todo),
           "plans": {str(n): {"waves": int(plans[n]["makespan"]), "utilisation": round(plans[n]["utilisation"], 4)}
                     for n in counts}, "points": rows}
    if as_json:
        print(json.dumps(doc, indent=1))
        return 0
    print(f"dry run of {spec.source} ({spec.spec_hash}): {len(points)} points, {doc['done']} done in {out}, "
          f"{len(todo)} to run; num_gpus per point: {spec.num_gpus}")
    head = ["point"] + axes + ["num_gpus"] + [f"{n} GPUs: card @ wave" for n in counts]
    body = [[str(r["point"])] + [json.dumps(r[k]) if not isinstance(r[k], str) else r[k] for k in axes]
            + [f"{r['num_gpus']:g}"]
            + [f"{','.join(map(str, r[f'{n} GPUs']['gpus'])) or '-'} @ {r[f'{n} GPUs']['wave']}" for n in counts]
            for r in rows]
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    for line in [head] + body:
        print("  ".join(x.ljust(w) for x, w in zip(line, widths)).rstrip())
    for n in counts:
        p = doc["plans"][str(n)]
        print(f"on {n} GPU(s): {p['waves']} wave(s) of equal-length runs, {100 * p['utilisation']:.0f}% of the GPU "
              "time busy (run times differ: benchmarks/price_001_grid.py prices a grid from a cost table)")
    return 0


VERBS = {"sweep": run}
