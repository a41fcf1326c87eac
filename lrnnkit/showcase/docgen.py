"""Documentation generated from the code: one page per construction, the theorem registry, the CLI and API references.

``lrnnkit docs OUT_DIR`` (``make docs`` runs it with ``docs/generated``) writes
reStructuredText that the Sphinx site in ``docs/`` includes:

* ``constructions/index.rst`` and one page per construction of :func:`lrnnkit.constructions.catalogue` (iterated at
  run time, so constructions registered by any module appear without touching the docs). A page holds the
  statement and paper reference, the declared resource formulas, a small instance compiled with the construction
  and its matrices rendered exactly (exact values -> :func:`lrnnkit.exact.to_sympy` -> ``sympy.latex``), a worked
  trace on a short word (exact executor beside the automaton), the measured resources, the certificate
  (:func:`lrnnkit.certify.certify`), the eigenvalue plot and, when :mod:`lrnnkit.precision` provides it, the
  precision-collapse plot.
* ``theorems.rst``: the statement registry (:func:`lrnnkit.theorems.all_statements`) as a table of recorded verdicts
  with their evidence, then every statement with its hypotheses, conclusion, counterexample and correction.
* ``cli.rst``: the help of every command, from the argparse parser (:func:`lrnnkit.cli.docs.help_pages` hands it in).
* ``api.rst``: autodoc of every public module of the package (module names not starting with ``_``).

Failure policy (decided here; CI relies on it). The generator never stops at the first problem: every page is
written. A construction that raises while building or certifying its instance, a construction that is not an "as
printed" variant (``variant_of`` unset) whose instance is *not* certified, and a public module that fails to import
are **errors**: the page says what happened and the exit status is 1, so ``make docs`` (and CI) fails. (A model
without exact weights cannot be certified by design and claims no certificate: it is a warning, with its float64
check on the page.) A construction for which none of the candidate instances applies gets a page without an instance
and a *warning* only (exit 0): it is a gap in this generator's list of small automata (a construction may name its
own instance by setting an ``example`` attribute to a source string), not a bug in the construction. A missing
optional piece (the precision simulator) is noted on the page and is not an error. ``OUT_DIR/docgen.json`` records
all of it.

Docstrings that are not valid reStructuredText fail the ``-W`` build of the API reference: the Sphinx hook
:func:`setup_sphinx` checks each one as napoleon will convert it and reports every problem as a warning naming the
object and the problem (an undefined substitution such as ``|Q|``, a reference without a target, bad indentation).
"""
from __future__ import annotations

import importlib
import inspect
import io
import json
import os
import pkgutil
import re
import shutil
import sys
import time
from typing import Any

import numpy as np

from .. import __path__ as _PACKAGE_PATH
from ..automata.sampling import random_word
from ..automata.sources import load_source
from ..certify import certify, resource_profile
from ..theorems import all_statements
from .report import eigenvalue_figure, figure
from .wiring import wiring_figure
from ..fileio import atomic_write_text, save_figure
from .steps import StepTimeout, one_line, time_limit
from ..constructions import applicable, catalogue, compile as c_compile
from ..errors import MESSAGE_CHARS, InputError
from ..exact import exact_to_json, to_sympy
from ..executor import run_exact, run_float
from ..precision import collapse as precision_collapse
from ..theorems.registry import OWN

__all__ = ["generate", "ensure_generated", "setup_sphinx", "CANDIDATE_INSTANCES", "rst_text", "slug"]

MARKER = ".lrnnkit-docgen"
# Small automata a construction page may use as its instance (see _pick_instance for the choice among them).
CANDIDATE_INSTANCES = [
    "group:Z3", "parity", "group:S3", "flipflop", "counter:3", "group:D4", "even-pairs",
    "transformations:[[1,2,0],[0,0,0],[0,0,1]]", "group:Z5", "cycle-nav:3", "mod-arith:3", "group:A4",
    "group:S4", "group:A5", "regex:(ab)*",
]
MAX_SYMBOLS_SHOWN = 6     # letters whose matrices are rendered per layer
MAX_WIDTH_SHOWN = 10      # wider layers are summarized instead of rendered
STEP_TIMEOUT = 90         # seconds per construction (build + certify + plots)


# =========================================================================== small RST helpers
def slug(name: str) -> str:
    """A file-name-safe page name for a construction."""
    s = re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-").lower()
    return s or "construction"


_RST_SPECIAL = re.compile(r"([\\`*_|\[\]<>:])")


def _escape_plain(s: str) -> str:
    return _RST_SPECIAL.sub(r"\\\1", s)


def rst_text(text: Any) -> str:
    """Free text (statements as printed, evidence) as one safe RST paragraph: ``$...$`` becomes ``:math:``, every
    other inline-markup character is escaped, line breaks become spaces."""
    if text is None:
        return ""
    text = " ".join(str(text).split())
    out = []
    pos = 0
    for m in re.finditer(r"\$\$?([^$]+?)\$\$?", text):
        out.append(_escape_plain(text[pos:m.start()]))
        body = m.group(1).strip()
        if body and "`" not in body and not body.endswith("\\"):   # a final backslash would escape the `
            out.append(f"\\ :math:`{body}`\\ ")
        else:
            out.append(_escape_plain(m.group(0)))
        pos = m.end()
    out.append(_escape_plain(text[pos:]))
    s = "".join(out).strip()
    # a paragraph must not start like a list, a directive or a comment, nor be a transition (punctuation only)
    if re.match(r"^([-+*#]|#\.|\d+[.)]|\.\.)(\s|$)", s):
        s = "\\" + s
    if s and not any(ch.isalnum() for ch in s):
        s = "\\ " + s
    return s


def _title(text: str, ch: str = "=") -> str:
    t = " ".join(str(text).split())
    return f"{t}\n{ch * max(len(t), 3)}\n"


def _list_table(header: list | None, rows: list, widths: list | None = None) -> str:
    """A ``list-table``; cells are already RST inline text (single line). ``header`` None: no header row."""
    out = [".. list-table::", f"   :header-rows: {0 if header is None else 1}"]
    if widths:
        out.append("   :widths: " + " ".join(str(w) for w in widths))
    out.append("")
    for r in ([] if header is None else [header]) + rows:
        first = True
        for c in r:
            c = str(c) if str(c).strip() else "\\ "
            out.append(("   * - " if first else "     - ") + c)
            first = False
    return "\n".join(out) + "\n"


def _lit(s: Any) -> str:
    """Inline literal (double backquotes) of arbitrary text."""
    s = " ".join(str(s).split())
    if not s:
        return "\\ "
    if "`" in s:
        return _escape_plain(s)
    return f"``{s}``"


def _literal_block(text: str) -> str:
    return "::\n\n" + "\n".join("    " + ln for ln in str(text).splitlines()) + "\n"


def _latex_text(s: str) -> str:
    """A symbol name inside ``\\text{}``."""
    rep = {"\\": r"\backslash ", "{": r"\{", "}": r"\}", "_": r"\_", "#": r"\#", "%": r"\%", "&": r"\&",
           "$": r"\$", "^": r"\^{}", "~": r"\~{}"}
    return "".join(rep.get(ch, ch) for ch in str(s))


# =========================================================================== exact -> LaTeX
class _Latex:
    """Exact values to LaTeX through sympy (memoized: to_sympy simplifies, which is slow for cyclotomics)."""

    def __init__(self):
        self.cache: dict = {}

    def value(self, x) -> str:
        import sympy
        key = json.dumps(exact_to_json(x), sort_keys=True)
        got = self.cache.get(key)
        if got is None:
            got = sympy.latex(to_sympy(x))
            self.cache[key] = got
        return got

    def matrix(self, rows: list) -> str:
        body = r" \\ ".join(" & ".join(self.value(x) for x in r) for r in rows)
        return r"\begin{pmatrix} " + body + r" \end{pmatrix}"

    def vector(self, v: list) -> str:
        return self.matrix([[x] for x in v])

    def row(self, v: list) -> str:
        return r"\left(" + ", ".join(self.value(x) for x in v) + r"\right)"


# =========================================================================== construction pages
_CANDIDATE_CACHE: dict = {}


def _candidates() -> list:
    """(source, fsa or None, load error, names of the applicable constructions best first) per candidate instance,
    computed once per run."""
    if "list" not in _CANDIDATE_CACHE:
        out = []
        for src in CANDIDATE_INSTANCES:
            try:
                fsa = load_source(src)
            except Exception as exc:  # noqa: BLE001
                out.append((src, None, f"cannot load: {one_line(exc)}", []))
                continue
            try:
                names = [x.name for x in applicable(fsa)]
            except Exception:  # noqa: BLE001  (one construction's applicable() raising: ask each one below)
                names = None
            out.append((src, fsa, "", names))
        _CANDIDATE_CACHE["list"] = out
    return _CANDIDATE_CACHE["list"]


def _pick_instance(c) -> tuple:
    """(source, fsa, tried) for the construction's page, (None, None, tried) if no candidate applies.

    * The construction's own ``example`` source, if it sets one.
    * An "as printed" variant (``variant_of`` set): the first applicable candidate on which it is *not* certified
      (the page then shows the counterexample: the finding), else the rule below.
    * Otherwise the candidate on which the construction ranks best among the applicable ones (so Krohn-Rhodes is
      shown on an automaton with resets, a dihedral construction on S_3 = D_3 rather than on parity); ties go to
      the earlier, smaller candidate."""
    tried = []
    own = getattr(c, "example", None)
    if isinstance(own, str):
        try:
            fsa = load_source(own)
            why = c.reason_not_applicable(fsa)
            if why is None:
                return own, fsa, tried
            tried.append((own, str(why)))
        except Exception as exc:  # noqa: BLE001
            tried.append((own, one_line(exc)))
    ok = []
    for src, fsa, err, names in _candidates():
        if fsa is None:
            tried.append((src, err))
            continue
        try:
            why = c.reason_not_applicable(fsa)
        except Exception as exc:  # noqa: BLE001
            why = f"applicable() raised {one_line(exc)}"
        if why is not None:
            tried.append((src, str(why)))
            continue
        rank = names.index(c.name) if names and c.name in names else len(names or []) + 1
        ok.append((rank, src, fsa))
    if not ok:
        return None, None, tried
    if c.variant_of:
        for _rank, src, fsa in ok[:6]:
            try:
                with time_limit(15):
                    if not certify(c_compile(fsa, c.name), fsa, float_steps=0, max_pairs=50_000).certified:
                        return src, fsa, tried
            except (Exception, StepTimeout):  # noqa: BLE001  (the page itself reports build problems)
                return src, fsa, tried
    best = min(ok, key=lambda t: t[0])
    return best[1], best[2], tried


def _layer_matrices_rst(model, L, li: int, lx: _Latex) -> str:
    out = []
    names = L.symbol_names or [str(j) for j in range(L.n_symbols)]
    if li == 0 and L.n_symbols == len(model.alphabet):
        names = list(model.alphabet) if not L.symbol_names else names
    coords = f" Coordinates: {', '.join(_lit(c) for c in L.coords)}." if L.coords else ""
    out.append(f"Layer {li} ({_lit(L.kind)}{', ' + _lit(L.name) if L.name else ''}): width {L.width}, "
               f"{L.n_symbols} symbol(s).{coords}\n")
    if L.width > MAX_WIDTH_SHOWN:
        out.append(f"The layer is {L.width} wide: its matrices are not rendered here "
                   f"(``lrnnkit compile ... -o model.json`` writes every weight, exact and float).\n")
        return "\n".join(out)
    if L.H0_exact is not None:
        out.append(".. math::\n\n   H_0 = " + lx.row(L.H0_exact) + "^\\top\n")
    shown = list(range(min(L.n_symbols, MAX_SYMBOLS_SHOWN)))
    for j in shown:
        t = L.transitions[j]
        nm = _latex_text(names[j] if j < len(names) else j)
        lines = []
        if t.factors is not None:
            fac = []
            for k, f in enumerate(t.factors):
                if f.beta_exact is not None and f.u_exact is not None:
                    fac.append(f"G_{{{k + 1}}} = G\\!\\left({lx.value(f.beta_exact)},\\ {lx.row(f.u_exact)}\\right)")
                else:
                    fac.append(f"G_{{{k + 1}}} = G\\!\\left({f.beta:.6g},\\ v\\right)")
            if fac:
                lines.append(r" \quad ".join(fac))
            else:
                lines.append(r"\text{no factors: } A = I")
        if t.A_exact is not None:
            lines.append(f"A(\\text{{{nm}}}) = {lx.matrix(t.A_exact)}")
        else:
            lines.append(f"A(\\text{{{nm}}}) = " + r"\begin{pmatrix} " + r" \\ ".join(
                " & ".join(f"{x:.4g}" for x in r) for r in t.A) + r" \end{pmatrix}\ \text{(float64)}")
        if t.B_exact is not None and any(x != 0 for x in t.B_exact):
            lines.append(f"B(\\text{{{nm}}}) = {lx.row(t.B_exact)}^\\top")
        out.append(".. math::\n\n" + "\n".join("   " + ln + (r" \\" if i < len(lines) - 1 else "")
                                                for i, ln in enumerate(lines)) + "\n")
    if L.n_symbols > len(shown):
        out.append(f"(and {L.n_symbols - len(shown)} more symbol(s), not shown)\n")
    return "\n".join(out)


def _trace_word(fsa, length: int = 8) -> list:
    """The worked trace's word: random letters avoiding trap states (an error state), the first of seeds 3, 4, ...
    whose output changes along the word (else seed 3's)."""
    words = [[int(x) for x in random_word(fsa, length, seed)] for seed in range(3, 23)]
    for w in words:
        if len({fsa.outputs[q] for q in fsa.trace(w)}) > 1:
            return w
    return words[0]


def _trace_rst(model, fsa, word: list) -> str:
    amap = {s: i for i, s in enumerate(model.alphabet)}
    mword = [amap[fsa.alphabet[a]] for a in word]
    want = list(fsa.output_trace(word))
    rows = [["input"] + [_lit(fsa.alphabet[a]) for a in word], ["automaton output"] + [_lit(x) for x in want]]
    if model.is_exact:
        got = run_exact(model, mword)
        rows.append(["model output (exact)"] + [_lit(model.output_labels[y]) if y >= 0 else "tie" for y in got])
    res = run_float(model, np.array([mword]), keep_states=True)
    rows.append(["model output (float64)"] + [_lit(x) for x in res.labels()[0]])
    if res.states:
        for li, Hs in enumerate(res.states):
            if Hs.shape[-1] <= 6:
                rows.append([f"layer {li} state"] + [_lit("(" + ", ".join(_num(v) for v in h) + ")")
                                                    for h in Hs[0]])
    header = ["step"] + [str(i + 1) for i in range(len(word))]
    return _list_table(header, rows)


def _num(v: float) -> str:
    """A float state entry for a trace table: 3 significant digits, round-off below 1e-9 shown as 0."""
    return "0" if abs(v) < 1e-9 else f"{v:.3g}"


def _figure_rst(fig, fn: str, rubric: str, alt: str, width: int, img_dir: str, rel_img: str) -> str:
    """Save ``fig`` as ``img_dir/fn``; the RST of a rubric and the image."""
    save_figure(fig, os.path.join(img_dir, fn))
    return f".. rubric:: {rubric}\n\n.. image:: {rel_img}/{fn}\n   :alt: {alt}\n   :width: {width}px\n"


def _construction_page(c, img_dir: str, rel_img: str, lx: _Latex) -> tuple:
    """(rst text, record) for one construction.

    Long: the page is written top to bottom, one section after another in the order the reader meets them, each
    recording its own problems in the same record."""
    rec: dict = {"name": c.name, "paper": c.paper, "statement": c.statement, "status": "ok", "problems": [],
                 "warnings": []}
    head = [f".. _construction-{slug(c.name)}:\n", _title(c.name)]
    head.append(f"**Paper {_escape_plain(c.paper)}, {_escape_plain(c.statement)}.** "
                f"Applies to: {rst_text(c.applies_to)}.\n")
    if c.variant_of:
        head.append(f".. note::\n\n   This is the construction **as printed**; the corrected construction is "
                    f":ref:`construction-{slug(c.variant_of)}`. A failing certificate below is the recorded "
                    f"finding.\n")
    if c.notes:
        head.append(rst_text(c.notes) + "\n")
    doc = (inspect.getdoc(c.build) or "").strip()
    if doc:
        head.append(".. rubric:: From the code\n\n" + _literal_block(doc))
    head.append(".. rubric:: Resources (declared)\n")
    head.append(_list_table(["layers", "width", "GH factors per token", "priority"],
                            [[rst_text(c.layers), rst_text(c.width), rst_text(c.factors_per_token),
                              str(c.priority)]]))
    if c.options:
        head.append(".. rubric:: Options\n")
        head.append(_list_table(["option", "meaning"], [[_lit(k), rst_text(v)] for k, v in c.options.items()]))
    body: list = []
    src, fsa, tried = _pick_instance(c)
    if fsa is None:
        rec["status"] = "no-instance"
        rec["warnings"].append("no candidate instance applies")
        body.append(".. rubric:: Instance\n\nNone of the generator's small automata applies to this construction:\n")
        body.append(_list_table(["tried", "reason"], [[_lit(s), rst_text(w)] for s, w in tried]))
        return "\n".join(head + body), rec
    rec["instance"] = src
    body.append(".. rubric:: A small instance\n")
    body.append(f"Source {_lit(src)}: {fsa.n_states} states, {fsa.n_letters} letters "
                f"({', '.join(_lit(a) for a in fsa.alphabet[:12])}{', ...' if fsa.n_letters > 12 else ''}).\n")
    t0 = time.perf_counter()
    try:
        with time_limit(STEP_TIMEOUT):
            model = c_compile(fsa, c.name)
    except Exception as exc:  # noqa: BLE001
        rec["status"] = "build-failed"
        rec["problems"].append(f"build failed on {src}: {one_line(exc)}")
        body.append(f".. error::\n\n   The construction **failed to build** on {_lit(src)}: {rst_text(one_line(exc))}\n")
        return "\n".join(head + body), rec
    rec["build_seconds"] = round(time.perf_counter() - t0, 3)
    try:
        prof = resource_profile(model)
        body.append(".. rubric:: Matrices (exact)\n")
        body.append("Every GH factor is written :math:`G(\\beta, u) = I - \\beta\\, u u^\\top / (u^\\top u)`; "
                    "a token applies its factors first to last, :math:`A = G_{n_h} \\cdots G_1`.\n")
        for li, L in enumerate(model.layers[:6]):
            body.append(_layer_matrices_rst(model, L, li, lx))
        if len(model.layers) > 6:
            body.append(f"(and {len(model.layers) - 6} more layer(s), not shown)\n")
        body.append(".. rubric:: Resources (measured on this instance)\n")
        body.append(_list_table(["layers", "widths", "kinds", "max GH factors per token",
                                 "eigenvalues in the unit interval / disc"],
                                [[str(prof["layers"]), _lit(prof["widths"]),
                                  _lit([L.kind for L in model.layers]), str(prof["max_factors_per_token"]),
                                  str(prof["eigenvalues_in_unit_interval"])]]))
    except Exception as exc:  # noqa: BLE001
        rec["problems"].append(f"rendering the model failed: {one_line(exc)}")
        rec["status"] = "render-failed"
        body.append(f".. error::\n\n   Rendering the model failed: {rst_text(one_line(exc))}\n")
    try:
        word = _trace_word(fsa)
        body.append(".. rubric:: Worked trace\n")
        body.append(_trace_rst(model, fsa, word))
    except Exception as exc:  # noqa: BLE001
        rec["problems"].append(f"trace failed: {one_line(exc)}")
        rec["status"] = "trace-failed"
        body.append(f".. error::\n\n   The worked trace failed: {rst_text(one_line(exc))}\n")
    body.append(".. rubric:: Certificate\n")
    try:
        with time_limit(STEP_TIMEOUT):
            cert = certify(model, fsa, float_steps=1000, max_pairs=500_000)
        rec["certified"] = cert.certified
        fc = cert.float_check or {}
        rows = [["certified for every length", f"**{cert.certified}**"], ["method", _lit(cert.method)],
                ["reachable (automaton, model) pairs", str(cert.reachable_states)],
                ["transitions checked", str(cert.explored_transitions)], ["reason", rst_text(cert.reason)]]
        if cert.counterexample is not None:
            rows.append(["shortest counterexample", _lit(" ".join(cert.counterexample))])
            rows.append(["expected / got", f"{_lit(cert.expected)} / {_lit(cert.got)}"])
        if fc:
            rows.append(["float64 check", f"{fc.get('words')} random words of {fc.get('steps')} steps: "
                                          f"{fc.get('mismatches')} mismatches"])
        body.append(_list_table(None, rows, [30, 70]))
        if not cert.certified and not c.variant_of:
            if cert.method == "none":
                # a model without exact weights (e.g. a random network with a fitted readout, 004) cannot be
                # certified by design and claims no certificate; the page shows its float64 check
                rec["status"] = "float-only"
                rec["warnings"].append(f"instance {src}: no exact weights, float64 check only: "
                                       f"{fc.get('mismatches')} mismatches in {fc.get('words')} random words of "
                                       f"{fc.get('steps')} steps")
            else:
                rec["status"] = "not-certified"
                rec["problems"].append(f"instance {src} not certified: {cert.reason}")
    except Exception as exc:  # noqa: BLE001
        rec["status"] = "certify-failed"
        rec["problems"].append(f"certification raised: {one_line(exc)}")
        body.append(f".. error::\n\n   Certification raised: {rst_text(one_line(exc))}\n")
    # plots
    try:
        eig = []
        for L in model.layers:
            for t in L.transitions:
                eig.extend([[float(z.real), float(z.imag)] for z in np.linalg.eigvals(t.A)])
        fig = eigenvalue_figure([(f"{c.name} on {src}", eig, rec.get("certified", False) or bool(c.variant_of))],
                                None)
        body.append(_figure_rst(fig, f"{slug(c.name)}-eigenvalues.png", "Eigenvalues of the letter matrices",
                                f"eigenvalues of the letter matrices of {c.name}", 300, img_dir, rel_img))
    except Exception as exc:  # noqa: BLE001
        rec["warnings"].append(f"eigenvalue plot failed: {one_line(exc)}")
    if len(model.layers) > 1:
        try:
            fig = wiring_figure(model, f"{c.name} on {src}: layers and what each reads (dashed: previous step)")
            body.append(_figure_rst(fig, f"{slug(c.name)}-wiring.png", "Wiring",
                                    f"the layers of {c.name} and what each reads", 480, img_dir, rel_img))
        except Exception as exc:  # noqa: BLE001
            rec["warnings"].append(f"wiring plot failed: {one_line(exc)}")
    body.append(".. rubric:: Precision collapse\n")
    body.append(_collapse_section(model, c, img_dir, rel_img, rec))
    return "\n".join(head + body), rec


COLLAPSE_FORMATS = ("fp32", "bf16", "fp16", "fp8-e4m3-ieee")


def _collapse_section(model, c, img_dir: str, rel_img: str, rec: dict) -> str:
    rows, pts = [], []
    for fmt in COLLAPSE_FORMATS:
        try:
            with time_limit(20):
                r = precision_collapse(model, format=fmt, steps=2000)
            r = r.to_json() if hasattr(r, "to_json") else r
            step = r.get("first_wrong_step") if isinstance(r, dict) else r
            rows.append([_lit(fmt), "none within 2000 steps" if step is None else str(step)])
            pts.append((fmt, step))
        except Exception as exc:  # noqa: BLE001
            rows.append([_lit(fmt), rst_text(one_line(exc))])
    out = _list_table(["format", "first wrong step"], rows)
    if pts:
        try:
            fig = figure(4.5, 2.6)
            ax = fig.add_subplot(1, 1, 1)
            xs = [p[0] for p in pts]
            ys = [p[1] if p[1] is not None else 2000 for p in pts]
            bars = ax.bar(xs, ys, color=["#c62828" if p[1] is not None else "#2e7d32" for p in pts])
            for b, p in zip(bars, pts):
                if p[1] is None:
                    b.set_hatch("//")
            ax.set_yscale("log")
            ax.set_ylabel("first wrong step")
            ax.set_title(f"{c.name}: green = correct for all 2000 steps", fontsize=9)
            fig.tight_layout()
            name = f"{slug(c.name)}-collapse.png"
            save_figure(fig, os.path.join(img_dir, name))
            out += f"\n.. image:: {rel_img}/{name}\n   :alt: precision collapse of {c.name}\n   :width: 420px\n"
        except Exception as exc:  # noqa: BLE001
            rec["warnings"].append(f"collapse plot failed: {one_line(exc)}")
    return out


def _constructions(out: str, lx: _Latex, progress: bool) -> list:
    cdir = os.path.join(out, "constructions")
    img = os.path.join(cdir, "_images")
    os.makedirs(img, exist_ok=True)
    recs = []
    pages = []
    try:
        cat = catalogue()
    except Exception as exc:  # noqa: BLE001
        cat = []
        recs.append({"name": "<catalogue>", "status": "catalogue-failed", "problems": [one_line(exc)],
                     "warnings": []})
    for c in cat:
        t = time.perf_counter()
        if progress:
            print(f"[docgen] construction {c.name} ...", file=sys.stderr, flush=True)
        try:
            text, rec = _construction_page(c, img, "_images", lx)
        except Exception as exc:  # noqa: BLE001
            rec = {"name": c.name, "paper": c.paper, "statement": c.statement, "status": "page-failed",
                   "problems": [f"page generation raised {one_line(exc)}"], "warnings": []}
            text = _title(c.name) + f"\n.. error::\n\n   Generating this page failed: {rst_text(one_line(exc))}\n"
        rec["seconds"] = round(time.perf_counter() - t, 2)
        recs.append(rec)
        page = slug(c.name)
        pages.append((page, c, rec))
        _write(os.path.join(cdir, page + ".rst"), text)
    idx = [_title("Constructions"),
           "Every construction in :func:`lrnnkit.constructions.catalogue`, each page generated from the code that "
           "builds it (``lrnnkit docs``): its statement and paper reference, a small instance with "
           "its matrices in exact form, a worked trace, its resources, its certificate and its precision "
           "behaviour. :func:`lrnnkit.compile` picks the applicable construction of highest priority.\n"]
    if pages:
        rows = [[f":ref:`{_escape_plain(c.name)} <construction-{p}>`", _escape_plain(c.paper),
                 _escape_plain(c.statement), rst_text(c.applies_to), rst_text(c.layers), rst_text(c.width),
                 rst_text(c.factors_per_token), _lit(r.get("instance", "-")),
                 "no exact weights (float64 check only)" if r["status"] == "float-only" else
                 {True: "certified", False: "**not certified**"}.get(r.get("certified"), _escape_plain(r["status"]))]
                for p, c, r in pages]
        idx.append(_list_table(["construction", "paper", "statement", "applies to", "layers", "width",
                                "GH factors / token", "instance", "certificate"], rows))
    else:
        idx.append("No construction is registered in this build.\n")
    idx.append(".. toctree::\n   :maxdepth: 1\n   :hidden:\n\n" + "\n".join(f"   {p}" for p, _c, _r in pages) + "\n")
    _write(os.path.join(cdir, "index.rst"), "\n".join(idx))
    return recs


def _failed_page(rec: dict, lines: list, path: str, problem: str, shown: str) -> dict:
    """A page whose source could not be loaded: the record says failed, the page says why (an error box)."""
    rec["status"] = "failed"
    rec["problems"].append(problem)
    lines.append(f".. error::\n\n   {rst_text(shown)}\n")
    _write(path, "\n".join(lines))
    return rec


# =========================================================================== theorem registry page
def _theorems(out: str) -> dict:
    rec: dict = {"status": "ok", "problems": []}
    lines = [".. _theorem-registry:\n", _title("Theorem registry"),
             "Every formal statement of the five papers is an executable check with a recorded verdict "
             "(:mod:`lrnnkit.theorems`): ``holds`` (the check searched for counterexamples and found none), "
             "``falsified`` (a minimal counterexample to the statement as printed), ``holds-as-corrected`` "
             "(falsified as printed; the corrected statement passes the same check), ``holds-with-wording-slip`` "
             "(the literal words are false only through an evident slip; the intended statement holds) or "
             "``open``. The test suite re-derives every verdict; ``lrnnkit theorems --check ID`` re-runs one. The "
             "verdicts below are the recorded ones; the tally counts the papers' statements only, lrnnkit's own "
             "claims (ids ``lrnnkit:...``) are listed last, apart. How a verdict is picked (one label per kind of "
             "flaw) and how to run a check's perturbation: :doc:`../registry`.\n"]
    try:
        sts = all_statements()
    except Exception as exc:  # noqa: BLE001
        return _failed_page(rec, lines, os.path.join(out, "theorems.rst"), f"all_statements() raised {one_line(exc)}",
                            f"Loading the registry failed: {one_line(exc)}")
    rec["count"] = len(sts)
    counts: dict = {}
    for s in sts:
        if s.paper != OWN:
            counts[s.verdict] = counts.get(s.verdict, 0) + 1
    rec["verdicts"] = counts
    if not sts:
        lines.append("No statement is registered in this build.\n")
    else:
        lines.append(_list_table(["verdict", "statements"], [[_lit(v), str(n)] for v, n in sorted(counts.items())]))
        rows = [[f":ref:`{_escape_plain(s.id)} <stmt-{slug(s.id)}>`", _escape_plain(s.kind),
                 f"**{_escape_plain(s.verdict)}**", rst_text(_short(s.evidence, 300))] for s in sts]
        lines.append(_list_table(["id", "kind", "verdict", "evidence"], rows, [14, 10, 12, 64]))
        paper = None
        for s in sts:
            if s.paper != paper:
                paper = s.paper
                lines.append(_title("lrnnkit's own claims" if paper == OWN else f"Paper {paper}", "-"))
            lines.append(f".. _stmt-{slug(s.id)}:\n")
            lines.append(_title(f"{s.id} ({s.kind}): {s.verdict}", "~"))
            fields = [("Statement (as printed)", s.statement), ("Hypotheses", s.hypotheses),
                      ("Conclusion", s.conclusion), ("Evidence", s.evidence)]
            if s.counterexample is not None:
                fields.append(("Counterexample", None))
            if s.corrected:
                fields.append(("Corrected statement", s.corrected))
            if s.notes:
                fields.append(("Notes", s.notes))
            for k, v in fields:
                if k == "Counterexample":
                    lines.append(f"**{k}:**\n\n" + _literal_block(_json_short(s.counterexample)))
                elif v:
                    lines.append(f"**{k}:** {rst_text(v)}\n")
            lines.append(f"Reproduce: ``lrnnkit theorems --check {s.id}``\n")
    _write(os.path.join(out, "theorems.rst"), "\n".join(lines))
    return rec


def _short(s: Any, n: int) -> str:
    s = " ".join(str(s or "").split())
    return s if len(s) <= n else s[: n - 3] + "..."


def _json_short(x: Any) -> str:
    try:
        s = json.dumps(x, indent=1, default=str)
    except (TypeError, ValueError):
        s = str(x)
    return s if len(s) < 4000 else s[:4000] + "\n..."


# =========================================================================== CLI reference
def _cli(out: str, cli_help) -> dict:
    """The command-line reference page: every verb's ``--help`` text as argparse prints it, from ``cli_help()``
    (``[(title, depth, text)]``, :func:`lrnnkit.cli.docs.help_pages`: the command line sits above this package and
    hands its help in). Kept rather than sphinx-argparse: the page then reads exactly what ``lrnnkit VERB --help``
    prints (the tests compare help texts, not a second rendering), and the docs need no further extension."""
    rec: dict = {"status": "ok", "problems": []}
    lines = [_title("Command line"),
             "Generated from the argparse parser of :mod:`lrnnkit.cli` (``build_parser()``). Exit statuses: 0 "
             "success, 1 a negative answer, 2 bad input (one line on stderr; ``--debug`` shows the traceback), 3 an "
             "internal error (:doc:`../cli`); files are written atomically.\n"]
    try:
        if cli_help is None:
            raise InputError("no command-line help was handed in (lrnnkit docs passes it)")
        pages = cli_help()
    except Exception as exc:  # noqa: BLE001
        return _failed_page(rec, lines, os.path.join(out, "cli.rst"), f"build_parser() failed: {one_line(exc)}",
                            f"The parser could not be built: {one_line(exc)}")
    for title, depth, text in pages:
        if depth >= 0:
            lines.append(_title(title, "-" if depth == 0 else "~"))
        lines.append(_literal_block(text))
    _write(os.path.join(out, "cli.rst"), "\n".join(lines))
    return rec


# =========================================================================== API reference
def public_modules() -> list:
    """Every importable public module of lrnnkit (no path component starting with ``_``), sorted."""
    names = ["lrnnkit"]
    for m in pkgutil.walk_packages(_PACKAGE_PATH, "lrnnkit.", onerror=lambda n: None):
        if any(part.startswith("_") for part in m.name.split(".")):
            continue
        names.append(m.name)
    return sorted(set(names))


def _api(out: str) -> dict:
    rec: dict = {"status": "ok", "problems": [], "modules": []}
    os.environ.setdefault("TRITON_INTERPRET", "1")
    lines = [_title("API reference"),
             "Every public module of the package, from its docstrings. The small public API is re-exported by the "
             "top-level package: ``from lrnnkit import load_source, compile, certify, run_float``.\n"]
    ok = []
    for name in public_modules():
        try:
            importlib.import_module(name)
            ok.append(name)
        except Exception as exc:  # noqa: BLE001
            rec["status"] = "failed"
            rec["problems"].append(f"module {name} failed to import: {one_line(exc)}")
    if rec["problems"]:
        lines.append(".. error::\n\n   Modules that failed to import (not documented):\n\n"
                     + "\n".join(f"   * {rst_text(p)}" for p in rec["problems"]) + "\n")
    groups: dict = {}
    for name in ok:
        parts = name.split(".")
        groups.setdefault(".".join(parts[:2]), []).append(name)
    for g in sorted(groups):
        lines.append(_title(_escape_plain(g), "-"))
        for name in groups[g]:
            if name != g:
                lines.append(_title(_escape_plain(name), "~"))
            lines.append(f".. automodule:: {name}\n")
    rec["modules"] = ok
    _write(os.path.join(out, "api.rst"), "\n".join(lines))
    return rec


# =========================================================================== Sphinx hook: docstrings that are not RST
_REPORTED: list = []


def _rst_problems(text: str, env) -> list:
    """Messages (level >= WARNING) docutils gives for ``text`` parsed as the body of a directive (where section
    titles are not allowed, as in an autodoc entry)."""
    from docutils import nodes
    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser
    from docutils.utils import new_document
    settings = get_default_settings(Parser)
    settings.report_level = 2
    settings.halt_level = 5
    settings.warning_stream = io.StringIO()
    settings.env = env
    doc = new_document("<docstring>", settings)
    body = ".. container::\n\n" + "\n".join("   " + ln if ln.strip() else "" for ln in text.splitlines()) + "\n"
    try:
        Parser().parse(body, doc)
    except Exception as exc:  # noqa: BLE001  (a role that needs more context than we give it: treat as a problem)
        return [one_line(exc)]
    probs = [n.astext()[:MESSAGE_CHARS] for n in doc.findall(nodes.system_message) if n["level"] >= 2]
    # references are resolved by later transforms: in a docstring a substitution (``|Q|``), a named hyperlink
    # (``a_``), a footnote (``[1]_``) or a citation (``[CIT]_``) reference has no target
    probs += [f"undefined substitution |{n.astext()}|" for n in doc.findall(nodes.substitution_reference)]
    probs += [f"reference {n.astext()!r} without a target"
              for cls in (nodes.reference, nodes.footnote_reference, nodes.citation_reference)
              for n in doc.findall(cls) if n.get("refname")]
    return probs


_REGISTERING = re.compile(r"^(\s*)\.\. (?:py:)?(?:method|attribute|function|class|data|exception|property)::.*$",
                          re.M)


def _napoleon(app, what, name, obj, text: str) -> str:
    """The docstring as napoleon will turn it into RST (NumPy then Google sections), for checking only."""
    if "sphinx.ext.napoleon" not in app.extensions:
        return text
    from sphinx.ext.napoleon.docstring import GoogleDocstring, NumpyDocstring
    cfg = app.config
    out = text
    if cfg.napoleon_numpy_docstring:
        out = str(NumpyDocstring(out, cfg, app, what, name, obj))
    if cfg.napoleon_google_docstring:
        out = str(GoogleDocstring(out, cfg, app, what, name, obj))
    # object directives napoleon may emit would register objects in the environment: check their bodies only
    return _REGISTERING.sub(r"\1.. container::", out)


def _process_docstring(app, what, name, obj, options, lines):
    """Check the docstring as napoleon will turn it into RST and report every problem as a Sphinx warning naming
    the object (``make docs`` runs Sphinx with ``-W``: a docstring that is not valid RST fails the build)."""
    if not lines:
        return
    text = "\n".join(lines)
    try:
        checked = _napoleon(app, what, name, obj, text)
    except Exception:  # noqa: BLE001  (napoleon itself will report what it cannot parse)
        checked = text
    probs = _rst_problems(checked, app.env)
    if probs:
        from sphinx.util import logging as slog
        _REPORTED.append((name, probs[0]))
        slog.getLogger("lrnnkit.showcase.docgen").warning(
            f"docstring of {name} is not valid RST: {probs[0]} (write |x| as ``|x|`` or :math:`|x|`)",
            type="lrnnkit", subtype="docstring")


def _skip_foreign(app, what, name, obj, skip, options):
    """Members the standard library defined (``contextmanager`` imported from contextlib, ...) are not lrnnkit's
    API: skipped, so their docstrings are neither shown nor checked."""
    mod = getattr(obj, "__module__", None)
    if what == "module" and callable(obj) and isinstance(mod, str) and mod.split(".")[0] in sys.stdlib_module_names:
        return True
    return None


def setup_sphinx(app) -> None:
    """Register the docstring check (before napoleon, priority 100; :func:`_process_docstring`) and the skip of
    members defined outside lrnnkit."""
    app.connect("autodoc-process-docstring", _process_docstring, priority=100)
    app.connect("autodoc-skip-member", _skip_foreign)


# =========================================================================== driver
def _write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    atomic_write_text(path, text if text.endswith("\n") else text + "\n")


def _prepare(out: str) -> None:
    """Empty ``out`` when it is ours (marker file present) or does not exist; refuse a foreign non-empty folder."""
    if os.path.isdir(out) and os.listdir(out):
        if not os.path.exists(os.path.join(out, MARKER)):
            raise InputError(f"refusing to overwrite {out!r}: not empty and not made by lrnnkit.showcase.docgen")
        shutil.rmtree(out)
    os.makedirs(out, exist_ok=True)
    _write(os.path.join(out, MARKER), "generated by lrnnkit docs; safe to delete\n")


def generate(out_dir, progress: bool = False, cli_help=None) -> dict:
    """Write every generated page into ``out_dir``; returns the record also written to ``docgen.json``
    (``ok`` is False when an error in the sense of the module docstring occurred). ``cli_help``: the callable that
    gives the command-line reference (:func:`lrnnkit.cli.docs.help_pages`)."""
    out = os.fspath(out_dir)
    _prepare(out)
    os.environ.setdefault("TRITON_INTERPRET", "1")
    t = time.perf_counter()
    lx = _Latex()
    _CANDIDATE_CACHE.clear()      # constructions may have been registered since the last run
    recs = _constructions(out, lx, progress)
    th = _theorems(out)
    cli = _cli(out, cli_help)
    api = _api(out)
    errors = [f"{r['name']}: {p}" for r in recs for p in r.get("problems", [])]
    errors += [f"theorems: {p}" for p in th["problems"]] + [f"cli: {p}" for p in cli["problems"]]
    errors += [f"api: {p}" for p in api["problems"]]
    warnings = [f"{r['name']}: {w}" for r in recs for w in r.get("warnings", [])]
    result = {"ok": not errors, "errors": errors, "warnings": warnings, "constructions": recs, "theorems": th,
              "cli": cli, "api": {k: v for k, v in api.items()}, "seconds": round(time.perf_counter() - t, 2)}
    _write(os.path.join(out, "docgen.json"), json.dumps(result, indent=1, default=str))
    return result


def ensure_generated(out_dir, cli_help=None) -> None:
    """Used by docs/conf.py: generate the pages if they are missing (a plain ``sphinx-build`` without
    ``make docs``)."""
    out = os.fspath(out_dir)
    if not os.path.exists(os.path.join(out, "constructions", "index.rst")):
        generate(out, cli_help=cli_help)
