"""Compare two sweep stores point by point: the records a sweep resumed across machine runs left against an
uninterrupted sweep of the same spec (docs/sweeps.rst, "Carrying a sweep between machines").

    python benchmarks/compare_sweep_stores.py RESUMED_STORE UNINTERRUPTED_STORE [--json OUT.json]

For every point key the last record of each store (as the sweep reads it: ``RecordStore.load``) is compared
without what may differ by design: the record's ``meta`` (``strip_meta``: executor, pid, finish time,
``resumed_from_step``, ...) and the training run's own wall-clock ``seconds``; ``status`` is compared, so a point
that failed in one store and not in the other differs. Prints one line per point (equal, or the keys that differ) and exits 0 only when both stores hold
the same points and every one of them is equal.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from lrnnkit.fileio import atomic_write_text  # noqa: E402
from lrnnkit.sweep import RecordStore, strip_meta  # noqa: E402

TIMING = ("seconds",)


def comparable(records: dict) -> dict:
    """``point_key -> record`` without meta and timing."""
    return {k: {f: v for f, v in r.items() if f not in TIMING} for k, r in zip(records, strip_meta(records.values()))}


def compare(a_dir: str, b_dir: str) -> dict:
    a_rec, b_rec = RecordStore(a_dir).load(), RecordStore(b_dir).load()
    a, b = comparable(a_rec), comparable(b_rec)
    rows = []
    for key in sorted(set(a) | set(b)):
        if key not in a or key not in b:
            rows.append({"point_key": key, "equal": False, "why": f"only in {'A' if key in a else 'B'}"})
            continue
        ca, cb = a[key], b[key]
        diff = sorted(k for k in set(ca) | set(cb) if ca.get(k) != cb.get(k))
        rows.append({"point_key": key, "equal": not diff, "why": ",".join(diff),
                     "task": ca.get("task"), "resumed_from_step": a_rec[key].get("meta", {}).get("resumed_from_step"),
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
        atomic_write_text(args.json, json.dumps(res, indent=1))
    return 0 if res["equal"] else 1


if __name__ == "__main__":
    sys.exit(main())
