"""``lrnnkit theorems``: the statement registry with its verdicts, and re-running one check."""
from __future__ import annotations

import json
from ..errors import InputError
from ..theorems import all_statements, run_check
from ..theorems.registry import perturbation_flips
from ..theorems import get as get_statement
from ..cli_format import table
from ._common import _JSON_HELP, _json_default, _print_json

ORDER = 60


def add_parser(sub) -> None:
    s = sub.add_parser("theorems", help="the statement registry with verdicts")
    s.add_argument("--json", action="store_true", help=_JSON_HELP)
    s.add_argument("--long", action="store_true", help="full text of every entry (statement, evidence, "
                   "counterexample, correction) instead of the table")
    s.add_argument("--check", metavar="ID", help="re-run the check of one statement and print its verdict")
    s.add_argument("--profile", choices=["quick", "deep"], default=None,
                   help="with --check: quick (default, seconds) or deep (larger searches)")
    s.add_argument("--perturbed", action="store_true",
                   help="with --check: also run the entry's perturbation (a nearby false statement) and print both "
                        "verdicts; exit 0 iff the recorded verdict is reproduced and the perturbation flips it")
    s.add_argument("--paper", action="append", metavar="NNN",
                   help="list only the entries of this paper (000 .. 004, or lrnnkit); may be repeated")
    s.add_argument("--verdict", action="append", choices=["holds", "falsified", "holds-as-corrected",
                                                          "holds-with-wording-slip", "open"],
                   help="list only the entries with this recorded verdict; may be repeated")


def run(a) -> int:
    listing = [f for f, v in (("--paper", a.paper), ("--verdict", a.verdict)) if v]
    if a.check is None:
        for flag, given in (("--profile", a.profile), ("--perturbed", a.perturbed)):
            if given:
                raise InputError(f"{flag} needs --check ID (it applies to one entry's check)")
        return _theorems_list(a)
    if not a.check.strip():
        raise InputError(f"--check needs a statement id, got {a.check!r}; see `lrnnkit theorems`")
    if listing:
        raise InputError(f"{listing[0]} filters the list; with --check ID one entry is checked")
    s = get_statement(a.check)
    profile = a.profile or "quick"
    r = run_check(a.check, profile)
    out = {"id": s.id, "recorded_verdict": s.verdict, "derived_verdict": r.verdict, "evidence": r.evidence,
           "counterexample": r.counterexample, "corrected": r.corrected, "agrees": r.verdict == s.verdict}
    ok = r.verdict == s.verdict
    if a.perturbed:
        if s.perturb is None:
            raise InputError(f"{s.id} declares no perturbation")
        rp = run_check(a.check, profile, perturbed=True)
        flips = perturbation_flips(s.verdict, rp.verdict)
        out["perturbed"] = {"derived_verdict": rp.verdict, "evidence": rp.evidence,
                            "counterexample": rp.counterexample, "flips": flips}
        ok = ok and flips
    if a.json:
        _print_json(out)
        return 0 if ok else 1
    if a.long:
        print(f"{s.id}  [{s.verdict}]\n  statement: {s.statement}\n  hypotheses: {s.hypotheses}\n"
              f"  conclusion: {s.conclusion}")
    print(f"{s.id}: derived {r.verdict} (recorded {s.verdict})\n  {r.evidence}")
    if r.counterexample is not None:
        print(f"  counterexample: {json.dumps(r.counterexample, default=_json_default)}")
    if r.corrected:
        print(f"  corrected: {r.corrected}")
    if a.perturbed:
        p = out["perturbed"]
        print(f"perturbed ({_perturb_text(s.perturb)}): derived {p['derived_verdict']} -- "
              f"{'flips' if p['flips'] else 'does NOT flip'} the recorded {s.verdict}\n  {p['evidence']}")
        if p["counterexample"] is not None:
            print(f"  counterexample: {json.dumps(p['counterexample'], default=_json_default)}")
    return 0 if ok else 1


def _perturb_text(perturb: dict) -> str:
    """The perturbation's arguments, one line (a results record passed as an argument is named, not printed)."""
    parts = []
    for k, v in perturb.items():
        shown = "the stored record, perturbed" if isinstance(v, dict) and len(json.dumps(v, default=str)) > 120 \
            else json.dumps(v, default=_json_default)
        parts.append(f"{k}={shown}")
    return ", ".join(parts)


def _theorems_list(a) -> int:
    sts = [s.to_json() for s in all_statements()]
    if a.paper:
        papers = sorted({s["paper"] for s in sts})
        bad = [p for p in a.paper if p not in papers]
        if bad:
            raise InputError(f"unknown paper {bad[0]!r} (choose from {', '.join(papers)})")
        sts = [s for s in sts if s["paper"] in a.paper]
    if a.verdict:
        sts = [s for s in sts if s["verdict"] in a.verdict]
    if a.json:
        _print_json(sts)
    elif a.long:
        for s in sts:
            print(f"{s['id']}  [{s['verdict']}]\n  statement: {s['statement']}\n  evidence: {s['evidence']}")
            if s.get("counterexample") is not None:
                print(f"  counterexample: {json.dumps(s['counterexample'], default=_json_default)}")
            if s.get("corrected"):
                print(f"  corrected: {s['corrected']}")
            print(f"  reproduce: {_reproduce(s)}")
    else:
        if sts:
            print(table(["id", "verdict", "statement"], [[s["id"], s["verdict"], s["statement"]] for s in sts],
                        shrink={2: 12}, overflow="cut"))
        own = sum(s["paper"] == "lrnnkit" for s in sts)
        tally: dict = {}
        for s in sts:
            if s["paper"] != "lrnnkit":
                tally[s["verdict"]] = tally.get(s["verdict"], 0) + 1
        print(f"papers: {len(sts) - own} statements; lrnnkit's own claims: {own}")
        import textwrap
        print(textwrap.fill("verdicts: " + ", ".join(f"{v} {n}" for v, n in sorted(tally.items())), 78, break_on_hyphens=False,
                            subsequent_indent="  "))
        print("reproduce any entry: lrnnkit theorems --check ID [--perturbed]")
        print("(full text: --long or --json; filter: --paper NNN, --verdict V)")
    return 0


def _reproduce(s: dict) -> str:
    return s.get("reproduce") or f"lrnnkit theorems --check {s['id']}"


VERBS = {"theorems": run}
