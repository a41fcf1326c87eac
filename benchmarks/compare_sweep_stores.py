"""Compare two sweep stores point by point: the records a sweep resumed across machine runs left against an
uninterrupted sweep of the same spec (docs/sweeps.rst, "Carrying a sweep between machines").

    python benchmarks/compare_sweep_stores.py RESUMED_STORE UNINTERRUPTED_STORE [--json OUT.json]

For every point key the last ``ok`` record of each store is compared without what may differ by design: the
record's ``meta`` (executor, pid, finish time, ``resumed_from_step``, ...) and the training run's own wall-clock
``seconds``. Prints one line per point (equal, or the keys that differ) and exits 0 only when both stores hold
the same points and every one of them is equal.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

TIMING = ("seconds",)


def last_ok(store: str) -> dict:
    recs = {}
    with open(os.path.join(store, "records.jsonl")) as fh:
        for line in fh:
            try:
                r = json.loads(line)
            except json.JSONDecodeError:      # a line cut short by a crash is ignored, as the sweep does
                continue
            if r.get("status") == "ok":
                recs[r["point_key"]] = r
    return recs


def comparable(r: dict) -> dict:
    return {k: v for k, v in r.items() if k != "meta" and k not in TIMING}


def compare(a_dir: str, b_dir: str) -> dict:
    a, b = last_ok(a_dir), last_ok(b_dir)
    rows = []
    for key in sorted(set(a) | set(b)):
        if key not in a or key not in b:
            rows.append({"point_key": key, "equal": False, "why": f"only in {'A' if key in a else 'B'}"})
            continue
        ca, cb = comparable(a[key]), comparable(b[key])
        diff = sorted(k for k in set(ca) | set(cb) if ca.get(k) != cb.get(k))
        rows.append({"point_key": key, "equal": not diff, "why": ",".join(diff),
                     "task": ca.get("task"), "resumed_from_step": a[key].get("meta", {}).get("resumed_from_step"),
                     "final_accuracy": ca.get("final_accuracy")})
    return {"a": a_dir, "b": b_dir, "points": len(rows), "equal": all(r["equal"] for r in rows) and bool(rows),
            "rows": rows}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    for d in (args.a, args.b):
        if not os.path.isfile(os.path.join(d, "records.jsonl")):
            print(f"compare_sweep_stores: no records.jsonl in {d!r}", file=sys.stderr)
            return 2
    res = compare(args.a, args.b)
    for r in res["rows"]:
        print(f"{r['point_key']}  {'equal' if r['equal'] else 'DIFFERENT: ' + r['why']}  "
              f"resumed_from_step={r.get('resumed_from_step')}  task={r.get('task')}  final={r.get('final_accuracy')}")
    print(f"{res['points']} points, {'all equal' if res['equal'] else 'NOT all equal'}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(res, fh, indent=1)
    return 0 if res["equal"] else 1


if __name__ == "__main__":
    sys.exit(main())
