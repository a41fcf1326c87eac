"""``lrnnkit sweep SPEC.toml [--executor serial|ray] [--address ADDR] [--out DIR] [--json]`` (docs/cli.rst).

Prints the summary table (or, with ``--json``, the keys ``records``, ``done``, ``failed``, ``computed``,
``spec_hash``, ...). Exit 0 when every point has an ``ok`` record, 1 when some failed, 2 on a bad spec or option
(one line on stderr), 130 on Ctrl-C (everything finished is kept in ``OUT/records.jsonl``; rerun to resume).
"""
from __future__ import annotations

import json
import sys
from ..errors import InputError
from ..fileio import read_regular
from .. import limits
from ..limits import check_int
from .executors import SweepTerminated
from .runner import check_spec_file, run_sweep

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


def run(args) -> int:
    spec = check_spec_file(args.spec)
    if args.num_cpus is not None and (args.num_cpus < 1 or args.executor != "ray" or args.address):
        raise InputError(f"--num-cpus {args.num_cpus} needs --executor ray without --address and a value >= 1")
    if args.num_cpus is not None:
        check_int("--num-cpus", args.num_cpus, 1, limits.SWEEP_MAX_CPUS, "SWEEP_MAX_CPUS")
    out = args.out or f"sweep_out/{spec.spec_hash}"
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
