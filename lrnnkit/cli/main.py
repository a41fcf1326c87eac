"""The command line. Thin: it parses, calls the public library, prints. Contract: ``docs/cli.rst``.

Exit statuses, the same for every verb (:data:`lrnnkit.errors.EXIT_STATUSES`): 0 success; 1 a negative answer (a
model not certified, a check that derives another verdict than the recorded one, a sweep with failed points, a
demo whose core step failed); 2 bad input (one line on stderr naming the problem and the input, a traceback only
with ``--debug``); 3 an internal error (a bug: one line, ``--debug`` for the traceback). Files are written
atomically (temporary file, then rename).
"""
from __future__ import annotations

import json
import os
import sys

from .automata.bridges.cli import run as convert_run
from .errors import EXIT_INTERNAL, InputError, Interrupted
from .export import run as export_run
from .learn.extract_cli import run as extract_run
from .sweep.cli import run as sweep_run
from .theorems import all_statements, run_check
from .theorems.registry import perturbation_flips
from .theorems import get as get_statement
from .parser import build_parser
from . import precision as P
from .automata.bridges.cli import complete_of
from .automata.info import MONOID_CAP, describe
from .automata.io import fsa_from_dict
from .automata.sampling import random_word
from .automata.sources import load_source
from .certify import certify, resource_profile
from .cli_format import escaped, escaping_terminal, shown, table, terminal_width
from .constructions import candidates, catalogue, compile as compile_model
from .constructions import get as get_construction
from .executor import run_exact, run_float
from .learn.cli import VERBS as learn_verbs
from .learn import trained_cli as trained_verbs
from .learn.locate import is_trained_path
from .automata.sources import is_preset
from . import limits
from .limits import check_automaton, check_int
from .progress import busy
from .model import Model
from .precision.commands import cast_argv
from .precision.simulate import DEFAULT_COLLAPSE_STEPS
from .showcase.demo import run_demo

__all__ = ["main", "build_parser"]


# --------------------------------------------------------------------------- helpers
def _print_json(obj) -> None:
    print(json.dumps(obj, indent=2, default=_json_default))


def _json_default(o):
    import numpy as np
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if hasattr(o, "to_json"):
        return o.to_json()
    return str(o)


def _load_model(path: str):
    return Model.load(path)


def _trained(path: str) -> bool:
    """A trained model (checkpoint, run directory, pretrained directory) rather than a compiled model file or an
    automaton source (presets win, as everywhere)."""
    return not is_preset(path) and is_trained_path(path)


# --------------------------------------------------------------------------- verbs
def cmd_info(a) -> int:
    if _trained(a.source):
        return trained_verbs.info(a)
    fsa = load_source(a.source, complete=complete_of(a))
    check_automaton(fsa, "info", a.source)      # sizes checked before the analysis starts (lrnnkit.limits)
    with busy("info: monoid, group, holonomy"):
        d = describe(fsa, depth_rule=a.depth_rule)
    if a.json:
        _print_json(d)
        return 0
    alph = [shown(x) for x in d["alphabet"]]
    print(f"states {d['states']} (minimal {d['minimal_states']}), alphabet of {len(alph)}: "
          f"{' '.join(alph[:12])}{' ...' if len(alph) > 12 else ''}")
    size = (f"{d['monoid_size']} elements" if d["monoid_size"] is not None
            else f"monoid too large to enumerate (limit {MONOID_CAP:,} elements)")
    aper = d["aperiodic"] if d["aperiodic"] is not None else "unknown (monoid not enumerated)"
    print(f"transition monoid: {size}; group: {d['is_group']}; aperiodic: {aper}")
    g = d.get("group")
    if g:
        print(f"group {g.get('name') or '?'}: order {g['order']}, abelian {g['abelian']}, solvable {g['solvable']}, "
              f"minimal faithful permutation degree {g['min_perm_degree']}")
    h = d.get("holonomy")
    if h:
        print(f"holonomy decomposition: depth {h['depth']} (depth rule {h.get('depth_rule', 'sgpdec')})")
        for i, lev in enumerate(h["levels"], 1):
            comps = ", ".join(f"{c['points']} points / group of order {c['group_order']}" for c in lev)
            print(f"  level {i}: {comps or '(no nontrivial component)'}")
    return 0


def cmd_compile(a) -> int:
    fsa = load_source(a.source, complete=complete_of(a))
    check_automaton(fsa, "compile", a.source)
    options = {}
    for item in a.option:
        key, sep, raw = item.partition("=")
        if not sep or not key.isidentifier():
            raise InputError(f"--option expects KEY=VALUE, got {item!r}")
        try:
            options[key] = json.loads(raw)
        except json.JSONDecodeError:
            options[key] = raw
    if a.explain:
        return _explain(fsa, a, options)
    try:
        with busy("compile"):
            model = compile_model(fsa, a.construction, **options)
    except TypeError as exc:
        if options:
            raise InputError(f"bad construction option(s) {sorted(options)}: {exc}") from None
        raise
    prof = resource_profile(model)
    summary = {"construction": model.provenance.get("construction"), "automaton": fsa.name, **prof,
               "output": a.output}
    line = (f"{summary['construction']}, {prof['layers']} layer(s), widths {prof['widths']}, max factors per token "
            f"{prof['max_factors_per_token']}")
    if a.output == "-":             # the model itself on stdout, the summary on stderr
        print(json.dumps(model.to_json(), indent=1))
        print(f"lrnnkit: compiled {shown(fsa.name or a.source)}: {line}", file=sys.stderr)
    elif a.output:
        model.save(a.output)
        if a.json:
            _print_json(summary)
        else:
            print(f"wrote {a.output}: {line}")
    elif a.json:
        _print_json(summary)
    else:                           # no -o: what would be written, not the (possibly huge) JSON itself
        print(f"{shown(fsa.name or a.source)}: {line}; not written (-o FILE writes the model, -o - prints it)")
    return 0


def _explain(fsa, a, options) -> int:
    """``compile --explain``: the applicable constructions, cheapest first, with their costs (the chosen one
    marked), then the compile itself when ``-o`` is given."""
    if a.output == "-":
        raise InputError("compile --explain -o -: the table goes to stdout; give -o a file name")
    cands = candidates(fsa)
    chosen = get_construction(a.construction).name if a.construction else (cands[0][0].name if cands else None)
    rows = []
    for c, k in cands:
        rows.append({"name": c.name, "chosen": c.name == chosen, "paper": c.paper, "statement": c.statement,
                     "cost": k.to_json() if k is not None else None,
                     "cost_key": list(k.key()) if k is not None else None})
    if a.output:
        model = compile_model(fsa, a.construction, **options)
        model.save(a.output)
    if a.json:
        _print_json({"automaton": fsa.name, "chosen": chosen, "candidates": rows, "output": a.output,
                     "cost_order": ["non-GH layers", "total width", "factors per token", "layers", "-priority"]})
        return 0
    body = []
    for r in rows:
        k = r["cost"]
        if k is None:
            cells = ["?", "?", "?", "?", "not costed"]
        else:
            f = k["factors_per_token"]
            cells = [str(k["total_width"]), ",".join(map(str, k["widths"])), "-" if f is None else str(f),
                     str(k["layers"]), ("GH" if k["gh"] else "not GH") + ("" if k["source"] == "formula"
                                                                          else ", measured")]
        body.append(["*" if r["chosen"] else "", r["name"]] + cells + [f"{r['paper']} {r['statement']}"])
    print(f"applicable constructions for {shown(fsa.name or a.source)}, cheapest first (* = chosen)\n"
          f"cost, compared in this order: GH layers first, total width, factors per token, layers")
    print(table(["", "construction", "width", "widths", "factors", "layers", "kind", "paper"], body,
                shrink={7: 14, 3: 6}))
    for r in rows:
        if r["cost"] is None:
            print(f"{r['name']}: not built, since a GH construction with a cost formula applies; its widths\n"
                  f"  are known only after building it: --construction {r['name']} --explain -o FILE")
    if a.output:
        print(f"wrote {a.output}: {chosen}")
    return 0


def cmd_verify(a) -> int:
    if _trained(a.model):
        return trained_verbs.verify(a)
    if a.horizon is not None:
        raise InputError("--horizon is for trained models; a compiled model is certified for every length")
    check_int("--max-pairs", a.max_pairs, 1, limits.MAX_PAIRS_LIMIT, "MAX_PAIRS_LIMIT")
    model = _load_model(a.model)
    fsa = load_source(a.source) if a.source else None
    cert = certify(model, fsa, max_pairs=a.max_pairs)
    if a.json:
        _print_json(cert.to_json())
    else:
        status = "CERTIFIED for all input lengths" if cert.certified else "NOT certified"
        print(f"{status} ({cert.method}): {cert.reason}")
        print(f"  reachable (automaton state, model state) pairs: {cert.reachable_states}; "
              f"transitions checked: {cert.explored_transitions}")
        print(f"  layers {cert.layers}, widths {cert.widths}, max factors per token {cert.max_factors_per_token}, "
              f"GH factors with beta in [0,2]: {cert.eigenvalues_in_unit_interval}")
        if cert.counterexample is not None:
            print(f"  shortest counterexample: {' '.join(shown(x) for x in cert.counterexample)} "
                  f"(expected {shown(cert.expected)}, got {shown(cert.got)})")
        if cert.float_check:
            fc = cert.float_check
            print(f"  float64 cross-check: {fc['words']} random words x {fc['steps']} steps, {fc['mismatches']} mismatches")
    return 0 if cert.certified else 1


def cmd_run(a) -> int:
    import numpy as np
    if _trained(a.model):
        return trained_verbs.run(a)
    if a.random is not None:
        check_int("--random", a.random, 0, limits.RUN_MAX_LENGTH, "RUN_MAX_LENGTH")
    elif len(a.word) > 64 * limits.RUN_MAX_LENGTH or len(a.word.split()) > limits.RUN_MAX_LENGTH:
        raise InputError(f"--word: more than {limits.RUN_MAX_LENGTH} symbols (lrnnkit.limits.RUN_MAX_LENGTH)")
    model = _load_model(a.model)
    if getattr(model, "inconsistencies", None):
        print(f"lrnnkit: warning: {a.model}: {model.inconsistencies[0]}; running the rounding of the exact weights "
              f"(`lrnnkit verify` refuses this file)", file=sys.stderr)
    if a.word is not None:
        word = model.encode(a.word)
        if len(word) > limits.RUN_MAX_LENGTH:
            raise InputError(f"--word: more than {limits.RUN_MAX_LENGTH} symbols (lrnnkit.limits.RUN_MAX_LENGTH)")
    else:
        word = _random_word(model, a.random, a.seed, a.uniform)
    backend = a.backend
    if backend == "reference":
        dtype = a.dtype or "float64"
        if dtype != "float64":
            raise InputError(f"the reference backend runs in float64 (got --dtype {dtype}); use torch or triton")
        outs = run_float(model, np.array([word], dtype=np.int64)).outputs[0].tolist() if word else []
    elif backend == "exact":
        dtype = "exact"
        outs = run_exact(model, word)
    else:
        dtype = a.dtype or "float32"
        from .kernels import run_model
        outs = run_model(model, np.array([word], dtype=np.int64), backend=backend, dtype=dtype,
                         gh_mode=a.gh_mode)[0].tolist() if word else []
    labels = [model.output_labels[o] if o >= 0 else "<tie>" for o in outs]
    res = {"word": [model.alphabet[x] for x in word], "outputs": labels, "backend": backend, "dtype": dtype}
    if a.json:
        _print_json(res)
    else:
        print(" ".join(shown(x) for x in labels))
    return 0


def _random_word(model, n: int, seed: int, uniform: bool) -> list:
    """``--random N``: a word over the model's alphabet; unless ``uniform``, letters entering a trap state of the
    model's recorded automaton (mod-arith's "error") are avoided (lrnnkit.automata.sampling)."""
    import numpy as np
    auto = (model.provenance or {}).get("automaton")
    if not uniform and auto:
        fsa = fsa_from_dict(auto, "the model's recorded automaton")
        if list(fsa.alphabet) == list(model.alphabet):
            return random_word(fsa, n, seed)
    return np.random.default_rng(seed).integers(0, len(model.alphabet), size=n).tolist()


def cmd_constructions(a) -> int:
    cat = [c.to_json() for c in catalogue()]
    if a.json:
        _print_json(cat)
    elif a.long:
        for c in cat:
            print(f"{c['name']} (paper {c['paper']}, {c['statement']})" +
                  (f", variant of {c['variant_of']}" if c["variant_of"] else ""))
            for key in ("applies_to", "layers", "width", "factors_per_token", "notes"):
                if c.get(key):
                    print(f"  {key.replace('_', ' ')}: {c[key]}")
    else:
        rows = [[c["name"], f"{c['paper']} {c['statement']}", c["layers"], c["width"], c["factors_per_token"]]
                for c in cat]
        print(table(["name", "paper, statement", "layers", "width", "factors/token"], rows,
                    shrink={1: 18, 2: 6, 3: 8, 4: 12}))
        print("(full text: --long or --json; costs for one automaton: compile SOURCE --explain)")
    return 0


def cmd_theorems(a) -> int:
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


def cmd_precision(a) -> int:
    if a.pcmd == "cast":
        res = P.cli_cast(a.values, a.fmt, a.rounding, a.seed)
        if a.json:
            _print_json(res)
        else:
            for x, y in zip(res["inputs"], res["outputs"]):
                print(f"{x} -> {y}")
        return 0
    if a.pcmd == "collapse":
        if a.length_old is not None:     # --steps is training's word for optimizer steps; here it was the length
            print("lrnnkit: warning: precision collapse --steps is now --length (the word's length)", file=sys.stderr)
            a.length = a.length_old
        if _trained(a.model):
            return trained_verbs.collapse(a)
        a.length = DEFAULT_COLLAPSE_STEPS if a.length is None else a.length
        check_int("--length", a.length, 1, limits.COLLAPSE_MAX_STEPS, "COLLAPSE_MAX_STEPS")
        res = P.cli_collapse(_load_model(a.model), a.fmt, a.policy, a.length, a.rounding, seed=a.seed)
        if a.json:
            _print_json(res)
        else:
            print(P.collapse_text(res))
        return 0
    res = P.cli_impossibility(a.out)
    if a.json:
        _print_json(res)
    else:
        _print_impossibility(res)
    return 0


def _print_impossibility(res, indent: str = "") -> None:
    """The impossibility demo's result as text: ``key: value`` lines, nested dicts indented, lists of records as
    aligned tables (a nested ``{"pre_period": p, "period": q}`` cell prints as ``p+q``: pre-period + period)."""
    import textwrap

    def cell(v):
        if isinstance(v, dict):
            if set(v) == {"pre_period", "period"}:
                return "none" if v["period"] is None else f"{v['pre_period']}+{v['period']}"
            return " ".join(f"{k}={cell(x)}" for k, x in v.items())
        if isinstance(v, list):
            return "[" + ", ".join(cell(x) for x in v) + "]"
        if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 10 ** 7:
            return f"{v:.3g}"
        return "-" if v is None else str(v)

    for k, v in res.items():
        if isinstance(v, dict):
            print(f"{indent}{k}:")
            _print_impossibility(v, indent + "  ")
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            keys = list(dict.fromkeys(kk for x in v for kk in x))
            print(f"{indent}{k}: ({len(v)} rows; pre+period = steps before the periodic part + its period)")
            body = table(keys, [[cell(x.get(kk)) for kk in keys] for x in v],
                         width=terminal_width() - len(indent) - 2,
                         shrink={j: (16 if j == 0 else 6) for j in range(len(keys))})
            print(textwrap.indent(body, indent + "  "))
        else:
            text = f"{k}: {cell(v) if isinstance(v, list) else v}"
            print(textwrap.fill(text, width=terminal_width(), initial_indent=indent,
                                subsequent_indent=indent + "    "))


def cmd_demo(a) -> int:
    summary = run_demo(a.out, progress=True)
    if summary.get("incomplete"):
        print(f"lrnnkit: interrupted; the report in {a.out} is incomplete", file=sys.stderr)
    return int(summary.get("exit_status", 0))


VERBS = {"info": cmd_info, "compile": cmd_compile, "verify": cmd_verify, "run": cmd_run,
         "constructions": cmd_constructions, "theorems": cmd_theorems, "precision": cmd_precision, "demo": cmd_demo,
         "export": export_run, "sweep": sweep_run, "convert": convert_run, "extract": extract_run, **learn_verbs}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    # --debug is global: accepted anywhere before a "--" (after the verb too), removed before parsing
    end = argv.index("--") if "--" in argv else len(argv)
    debug = "--debug" in argv[:end]
    if debug:
        argv = [x for x in argv[:end] if x != "--debug"] + argv[end:]
    with escaping_terminal():
        return _main(argv, debug)


def _fail(text: str) -> None:
    """One error line on stderr, every control character escaped (newlines too: one line)."""
    print(escaped(text), file=sys.stderr)


def _main(argv: list, debug: bool) -> int:
    try:
        if argv[:2] == ["precision", "cast"]:   # values anywhere, negative ones too
            argv = cast_argv(argv)
        args = build_parser().parse_args(argv)
        return VERBS[args.cmd](args)
    except BrokenPipeError:
        # the reader closed the pipe (e.g. `lrnnkit theorems | head`): stop quietly, as Unix tools do
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except OSError:
            pass
        return 141
    except InputError as exc:
        if debug:
            raise
        _fail(f"lrnnkit: error: {exc}")
        return 2
    except MemoryError:
        if debug:
            raise
        print("lrnnkit: error: out of memory (see `lrnnkit.limits` / docs \"Limits and errors\" for the size "
              "limits)", file=sys.stderr)
        return 2
    except OSError as exc:
        if debug:
            raise
        _fail(f"lrnnkit: error: {exc.strerror or exc or type(exc).__name__}"
              + (f": {exc.filename!r}" if getattr(exc, "filename", None) else ""))
        return 2
    except RecursionError:
        if debug:
            raise
        print("lrnnkit: error: input nested too deeply", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:      # lrnnkit.errors.Interrupted: the signal's status and what was saved
        if not isinstance(exc, Interrupted):
            print("lrnnkit: interrupted", file=sys.stderr)
        elif exc.message:
            _fail(exc.message)
        return getattr(exc, "exit_status", 130)
    except Exception as exc:  # noqa: BLE001  (no traceback without --debug, whatever went wrong)
        if debug:
            raise
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        _fail(f"lrnnkit: internal error: {type(exc).__name__}{': ' + msg if msg else ''} (run with --debug for "
              "the traceback, and please report it)")
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
