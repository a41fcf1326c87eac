"""Precision demos: the impossibility theorems of paper 000 happening in finite precision, and the collapse of exact
constructions in low-precision formats. Each demo returns a JSON-able dict; plots go to a given directory.

* :func:`theorem1_demo` (000, Theorem 1; proof in Appendix B.1): on the input ``1^k``, a layer whose transition has
  its spectrum in [0, 1] (Mamba-style diagonal, DeltaNet with beta in [0, 1], the counting shortcut ``a = 1``) has a
  finite-precision state that becomes constant: period 1 from some ``k``, measured exactly per format and cast policy
  (hashing the finite-precision states for ``op`` / ``matvec``; the proof model's closed form for ``proof``). Then
  any decoder's output is constant from there, and parity (which alternates) is wrong at ``k`` or ``k + 1``.
  With the eigenvalue -1 (``A = -1``, DeltaNet with ``beta = 2``) the state alternates forever (period 2) and the
  sign decoder solves parity for every length (exact: the run is periodic and matches the automaton's period).
* :func:`theorem2_demo` (000, Theorem 2; Appendix B.2): with real eigenvalues (negatives allowed) the state and the
  output on ``1^k`` have an eventual period dividing 2 for one layer (``2^L`` for ``L`` layers, shown with a
  two-layer model of period 4), so counting mod 3 fails at a measured step; the rotation construction (complex
  eigenvalues ``e^{+-2 pi i/m}``, 000 Theorem 3) counts mod m until rounding drift breaks it (or forever, when the
  finite-precision orbit closes correctly: the verdict is exact for every length).
* :func:`cast_model_findings` — both theorems depend on the proof's cast model: under per-operation rounding
  (IEEE arithmetic in the format) a DeltaNet matrix with eigenvalues {1/2, 1} solves parity in e2m2, and a real
  symmetric 3x3 matrix counts mod 3 in e3m1, for every length (rounding limit cycles).
* :func:`collapse_table` — construction x format x policy -> first wrong step, with mitigations (exactly
  representable keys ``gh="scaled"``, state renormalization) and plots of steps-to-failure against m and format.
"""
from __future__ import annotations

import os
import time

import numpy as np

from ..errors import SizeLimitError
from ..fileio import save_figure
from .demo_models import (counter_real, counter_rotation, deltanet_model, diagonal_layer_model, parity_scalar,
                          two_layer_period4)
from .proof_model import proof_constant_input
from .simulate import EventuallyPeriodic, Simulator, collapse
from ..model import Decoder, Layer, Model, TableMap, Transition
from .demo_models import _prov, counter_fsa

__all__ = ["theorem1_demo", "theorem2_demo", "collapse_table", "impossibility_demo", "cast_model_findings",
           "DEMO_FORMATS"]

DEMO_FORMATS = ["fp32", "tf32", "bf16", "fp16", "fp8-e4m3-ieee", "fp8-e4m3fn", "fp8-e5m2", "fp4-e2m1", "e5m7", "e3m4"]
SIM_POLICIES = ["op", "matvec"]


def _state_period(model, fmt, policy, symbol, cap):
    """(pre-period, period) of layer 0's state on symbol^k, exactly (None, None) if no period within cap steps."""
    sim = Simulator(model, fmt, "nearest-even", policy)
    try:
        run = sim.run_sequence(EventuallyPeriodic(np.array([symbol]), 0, 1), cap)
    except SizeLimitError:
        return None, None
    mu, lam = run["layer_periods"][0]
    return mu, lam


def theorem1_demo(formats=None, cap: int = 50_000) -> dict:
    """000, Theorem 1 in finite precision: see the module docstring. ``cap`` bounds each simulated run."""
    formats = list(formats or DEMO_FORMATS)
    cases = [
        ("mamba-diagonal a=(1/2, 15/16), B=1", "[0, 1]", diagonal_layer_model(["1/2", "15/16"], [1, 1]), 0),
        ("counting shortcut a=1, B=1 (000 Sec. 3.1)", "[0, 1]", diagonal_layer_model(["1"], [1], name="counting"), 0),
        ("deltanet beta=1/2, k=(3/5, 4/5)", "[0, 1]", deltanet_model("1/2"), 0),
        ("parity A(1)=1/2 (diagonal)", "[0, 1]", parity_scalar("1/2"), 1),
        ("parity A(1)=-1 (reflection)", "[-1, 1]", parity_scalar("-1"), 1),
        ("deltanet beta=2 (reflection)", "[-1, 1]", deltanet_model("2"), 0),
    ]
    rows = []
    holds = True
    for name, spec, model, sym in cases:
        for fmt in formats:
            row = {"model": name, "spectrum": spec, "format": fmt}
            for pol in SIM_POLICIES:
                mu, lam = _state_period(model, fmt, pol, sym, cap)
                row[pol] = {"pre_period": mu, "period": lam}
                if lam is not None and spec == "[0, 1]":
                    holds &= lam == 1   # the theorem's claim; [-1, 1] rows only illustrate (no claim)
            try:
                pr = proof_constant_input(model.layers[0], fmt, "nearest-even", sym)
                row["proof"] = {"pre_period": pr.pre_period, "period": pr.period}
                if spec == "[0, 1]":
                    holds &= pr.period == 1
            except Exception as exc:  # noqa: BLE001 - reported in the table
                row["proof"] = {"error": str(exc)}
            if name.startswith("parity"):
                c = collapse(model, fmt, "matvec", steps=1, cycle=["1"], prefix=[], period_cap=cap)
                row["parity_first_wrong_step"] = c.first_wrong_step
                row["parity_verdict_all_lengths"] = c.exact_for_all_lengths
            rows.append(row)
    return {"statement": "000, Theorem 1: a finite-precision LRNN solves parity only if some A(x) has an eigenvalue "
                         "lambda with |lambda| >= 1 and lambda not real non-negative",
            "input": "1^k", "cap_steps": cap,
            "reading": "period 1 = the state is constant from pre_period on (so every decoder fails parity by "
                       "pre_period + 1); period 2 = alternates forever; null = no period within cap_steps "
                       "(counting with a = 1 in fp32 stalls only at 2^24 under op/matvec; the proof model's exact "
                       "sum stalls only at overflow). The verdict checks the theorem's claim on the [0, 1] rows; "
                       "the [-1, 1] rows show that the eigenvalue -1 makes alternation possible, not guaranteed: "
                       "a rounded unit key (3/5, 4/5) gives the DeltaNet reflection an eigenvalue slightly off -1, "
                       "and some formats lose the alternation",
            "rows": rows, "verdict": "holds" if holds else "falsified"}


def theorem2_demo(formats=None, cap: int = 20_000, moduli=(3, 5)) -> dict:
    """000, Theorem 2 in finite precision: see the module docstring."""
    formats = list(formats or DEMO_FORMATS)
    rows = []
    holds = True
    real = counter_real(3)
    two = two_layer_period4()
    for fmt in formats:
        for pol in SIM_POLICIES:
            c = collapse(real, fmt, pol, steps=1, cycle=["1"], prefix=[], period_cap=cap)
            rows.append({"model": "real diagonal (-1, -1/2, 1/2), counting mod 3", "format": fmt, "policy": pol,
                         "output_period": c.period, "output_pre_period": c.pre_period,
                         "first_wrong_step": c.first_wrong_step})
            if c.period is not None:
                holds &= 2 % c.period == 0 and c.first_wrong_step is not None
            c2 = collapse(two, fmt, pol, steps=1, cycle=["1"], prefix=[], period_cap=cap)
            rows.append({"model": "two real layers (period 2^L = 4), counting mod 4", "format": fmt, "policy": pol,
                         "output_period": c2.period, "output_pre_period": c2.pre_period,
                         "first_wrong_step": c2.first_wrong_step})
            if c2.period is not None:
                holds &= 4 % c2.period == 0
        pr = proof_constant_input(real.layers[0], fmt)
        rows.append({"model": "real diagonal (-1, -1/2, 1/2), counting mod 3", "format": fmt, "policy": "proof",
                     "state_period": pr.period, "state_pre_period": pr.pre_period})
        holds &= 2 % pr.period == 0
    rot = []
    for m in moduli:
        for form in ("gh", "dense"):
            model = counter_rotation(m, form)
            for fmt in formats:
                for pol in SIM_POLICIES:
                    try:
                        c = collapse(model, fmt, pol, steps=1, cycle=["1"], prefix=[], period_cap=cap)
                        rot.append({"m": m, "form": form, "format": fmt, "policy": pol,
                                    "first_wrong_step": c.first_wrong_step, "output_period": c.period,
                                    "output_pre_period": c.pre_period, "exact_for_all_lengths": True})
                    except SizeLimitError:
                        rot.append({"m": m, "form": form, "format": fmt, "policy": pol, "first_wrong_step": None,
                                    "exact_for_all_lengths": False, "note": f"no period within {cap} steps"})
    return {"statement": "000, Theorem 2: an L-layer finite-precision LRNN counts mod m (m not a power of two) only "
                         "if some product of at most 2^i - 1 transition matrices of layer i has an eigenvalue with "
                         "|lambda| >= 1 and nonzero imaginary part",
            "input": "1^k", "rows": rows, "rotation": rot, "verdict": "holds" if holds else "falsified"}


# --------------------------------------------------------------------------- collapse table
def collapse_table(models, formats=("fp32", "bf16", "fp16", "fp8-e4m3-ieee", "fp8-e5m2", "fp4-e2m1"),
                   policies=("op", "matvec"), steps: int = 5000, cap: int = 100_000, rotation_m=range(3, 17),
                   time_budget: float = 120.0) -> dict:
    """First wrong step per (model, format, policy, variant); ``models`` is a list of ``(label, Model)`` (the
    construction registry's models: :func:`lrnnkit.showcase.collapse.collapse_table`). Multi-letter automata run a
    seeded random word of ``steps`` symbols; one-letter ones the periodic word ``1 1 1 ...`` (exact for all lengths
    when a period is found within ``cap``). Variants: ``gh="factors"`` (unit keys as stored, rounded), ``gh="scaled"`` (exact keys
    ``u`` with ``beta / u^T u``: the exactly-representable mitigation), ``renorm`` (state renormalized to ``|H_0|``
    after each step), ``decoder_fp64`` (diagnostic: float64 decoder on the rounded state)."""
    t_start = time.time()
    rows = []
    variants = [{"gh": "factors"}, {"gh": "scaled"}, {"gh": "factors", "renorm": True},
                {"gh": "factors", "decoder_fp64": True}]
    for label, model in models:
        for fmt in formats:
            for pol in policies:
                for var in variants:
                    if time.time() - t_start > time_budget:
                        break
                    rows.append(_collapse_row(label, model, fmt, pol, var, steps, cap))
    rot_rows = []
    for m in rotation_m:
        model = counter_rotation(m, "gh")
        for fmt in formats:
            for var in ({"gh": "factors"}, {"gh": "factors", "renorm": True}):
                if time.time() - t_start > time_budget:
                    break
                r = _collapse_row(f"counter:{m} [rotation 2pi/{m}, 2 reflections]", model, fmt, "matvec", var,
                                  steps, cap)
                r["m"] = m
                rot_rows.append(r)
    return {"rows": rows, "rotation_vs_m": rot_rows, "steps": steps, "cap": cap,
            "reading": "first_wrong_step: 1-based step of the first output that differs from the automaton; null: "
                       "none (for all lengths when exact_for_all_lengths, else within the steps of the random word)",
            "complete": time.time() - t_start <= time_budget}


def _collapse_row(label, model, fmt, pol, var, steps, cap) -> dict:
    one_letter = len(model.alphabet) == 1
    row = {"construction": label, "format": fmt, "policy": pol, "variant": _variant_name(var)}
    try:
        if one_letter:
            c = collapse(model, fmt, pol, steps=steps, cycle=[model.alphabet[0]], prefix=[], period_cap=cap, **var)
        else:
            c = collapse(model, fmt, pol, steps=steps, **var)
        row.update(first_wrong_step=c.first_wrong_step, exact_for_all_lengths=c.exact_for_all_lengths,
                   period=c.period, distinct_states=c.distinct_states)
    except SizeLimitError as exc:
        row.update(first_wrong_step=None, exact_for_all_lengths=False, note=str(exc))
    return row


def _variant_name(var: dict) -> str:
    parts = [f"keys={var.get('gh', 'factors')}"]
    if var.get("renorm"):
        parts.append("renorm")
    if var.get("decoder_fp64"):
        parts.append("decoder-fp64")
    return ",".join(parts)


# --------------------------------------------------------------------------- plots
def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _save(plt, fig, out_dir: str, name: str, **kw) -> str:
    """Write ``fig`` to ``out_dir/name`` (PNG, 110 dpi; laid out tight unless ``bbox_inches`` says otherwise) and
    close it; returns the path."""
    path = os.path.join(out_dir, name)
    if not kw:
        fig.tight_layout()
    save_figure(fig, path, dpi=110, **kw)
    plt.close(fig)
    return path


def plot_theorem1(out_dir: str, fmt: str = "bf16", steps: int = 80) -> str:
    """Trajectories of the first state coordinate on 1^k in one format: [0, 1] spectra settle, -1 alternates."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, model, sym in (("deltanet beta=1/2", deltanet_model("1/2"), 0),
                             ("mamba diag a=15/16", diagonal_layer_model(["15/16"], [1]), 0),
                             ("A(1) = -1", parity_scalar("-1"), 1)):
        sim = Simulator(model, fmt, "nearest-even", "matvec")
        r = sim.run(np.full((1, steps), sym), keep_states=True)
        ax.plot(np.arange(1, steps + 1), r.states[0][0, :, 0], marker=".", label=name)
    ax.set_xlabel("k (input 1^k)")
    ax.set_ylabel(f"state coordinate 0 ({fmt}, matvec)")
    ax.set_title("000 Theorem 1: spectrum in [0,1] settles, eigenvalue -1 alternates")
    ax.legend()
    return _save(plt, fig, out_dir, "theorem1_trajectories.png")


def plot_rotation_vs_m(out_dir: str, table: dict) -> str | None:
    rows = [r for r in table.get("rotation_vs_m", []) if r["variant"] == "keys=factors"]
    if not rows:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4))
    fmts = sorted({r["format"] for r in rows}, key=lambda f: [r["format"] for r in rows].index(f))
    top = max([r["first_wrong_step"] or 0 for r in rows] + [10]) * 4
    for f in fmts:
        rs = sorted((r for r in rows if r["format"] == f), key=lambda r: r["m"])
        ax.plot([r["m"] for r in rs], [r["first_wrong_step"] or top for r in rs], marker="o", label=f)
    ax.axhline(top, color="gray", ls=":", lw=1)
    ax.text(3, top * 1.1, "never wrong (exact, periodic) / none within cap", fontsize=8, color="gray")
    ax.set_yscale("log")
    ax.set_xlabel("m (counting mod m by a rotation by 2 pi / m)")
    ax.set_ylabel("first wrong step on 1^k (matvec, RNE)")
    ax.set_title("Rotation construction: steps to failure against m")
    ax.legend(fontsize=8)
    return _save(plt, fig, out_dir, "collapse_rotation_vs_m.png")


def impossibility_demo(out_dir: str | None = None, formats=None, cap: int = 5_000) -> dict:
    """Theorems 1 and 2 of paper 000 in finite precision (dicts), plots in ``out_dir`` when given."""
    t1 = theorem1_demo(formats, cap)
    t2 = theorem2_demo(formats, cap)
    res = {"theorem1": t1, "theorem2": t2, "cast_model_findings": cast_model_findings(), "plots": []}
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
        res["plots"].append(plot_theorem1(out_dir))
        rot = {"rotation_vs_m": [{"m": r["m"], "format": r["format"], "variant": "keys=factors",
                                  "first_wrong_step": r["first_wrong_step"]}
                                 for r in t2["rotation"] if r["form"] == "gh" and r["policy"] == "matvec"]}
        p = plot_rotation_vs_m(out_dir, rot)
        if p:
            res["plots"].append(p)
    return res


# --------------------------------------------------------------------------- the cast model matters (findings)
def _lookup_model(A, H0, fmt: str, m: int, name: str, statement: str):
    """One dense layer ``H <- A H`` (B = 0) on the letter ``1`` and a decoder that reads the count mod m off the
    finite-precision state: a nearest-reference decoder over the states the run visits under the op policy (each
    visited state is its own unique nearest reference), labelled with k mod m. Built only when the visited states
    are consistent (no state seen at two counts with different residues)."""
    from fractions import Fraction

    fsa = counter_fsa(m)
    H0 = [Fraction(x) for x in H0]
    t = Transition.from_exact([[Fraction(x) for x in r] for r in A])
    d = len(A)
    probe = Layer("dense", d, [t], np.array([float(x) for x in H0]), TableMap.identity("input", 1),
                  Decoder.exact([[0] * d], [0], ["0"]), [Fraction(x) for x in H0], ["1"], None, name)
    pm = Model(["1"], [probe], TableMap.identity(0, 1), ["0"], name)
    sim = Simulator(pm, fmt, "nearest-even", "op")
    run = sim.run_sequence(EventuallyPeriodic(np.array([0]), 0, 1))
    mu, lam = run["layer_periods"][0]
    memo = sim.memos[0]
    # states H_0 .. H_{mu+lam-1} in visiting order: walk the memo from H_0
    sid, seq = memo.h0, []
    for _ in range(mu + lam):
        seq.append(sid)
        sid = memo.trans[(sid, 0)][0] if (sid, 0) in memo.trans else memo.compute(sid, 0)[0]
    label: dict = {}
    for k, s in enumerate(seq):
        if label.setdefault(s, k % m) != k % m:
            raise ValueError("inconsistent")
    if lam % m:
        raise ValueError(f"period {lam} is not a multiple of {m}")
    refs = [[Fraction(x) for x in memo.states[s]] for s in label]
    dec = Decoder.nearest(refs, [str(label[s]) for s in label])
    # output at step t reads H_t: the label of H_t is t mod m (the automaton's output after t ones)
    L = Layer("dense", d, [t], np.array([float(x) for x in H0]), TableMap.identity("input", 1), dec,
              [Fraction(x) for x in H0], ["1"], [f"h{i}" for i in range(d)], name)
    return Model(["1"], [L], TableMap.identity(0, len(dec.labels)), list(dec.labels), name,
                 _prov(fsa, name, statement)), (mu, lam)


def cast_model_findings() -> dict:
    """Theorems 1 and 2 of paper 000 hold in the proof's cast model (products exact, each term cast, sum cast:
    Appendix A.3 / B.1), but NOT under per-operation rounding (our ``op`` policy, IEEE arithmetic in the format):

    * Theorem 1: ``A = [[3/4, -1/4], [-1/4, 3/4]] = I - (1/2) u u^T / (u^T u)``, ``u = (1, 1)`` (DeltaNet with
      beta = 1/2: eigenvalues 1 and 1/2, both in [0, 1]), ``B = 0``, ``H_0 = (-3, 0)``, format e2m2 (5 bits) with
      round-to-nearest-even after every operation: the state on ``1^k`` is (-3, 0), (-2, 0.75), (-1.75, 1), then
      alternates (-1.5, 1.25), (-1.25, 1.5) forever (a rounding limit cycle of period 2), so a decoder recognizes
      parity for every length.
    * Theorem 2: a symmetric 3x3 dyadic ``A`` with real eigenvalues in (-1, 1), ``B = 0``, in e3m1 has an op-policy
      state of period 6 on ``1^k``: a decoder counts mod 3 (and mod 6) for every length.

    Each is checked here by the exact period detection and by running the model (with its lookup decoder, decoded in
    float64 on the rounded state; the theorems allow any decoder) against the automaton for every length."""
    out = {}
    cases = [
        ("theorem1", "000, Theorem 1", [["3/4", "-1/4"], ["-1/4", "3/4"]], ["-3", "0"], "e2m2", 2),
        ("theorem2", "000, Theorem 2", [["-3/8", "-1/4", "3/8"], ["-1/4", "1/8", "-1/2"], ["3/8", "-1/2", "-1/2"]],
         ["-1", "-3/2", "3/2"], "e3m1", 3),
    ]
    import sympy
    for key, stmt, A, H0, fmt, m in cases:
        model, (mu, lam) = _lookup_model(A, H0, fmt, m, f"{key}-op-counterexample", stmt)
        M = sympy.Matrix([[sympy.Rational(x) for x in r] for r in A])
        lam_sym = sympy.Symbol("lambda")
        roots = sympy.real_roots(M.charpoly(lam_sym).as_expr())
        c = collapse(model, fmt, "op", cycle=["1"], prefix=[], decoder_fp64=True)
        proof = [collapse(model, fmt, "proof", steps=60, word=["1"] * 60, decoder_fp64=True).first_wrong_step]
        out[key] = {"statement": stmt, "format": fmt, "policy": "op (round after every operation)",
                    "A": A, "B": "0", "H0": H0, "symmetric": M == M.T,
                    "eigenvalues": [str(sympy.nsimplify(r)) if r.is_rational else f"{float(r):.6f}" for r in roots],
                    "all_eigenvalues_real": len(roots) == len(A),
                    "state_pre_period": mu, "state_period": lam,
                    "counts_mod": m, "first_wrong_step_all_lengths": c.first_wrong_step,
                    "exact_for_all_lengths": c.exact_for_all_lengths,
                    "proof_model_first_wrong_step_within_60": proof[0],
                    "verdict": "falsified (op cast model); holds in the proof's cast model"
                    if c.first_wrong_step is None and c.exact_for_all_lengths else "not a counterexample"}
    return out
