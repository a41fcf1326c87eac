"""The end-to-end showcase behind ``make demo`` / ``lrnnkit demo``.

:func:`run_demo` walks the whole pipeline of lrnnkit on default automata (presets of
:mod:`lrnnkit.automata.sources`) and writes what it saw:

1. **compile** each automaton into an LRNN (lrnnkit.constructions.compile; paper 000, Theorems 3, 4 and 6; paper 001)
   and **certify** it for inputs of every length (lrnnkit.certify: exact breadth-first search over the reachable
   pairs of automaton state and model state). These are the *core* steps: parity, Z_5, D_4, S_5, A_5, the flip-flop,
   even pairs, arithmetic mod 5 and an automaton with resets compiled through Krohn-Rhodes (paper 000, Theorem 4).
   The core groups get the default (cheapest) construction: D_4 in two DeltaNet layers (001, Theorem 1), A_5 by
   3-D rotations (001, Section 5.1). Showcase extras (not core) compile the same automata through other
   constructions: D_4 and A_5 as permutation matrices (000, Theorem 3), addition mod 5 with reflections
   (000, Theorem 6),
   arithmetic mod 5 in a block-diagonal layer (002, Section 3.3), Z_5 by rotation blocks (004).
2. a **worked trace** of every certified model on a short word (float64 executor, lrnnkit.executor) beside the
   automaton's own outputs;
3. the **eigenvalues** of every letter matrix (they lie in the closed unit disc: GH factors with beta in [0, 2] have
   their non-trivial eigenvalue 1 - beta in [-1, 1]; 000, Proposition 1);
4. the **precision demos** (lrnnkit.precision): the impossibility theorems in finite precision (000, Theorems 1-2)
   and the step at which exact constructions collapse in bf16 / fp16 / fp8 / fp32;
5. the compiled models through the **GPU layers** (lrnnkit.layers.run_model, backend "triton": a GPU when one is
   present, the Triton interpreter on short inputs otherwise), compared with the float64 reference.

It writes ``out_dir/report.html`` (tables and PNG plots, no scripts, no network) and ``out_dir/summary.json``.

Failure policy (decided here, relied on by the CLI and the tests). Pieces written by other engineers may be missing
or may fail. Every step runs inside a guard: a failure is recorded as ``{"status": "failed", "reason": "<one
line>"}`` in the summary and in the report, and the demo carries on. The demo's ``exit_status`` is non-zero (1) only
if a *core* step failed (a compile or a certification, including a model that is not certified); optional steps
(traces, plots, precision, kernels) never change it. A step past its time budget fails with the reason
"timed out after N s" (the budget keeps the whole demo under three minutes on two CPU cores).
"""
from __future__ import annotations

import json
import os
import platform
import signal
import sys
import threading
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .._version import __version__
from ..automata.fsa import FSA
from ..automata.sources import load_source
from ..errors import InputError
from ..fileio import atomic_write_text
from .steps import StepTimeout, one_line, time_limit
from . import report
from .. import precision as P
from ..certify import certify, resource_profile
from ..constructions import compile as c_compile
from ..executor import run_float
from ..precision import collapse as precision_collapse

__all__ = ["run_demo", "DemoCase", "DEFAULT_CASES", "SUMMARY_KEYS"]

SUMMARY_KEYS = ("format", "version", "lrnnkit_version", "started", "elapsed_s", "machine", "status", "exit_status", "incomplete",
                "core_failures", "steps", "automata", "precision", "kernels", "plots", "report")

# Time budgets in seconds (wall clock). The whole demo must stay under 3 minutes on 2 CPU cores.
STEP_BUDGET = {"compile": 40, "certify": 40, "trace": 10, "precision": 40, "kernels": 40, "plot": 20}
CERT_MAX_PAIRS = 200_000     # exact BFS cap per model: past it a certificate says "did not close"
CERT_FLOAT_STEPS = 2_000     # the independent float64 check (long random words)
COLLAPSE_FORMATS = ("fp32", "bf16", "fp16", "fp8-e4m3-ieee")
COLLAPSE_STEPS = 2_000       # random word length for the collapse measurement
COLLAPSE_CALL_BUDGET = 6     # seconds per (model, format)


# =========================================================================== the default cases
# Every source is a preset of lrnnkit.automata.sources (docs/fsa_format.rst).

# The automaton with resets compiled through Krohn-Rhodes: on states {0,1,2}, t0 = +1 mod 3 (a Z_3 permutation),
# t1 = reset to 0, t2 = fold 0,1 -> 0 and 2 -> 1 (neither a permutation nor a constant). Its holonomy cascade
# has a Z_3 level and reset levels.
RESET_SPEC = "transformations:[[1,2,0],[0,0,0],[0,0,1]]"


@dataclass
class DemoCase:
    key: str                      # short name used in the report and summary
    source: str                   # the CLI source string (preset) it stands for
    title: str
    construction: str | None = None   # None: compile() picks the best applicable construction. The automata
    # that are not groups are pinned to Krohn-Rhodes: the showcase is GH-product layers for every regular language
    # (000, Theorem 4), which the automatic choice need not pick (it may prefer a dense one-hot layer, 004)
    words: tuple = ()             # worked-trace words (space separated); the first that encodes is used, else
                                  # a random word of length 8
    core: bool = True             # False: a showcase extra whose compile / certify failure does not fail the demo


DEFAULT_CASES = [
    DemoCase("parity", "parity", "Parity", words=("1 0 1 1 0 1",)),
    DemoCase("Z5", "group:Z5", "Cyclic group Z_5", words=("1 2 4 3 0 2",)),
    DemoCase("D4", "group:D4", "Dihedral group D_4 (order 8), two DeltaNet layers (the cheapest construction)"),
    DemoCase("S5", "group:S5", "Symmetric group S_5 (order 120)"),
    DemoCase("A5", "group:A5", "Alternating group A_5 (order 60, simple), 3-D rotations (the cheapest construction)"),
    DemoCase("flipflop", "flipflop", "Flip-flop (set / reset / read), through Krohn-Rhodes",
             construction="krohn-rhodes", words=("set1 read read set0 read set1 read",)),
    DemoCase("even-pairs", "even-pairs", "Even pairs (first letter = last letter), through Krohn-Rhodes",
             construction="krohn-rhodes", words=("0 1 1 0 1 0",)),
    DemoCase("mod-arith5", "mod-arith:5", "Arithmetic mod 5 with precedence, through Krohn-Rhodes",
             construction="krohn-rhodes", words=("3 + 2 * 4 - 1",)),
    DemoCase("reset-kr", RESET_SPEC, "An automaton with resets, through Krohn-Rhodes (000, Theorem 4)",
             construction="krohn-rhodes", words=("t0 t0 t2 t0 t1 t0 t2",)),
    # showcase extras: the same groups through other constructions of the papers (not core steps)
    DemoCase("D4-permutations", "group:D4", "D_4 as 4x4 permutation matrices, <= 3 reflections per token "
             "(000, Theorem 3)", construction="householder-permutation", core=False),
    DemoCase("A5-permutations", "group:A5", "A_5 as 5x5 permutation matrices, <= 4 reflections per token "
             "(000, Theorem 3)", construction="householder-permutation", core=False),
    DemoCase("Z5-reflections", "group:Z5", "Addition mod 5 with reflections, two layers (000, Theorem 6)",
             construction="modadd-reflections", words=("1 2 4 3 0 2",), core=False),
    DemoCase("mod-arith5-blockdiag", "mod-arith:5", "Arithmetic mod 5, block-diagonal with column-normalized "
             "blocks (002, Section 3.3)", construction="block-diagonal-normalized", words=("3 + 2 * 4 - 1",),
             core=False),
    DemoCase("Z5-bilinear", "group:Z5", "Z_5 by rotation blocks in a bilinear RNN (004, abelian groups)",
             construction="bilinear-abelian-rotations", words=("1 2 4 3 0 2",), core=False),
]


# =========================================================================== step machinery
@contextmanager
def _interrupt_guard(R: "_Runner"):
    """Make Ctrl-C stop the demo even where a library turns the KeyboardInterrupt into another exception (a
    SystemError out of C code, say) that a step's guard would record and carry on from: the SIGINT handler sets
    ``R.interrupted`` first, and the guards re-raise KeyboardInterrupt when it is set. Main thread only."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        R.interrupted = True
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


class _Runner:
    def __init__(self, progress: bool, total: int):
        self.interrupted = False
        self.progress = progress
        self.total = total
        self.steps: list = []
        self.t0 = time.perf_counter()

    def say(self, msg: str) -> None:
        if self.progress:
            print(f"[demo {time.perf_counter() - self.t0:6.1f}s] {msg}", file=sys.stderr, flush=True)

    def run(self, name: str, kind: str, core: bool, fn: Callable[[], Any], budget: float | None = None):
        """Run one guarded step; returns (ok, value)."""
        n = len(self.steps) + 1
        self.say(f"({n}/{self.total}) {name} ...")
        t = time.perf_counter()
        rec = {"name": name, "kind": kind, "core": core, "status": "ok", "reason": "", "seconds": 0.0}
        value = None
        try:
            with time_limit(budget if budget is not None else STEP_BUDGET.get(kind)):
                value = fn()
            if isinstance(value, _Fail):
                rec["status"], rec["reason"] = "failed", value.reason
                value = None
            elif isinstance(value, _Skip):
                rec["status"], rec["reason"] = "skipped", value.reason
                value = None
        except (Exception, StepTimeout) as exc:  # the demo records and carries on
            if self.interrupted:    # an interrupt disguised as another exception: stop the run
                raise KeyboardInterrupt from exc
            rec["status"], rec["reason"] = "failed", one_line(exc)
            rec["traceback"] = traceback.format_exc(limit=6)
        rec["seconds"] = round(time.perf_counter() - t, 3)
        self.steps.append(rec)
        self.say(f"    {rec['status']} ({rec['seconds']:.1f} s){': ' + rec['reason'] if rec['reason'] else ''}")
        return rec["status"] == "ok", value


@dataclass
class _Fail:
    reason: str


@dataclass
class _Skip:
    reason: str


# =========================================================================== pieces owned by other modules
def _compile(fsa: FSA, construction: str | None):
    return c_compile(fsa, construction)


def _certify(model, fsa):
    return certify(model, fsa, max_pairs=CERT_MAX_PAIRS, float_steps=CERT_FLOAT_STEPS, seed=0)


# =========================================================================== the demo
def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return float(x)
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if isinstance(x, (str, int, float, bool)) or x is None:
        return x
    return str(x)


def _letter_eigenvalues(model) -> list:
    """Eigenvalues of every letter matrix A(s) of every layer (float64, numpy.linalg.eigvals)."""
    out = []
    for L in model.layers:
        for t in L.transitions:
            out.extend(np.linalg.eigvals(t.A).tolist())
    return out


def _case_word(case: DemoCase, fsa: FSA) -> list:
    for w in case.words:
        try:
            return fsa.encode(w)
        except InputError:
            continue
    rng = np.random.default_rng(5)
    return [int(x) for x in rng.integers(0, fsa.n_letters, size=8)]


def _worked_trace(model, fsa: FSA, word: list) -> dict:
    amap = {s: i for i, s in enumerate(model.alphabet)}
    res = run_float(model, np.array([[amap[fsa.alphabet[a]] for a in word]]), keep_states=True)
    got = [str(x) for x in res.labels()[0]]
    want = list(fsa.output_trace(word))
    states = [np.round(Hs[0], 4).tolist() for Hs in res.states] if res.states else []
    return {"word": [fsa.alphabet[a] for a in word], "automaton": want, "model": got, "agree": got == want,
            "layer_states": states}


def _kernel_backend() -> tuple:
    """``(backend, device, device name, mode)``: the kernels run compiled on a GPU unless ``TRITON_INTERPRET=1`` is
    set (then interpreted, on the CPU, whatever hardware is present); without a GPU always interpreted. ``mode`` is
    what the report shows: "compiled" or "interpreted"."""
    interpret = os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")
    try:
        import torch
        if torch.cuda.is_available() and not interpret:
            return "triton", "gpu", torch.cuda.get_device_name(0), "compiled"
    except Exception:  # noqa: BLE001
        pass
    os.environ.setdefault("TRITON_INTERPRET", "1")
    return "triton", "interpreter", "cpu", "interpreted"


def _run_kernels(model, fsa: FSA, device: str) -> dict:
    from ..layers import run_model
    B, T = (64, 1024) if device == "gpu" else (2, 24)
    rng = np.random.default_rng(1)
    words = rng.integers(0, len(model.alphabet), size=(B, T))
    t = time.perf_counter()
    got = run_model(model, words, backend="triton")
    secs = time.perf_counter() - t
    got = np.asarray(getattr(got, "outputs", got))
    ref = run_float(model, words).outputs
    agree = bool(got.shape == ref.shape and np.array_equal(got, ref))
    return {"batch": B, "length": T, "seconds": round(secs, 4), "agree_with_float64": agree,
            "mismatches": int(np.sum(got != ref)) if got.shape == ref.shape else None}


def run_demo(out_dir, progress: bool = True, cases: list | None = None, *, kernels: bool = True,
             precision: bool = True) -> dict:
    """Run the showcase into ``out_dir`` (created if needed); returns the summary written to ``summary.json``.

    ``summary["exit_status"]`` is 0 iff every core step (compile, certify) succeeded; see the module docstring.

    Long: the demo's steps in the order they run and report, each guarded the same way (a failed step is recorded
    and the next one runs), so that the script reads as the report it writes."""
    out_dir = os.fspath(out_dir)
    os.makedirs(out_dir, exist_ok=True)
    cases = list(DEFAULT_CASES if cases is None else cases)
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    n_steps = 3 * len(cases) + (2 if precision else 0) + (len(cases) if kernels else 0) + 1
    R = _Runner(progress, n_steps)
    automata: dict = {}
    models: dict = {}
    R.say(f"lrnnkit demo -> {out_dir}")

    precision_res: dict = {}
    kernels_res: dict = {}
    plots: list = []
    interrupted = False
    with _interrupt_guard(R):
        try:
            for case in cases:
                entry: dict = {"key": case.key, "title": case.title, "source": case.source, "status": "failed",
                               "core": case.core}
                automata[case.key] = entry

                def do_compile(case=case, entry=entry):
                    fsa = load_source(case.source)
                    entry.update(automaton=fsa.name, automaton_from="preset", states=fsa.n_states,
                                 letters=fsa.n_letters)
                    model = _compile(fsa, case.construction)
                    prof = resource_profile(model)
                    entry.update(construction=model.provenance.get("construction"), paper=model.provenance.get("paper"),
                                 statement=model.provenance.get("statement"), layers=prof["layers"], widths=prof["widths"],
                                 max_factors_per_token=prof["max_factors_per_token"],
                                 eigenvalues_in_unit_interval=prof["eigenvalues_in_unit_interval"],
                                 layer_kinds=[L.kind for L in model.layers])
                    return fsa, model

                ok, got = R.run(f"compile {case.key}", "compile", case.core, do_compile)
                if not ok:
                    entry["reason"] = R.steps[-1]["reason"]
                    R.steps.append({"name": f"certify {case.key}", "kind": "certify", "core": case.core,
                                    "status": "failed", "reason": "not compiled", "seconds": 0.0})
                    R.steps.append({"name": f"trace {case.key}", "kind": "trace", "core": False, "status": "skipped",
                                    "reason": "not compiled", "seconds": 0.0})
                    continue
                fsa, model = got

                def do_certify(model=model, fsa=fsa, entry=entry):
                    cert = _certify(model, fsa)
                    entry.update(certified=cert.certified, method=cert.method, reachable_states=cert.reachable_states,
                                 explored_transitions=cert.explored_transitions, certificate_reason=cert.reason,
                                 counterexample=cert.counterexample, float_check=cert.float_check)
                    if not cert.certified:
                        return _Fail(f"not certified: {cert.reason}"
                                     + (f" (counterexample {' '.join(cert.counterexample)})" if cert.counterexample else ""))
                    return cert

                ok, _cert = R.run(f"certify {case.key}", "certify", case.core, do_certify)
                entry["status"] = "ok" if ok else "failed"
                if not ok:
                    entry["reason"] = R.steps[-1]["reason"]
                models[case.key] = (fsa, model)
                try:
                    entry["eigenvalues"] = [[float(z.real), float(z.imag)] for z in _letter_eigenvalues(model)]
                except Exception as exc:  # noqa: BLE001
                    entry["eigenvalues"] = []
                    entry["eigenvalues_error"] = one_line(exc)

                def do_trace(case=case, fsa=fsa, model=model, entry=entry):
                    tr = _worked_trace(model, fsa, _case_word(case, fsa))
                    entry["trace"] = tr
                    return tr if tr["agree"] else _Fail("float64 outputs differ from the automaton on the worked word")

                R.run(f"trace {case.key}", "trace", False, do_trace)

            if precision:
                _precision_steps(R, models, precision_res, out_dir)

            if kernels:
                backend, device, devname, mode = _kernel_backend()
                kernels_res.update(backend=backend, device=device, device_name=devname, mode=mode, models={})
                for case in cases:
                    if case.key not in models:
                        R.steps.append({"name": f"kernels {case.key}", "kind": "kernels", "core": False,
                                        "status": "skipped", "reason": "no model", "seconds": 0.0})
                        continue
                    fsa, model = models[case.key]

                    def do_kernels(fsa=fsa, model=model, key=case.key):
                        r = _run_kernels(model, fsa, device)
                        kernels_res["models"][key] = r
                        return r if r["agree_with_float64"] else _Fail(
                            f"triton outputs differ from float64 ({r['mismatches']} mismatches)")

                    R.run(f"kernels {case.key}", "kernels", False, do_kernels)


            def do_plots():
                plots.extend(report.make_plots(out_dir, automata, precision_res))
                return plots

            R.run("plots", "plot", False, do_plots)
        except KeyboardInterrupt:
            # Ctrl-C: stop at once, but still write what was seen, marked incomplete (exit status 130)
            interrupted = True
            R.steps.append({"name": "interrupted", "kind": "interrupt", "core": True, "status": "failed",
                            "reason": "interrupted by the user (Ctrl-C): the run stopped here, this report is "
                                      "incomplete", "seconds": 0.0})
            R.say("interrupted: writing the incomplete report")

    core_failures = [s["name"] for s in R.steps if s["core"] and s["status"] != "ok"]
    summary = {
        "format": "lrnnkit.demo-summary", "version": 1, "lrnnkit_version": _version(), "started": started,
        "elapsed_s": round(time.perf_counter() - R.t0, 2),
        "machine": {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()},
        "status": "interrupted" if interrupted else "ok" if not core_failures else "failed",
        "exit_status": 130 if interrupted else 0 if not core_failures else 1, "incomplete": interrupted,
        "core_failures": core_failures, "steps": R.steps, "automata": automata, "precision": precision_res,
        "kernels": kernels_res, "plots": plots, "report": "report.html",
    }
    summary = _jsonable(summary)
    try:
        report.write_report(os.path.join(out_dir, "report.html"), summary)
    except Exception as exc:  # noqa: BLE001  (the summary still gets written; the failure is recorded in it)
        summary["steps"].append({"name": "report", "kind": "report", "core": False, "status": "failed",
                                 "reason": one_line(exc), "seconds": 0.0})
    atomic_write_text(os.path.join(out_dir, "summary.json"), json.dumps(summary, indent=1) + "\n")
    R.say(f"done in {summary['elapsed_s']:.1f} s: {sum(s['status'] == 'ok' for s in R.steps)} ok, "
          f"{sum(s['status'] == 'failed' for s in R.steps)} failed, "
          f"{sum(s['status'] == 'skipped' for s in R.steps)} skipped; report {os.path.join(out_dir, 'report.html')}")
    return summary


def _precision_steps(R: _Runner, models: dict, res: dict, out_dir: str) -> None:
    """The impossibility demo (000, Theorems 1-2; ``lrnnkit precision impossibility``) and the collapse of exact
    constructions in low precision (``lrnnkit precision collapse``)."""
    def do_impossibility():
        fn = getattr(P, "cli_impossibility", None)
        if fn is None:
            return _Skip("lrnnkit.precision has no impossibility demo (cli_impossibility) yet")
        sub = os.path.join(out_dir, "impossibility")
        r = fn(sub)
        res["impossibility"] = _jsonable(getattr(r, "to_json", lambda: r)())
        if os.path.isdir(sub):
            res["impossibility_plots"] = sorted(
                os.path.relpath(os.path.join(dp, f), out_dir).replace(os.sep, "/")
                for dp, _dn, fs in os.walk(sub) for f in fs if f.lower().endswith(".png"))
        return r

    R.run("precision: impossibility (000 Thms 1-2)", "precision", False, do_impossibility)

    def do_collapse():
        rows: list = []
        res["collapse"] = rows          # filled as it goes: a step timeout keeps the rows done so far
        for key, (_fsa, model) in models.items():
            for fmt in COLLAPSE_FORMATS:
                try:
                    with time_limit(COLLAPSE_CALL_BUDGET):
                        r = precision_collapse(model, format=fmt, steps=COLLAPSE_STEPS)
                    r = getattr(r, "to_json", lambda: r)()
                    step = r.get("first_wrong_step") if isinstance(r, dict) else r
                    rows.append({"model": key, "format": fmt, "first_wrong_step": step, "steps": COLLAPSE_STEPS})
                except StepTimeout as exc:
                    if exc.seconds != COLLAPSE_CALL_BUDGET:
                        raise                     # the whole step's budget: stop here
                    rows.append({"model": key, "format": fmt, "error": one_line(exc)})
                except Exception as exc:  # noqa: BLE001
                    if R.interrupted:
                        raise KeyboardInterrupt from exc
                    rows.append({"model": key, "format": fmt, "error": one_line(exc)})
        if rows and all("error" in r for r in rows):
            return _Fail(rows[0]["error"])
        return rows

    R.run("precision: collapse of exact constructions", "precision", False, do_collapse)


def _version() -> str:
    return __version__
