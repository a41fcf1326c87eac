"""The demo's HTML report and its plots.

``write_report(path, summary)`` renders the summary that :func:`lrnnkit.showcase.demo.run_demo` writes to
``summary.json`` as one self-contained HTML page (inline CSS, no scripts, no network; images are PNG files
beside it, referenced by relative path). ``make_plots(out_dir, automata, precision)`` draws those PNGs with matplotlib's object API (a
:class:`matplotlib.figure.Figure` on an Agg canvas, so no global pyplot state and no display are needed).

Plots:

* ``eigenvalues.png``: the eigenvalues of every letter matrix of every compiled model in the complex plane, with
  the unit circle. Products of GH factors with beta in [0, 2] are orthogonal-times-contractions whose eigenvalues
  lie in the closed unit disc (000, Proposition 1); the group constructions put them on the circle, at roots of
  unity (000, Theorem 3).
* ``certification.png``: reachable (automaton state, model state) pairs the exact search explored per automaton.
* ``collapse.png``: the first wrong step of exact constructions in low-precision formats (lrnnkit.precision).
"""
from __future__ import annotations

import html
import math
import os

import numpy as np

from ..fileio import save_figure
from ..fileio import atomic_write_text

__all__ = ["make_plots", "write_report", "eigenvalue_figure"]

_OK = "#2e7d32"
_BAD = "#c62828"


def figure(w: float, h: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=(w, h), dpi=110)
    FigureCanvasAgg(fig)
    return fig


def eigenvalue_figure(panels: list, suptitle: str | None = "Eigenvalues of the letter matrices (unit circle in grey)"):
    """``panels``: list of (title, [[re, im], ...], ok). One unit-disc panel per model."""
    n = max(1, len(panels))
    cols = min(5, n)
    rows = math.ceil(n / cols)
    fig = figure(2.3 * cols, 2.5 * rows)
    t = np.linspace(0, 2 * np.pi, 400)
    for i, (title, eig, ok) in enumerate(panels):
        ax = fig.add_subplot(rows, cols, i + 1)
        ax.plot(np.cos(t), np.sin(t), color="#9e9e9e", lw=0.8)
        ax.axhline(0, color="#e0e0e0", lw=0.5)
        ax.axvline(0, color="#e0e0e0", lw=0.5)
        if eig:
            # many letters share eigenvalues (roots of unity): plot each distinct value once, sized by multiplicity
            z = np.round(np.asarray(eig, dtype=float), 6) + 0.0
            pts, counts = np.unique(z, axis=0, return_counts=True)
            ax.scatter(pts[:, 0], pts[:, 1], s=18 + 14 * np.log2(counts), color=_OK if ok else _BAD, alpha=0.75,
                       edgecolors="white", linewidths=0.4, zorder=3)
        ax.set_xlim(-1.25, 1.25)
        ax.set_ylim(-1.25, 1.25)
        ax.set_aspect("equal")
        ax.set_xticks([-1, 0, 1])
        ax.set_yticks([-1, 0, 1])
        ax.tick_params(labelsize=7)
        ax.set_title(title, fontsize=9)
    if suptitle:
        fig.suptitle(suptitle, fontsize=10)
    fig.tight_layout()
    return fig


def make_plots(out_dir: str, automata: dict, precision: dict) -> list:
    """Draw the report's plots into ``out_dir``; returns the file names written."""
    written = []
    panels = [(k, e.get("eigenvalues") or [], e.get("status") == "ok") for k, e in automata.items()
              if e.get("eigenvalues")]
    if panels:
        fig = eigenvalue_figure(panels)
        save_figure(fig, os.path.join(out_dir, "eigenvalues.png"))
        written.append("eigenvalues.png")

    rows = [(k, e) for k, e in automata.items() if e.get("reachable_states")]
    if rows:
        fig = figure(7, 0.45 * len(rows) + 1.2)
        ax = fig.add_subplot(1, 1, 1)
        names = [k for k, _ in rows]
        vals = [e["reachable_states"] for _, e in rows]
        colors = [_OK if e.get("certified") else _BAD for _, e in rows]
        ax.barh(names, vals, color=colors)
        ax.set_xscale("log")
        ax.invert_yaxis()
        for y, (_k, e) in enumerate(rows):
            lab = f"{e.get('construction', '?')}, {e.get('layers', '?')} layer(s), widths {e.get('widths', '?')}"
            ax.text(e["reachable_states"] * 1.08, y, lab, va="center", fontsize=7)
        ax.set_xlabel("reachable (automaton state, model state) pairs, exact search (log scale)")
        ax.set_title("Certified for every input length (green) or not (red)", fontsize=10)
        ax.set_xlim(1, max(vals) * 60)
        fig.tight_layout()
        save_figure(fig, os.path.join(out_dir, "certification.png"))
        written.append("certification.png")

    coll = [r for r in (precision or {}).get("collapse", []) if "error" not in r]
    if coll:
        models = list(dict.fromkeys(r["model"] for r in coll))
        fmts = list(dict.fromkeys(r["format"] for r in coll))
        # "none seen" bars are drawn (hatched) up to the run length: the model was right for the whole run
        horizon = max([r.get("steps") or 0 for r in coll]
                      + [r["first_wrong_step"] for r in coll if isinstance(r["first_wrong_step"], (int, float))]
                      + [1])
        fig = figure(max(7.0, 0.75 * len(models) + 1.5), 3.6)
        ax = fig.add_subplot(1, 1, 1)
        w = 0.8 / max(1, len(fmts))
        for j, f in enumerate(fmts):
            xs, ys, hatch = [], [], []
            for i, m in enumerate(models):
                r = next((r for r in coll if r["model"] == m and r["format"] == f), None)
                if r is None:
                    continue
                v = r["first_wrong_step"]
                xs.append(i + j * w)
                ys.append(v if isinstance(v, (int, float)) else horizon)
                hatch.append(not isinstance(v, (int, float)))
            bars = ax.bar(xs, ys, width=w, label=f)
            for b, h in zip(bars, hatch):
                if h:
                    b.set_hatch("//")
        ax.set_xticks([i + 0.4 - w / 2 for i in range(len(models))])
        ax.set_xticklabels(models, rotation=30, ha="right", fontsize=8)
        ax.set_yscale("log")
        ax.set_ylabel("first wrong step\n(hatched: right for all steps)", fontsize=8)
        ax.legend(fontsize=7)
        ax.set_title("Precision collapse of exact constructions", fontsize=10)
        fig.tight_layout()
        save_figure(fig, os.path.join(out_dir, "collapse.png"))
        written.append("collapse.png")
    return written


# --------------------------------------------------------------------------- HTML
_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;
color:#212121;line-height:1.45}
h1{font-size:1.6em;margin-bottom:.2em} h2{font-size:1.25em;margin-top:1.8em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em;display:block;overflow-x:auto;max-width:100%} th,td{border:1px solid #ddd;padding:.25em .55em;
text-align:left;vertical-align:top} th{background:#f5f5f5}
.ok{color:#2e7d32;font-weight:600} .failed{color:#c62828;font-weight:600} .skipped{color:#757575}
code{background:#f5f5f5;padding:0 .2em} img{max-width:100%;border:1px solid #eee;margin:.5em 0}
.small{font-size:.85em;color:#555}
table.pivot td{white-space:nowrap;text-align:right} table.pivot td:first-child{text-align:left;white-space:normal}
.num{border-bottom:1px dotted #999;cursor:help} details{margin:.4em 0} summary{cursor:pointer;color:#1565c0}
"""


def _e(x) -> str:
    return html.escape("" if x is None else str(x))


def _short(x, n: int) -> str:
    """``x`` as text, cut to ``n`` characters (the full text stays in summary.json)."""
    t = "" if x is None else str(x)
    return t if len(t) <= n else t[:n - 3] + "..."


def _status(s: str) -> str:
    return f'<span class="{_e(s)}">{_e(s)}</span>'


def _table(head: list, rows: list, cls: str = "") -> str:
    h = "".join(f"<th>{_e(c)}</th>" for c in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    attr = f' class="{cls}"' if cls else ""
    return f"<table{attr}><thead><tr>{h}</tr></thead><tbody>{body}</tbody></table>"


def write_report(path: str, summary: dict) -> None:
    """Write the HTML report of a demo summary (atomically: temporary file, then rename)."""
    S = summary
    parts = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>lrnnkit demo report</title>"
             f"<style>{_CSS}</style></head><body>"]
    parts.append("<h1>lrnnkit demo report</h1>")
    parts.append(f"<p>Overall: {_status(S.get('status', '?'))} &mdash; {len(S.get('steps', []))} steps in "
                 f"{_e(S.get('elapsed_s'))} s, started {_e(S.get('started'))} (lrnnkit {_e(S.get('lrnnkit_version'))},"
                 f" Python {_e(S.get('machine', {}).get('python'))}, {_e(S.get('machine', {}).get('cpus'))} CPUs)."
                 "</p>")
    if S.get("core_failures"):
        parts.append("<p class=\"failed\">Core steps that failed: " + _e(", ".join(S["core_failures"])) + "</p>")

    # automata
    parts.append("<h2>Compiled and certified automata</h2>")
    parts.append("<p class=\"small\">Certified = correct on inputs of every length: an exact breadth-first search "
                 "over reachable (automaton state, model state) pairs closed with every output matching. The float64 "
                 "check runs long random words as an independent second check.</p>")
    rows = []
    for k, e in S.get("automata", {}).items():
        fc = e.get("float_check") or {}
        fcs = (f"{fc.get('mismatches')} / {fc.get('words', 0) * fc.get('steps', 0)}" if fc else "")
        verdict = (('<span class="ok">certified</span>' if e.get("certified")
                    else '<span class="failed">not certified</span>')
                   + (f"<br><span class=\"small\">{_e(e.get('reason'))}</span>" if e.get("reason") else ""))
        rows.append([_e(k), verdict, _e(_short(e.get("automaton"), 40)), _e(e.get("states")), _e(e.get("letters")),
                     _e(e.get("construction")), _e(f"{e.get('paper', '')} {e.get('statement', '')}".strip()),
                     _e(e.get("layers")), _e(_short(e.get("widths"), 24)), _e(e.get("max_factors_per_token")),
                     _e(e.get("reachable_states")), _e(fcs)])
    parts.append(_table(["case", "verdict", "automaton", "states", "letters", "construction", "paper / statement",
                         "layers", "widths", "GH factors / token", "reachable pairs", "float64 mismatches"], rows))
    for img, cap in (("certification.png", "Size of the exact certification search"),
                     ("eigenvalues.png", "Eigenvalues of every letter matrix")):
        if img in S.get("plots", []):
            parts.append(f"<figure><img src=\"{img}\" alt=\"{_e(cap)}\"><figcaption class=\"small\">{_e(cap)}"
                         "</figcaption></figure>")

    # traces
    parts.append("<h2>Worked traces (float64 executor)</h2>")
    for k, e in S.get("automata", {}).items():
        tr = e.get("trace")
        if not tr:
            continue
        head = ["step"] + [str(i + 1) for i in range(len(tr["word"]))]
        rows = [["input"] + [f"<code>{_e(x)}</code>" for x in tr["word"]],
                ["automaton"] + [_e(x) for x in tr["automaton"]],
                ["model"] + [_e(x) if x == y else f"<span class=\"failed\">{_e(x)}</span>"
                             for x, y in zip(tr["model"], tr["automaton"])]]
        parts.append(f"<h3>{_e(e.get('title', k))}</h3>" + _table(head, rows))

    # precision
    prec = S.get("precision") or {}
    parts.append("<h2>Finite precision</h2>")
    if prec.get("impossibility") is not None:
        parts.append("<h3>Impossibility in finite precision (000, Theorems 1-2)</h3>")
        parts.append(_result_html(prec["impossibility"]))
        for img in prec.get("impossibility_plots") or []:
            parts.append(f"<figure><img src=\"{_e(img)}\" alt=\"{_e(img)}\"></figure>")
    if prec.get("collapse"):
        rows = [[_e(r.get("model")), _e(r.get("format")),
                 _e(r["error"] if "error" in r else (r.get("first_wrong_step") if r.get("first_wrong_step")
                                                     is not None else f"none within {r.get('steps', '?')} steps"))]
                for r in prec["collapse"]]
        parts.append("<h3>Collapse of exact constructions</h3>"
                     + _table(["model", "format", "first wrong step"], rows))
    if "collapse.png" in S.get("plots", []):
        parts.append("<figure><img src=\"collapse.png\" alt=\"precision collapse\"></figure>")
    if not prec:
        parts.append("<p class=\"skipped\">not run</p>")

    # kernels
    ker = S.get("kernels") or {}
    parts.append("<h2>GPU layers (Triton)</h2>")
    if ker:
        mode = ker.get("mode") or ("compiled" if ker.get("device") == "gpu" else "interpreted")
        how = ("compiled Triton kernels on the GPU" if mode == "compiled" else
               "interpreted Triton kernels (TRITON_INTERPRET=1: the Triton interpreter on the CPU, numpy speed; "
               "timings say nothing about GPU speed)")
        parts.append(f"<p class=\"kernel-mode\">Ran: <b>{_e(how)}</b>; backend <code>{_e(ker.get('backend'))}</code> "
                     f"on {_e(ker.get('device'))} ({_e(ker.get('device_name'))})</p>")
        rows = [[_e(k), _e(r.get("batch")), _e(r.get("length")), _e(r.get("seconds")),
                 _status("ok" if r.get("agree_with_float64") else "failed")]
                for k, r in (ker.get("models") or {}).items()]
        if rows:
            parts.append(_table(["model", "batch", "length", "seconds", "agrees with float64"], rows))
    else:
        parts.append("<p class=\"skipped\">not run</p>")

    # steps
    parts.append("<h2>All steps</h2>")
    rows = [[_e(s["name"]), "core" if s.get("core") else "", _status(s["status"]), _e(s.get("seconds")),
             _e(s.get("reason"))] for s in S.get("steps", [])]
    parts.append(_table(["step", "", "status", "seconds", "reason"], rows))
    parts.append("<p class=\"small\">Machine-readable: <a href=\"summary.json\">summary.json</a>.</p>")
    parts.append("</body></html>\n")
    atomic_write_text(path, "".join(parts))


_MAX_ROWS = 24
_ROW_KEYS = ("model", "m", "form")        # what names a row of a demo table (the columns of a pivot are formats)


def _num(v) -> str:
    """An integer as text: exact up to 7 digits; longer ones (a float format's largest value, 39 digits) rounded to
    3 significant digits, the exact value in the tooltip."""
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 10 ** 7:
        return f'<span class="num" title="{v}">{v:.3g}</span>'
    return _e(v)


def _cell(v) -> str:
    if isinstance(v, dict):
        if set(v) == {"pre_period", "period"}:
            return "none" if v["period"] is None else f"{_num(v['pre_period'])}+{_num(v['period'])}"
        return ", ".join(f"{k}={_cell(x)}" for k, x in v.items())
    if isinstance(v, list):
        return "[" + ", ".join(_cell(x) for x in v) + "]"
    return "&ndash;" if v is None else _num(v)


def _headline(r: dict) -> str:
    """The one number of a demo row a reader looks for: the first wrong step ("never": exact for all lengths,
    "none": no wrong step within the steps run), or the matvec run's pre-period + period."""
    if "first_wrong_step" in r:
        v = r["first_wrong_step"]
        if v is not None:
            return _num(v)
        return "never" if r.get("exact_for_all_lengths") else "none"
    if isinstance(r.get("matvec"), dict):
        return _cell(r["matvec"])
    return ""


def _pivot(rows: list) -> str | None:
    """Rows named by model (or m / form) against formats, one headline per cell (policy matvec where the rows have
    several), every field of the row in the cell's tooltip; None when the rows have no such shape."""
    keys = [k for k in _ROW_KEYS if any(k in r for r in rows)]
    if not keys or not all("format" in r for r in rows):
        return None
    if any("policy" in r for r in rows):
        rows = [r for r in rows if r.get("policy", "matvec") == "matvec"]
    labels, fmts, cells = [], [], {}
    for r in rows:
        lab = " ".join(str(r.get(k)) for k in keys if k in r)
        if lab not in labels:
            labels.append(lab)
        if r["format"] not in fmts:
            fmts.append(r["format"])
        tip = "; ".join(f"{k}={v}" for k, v in r.items())
        cells[(lab, r["format"])] = f'<span title="{_e(tip)}">{_headline(r)}</span>'
    body = [[_e(lab)] + [cells.get((lab, f), "") for f in fmts] for lab in labels]
    return _table([" / ".join(keys)] + fmts, body, cls="pivot")


def _result_html(res) -> str:
    """A readable rendering of a demo result: per section its statement, verdict and reading, then each list of
    rows as a pivot (model x format, one number per cell, everything in the cell's tooltip) with the full rows in
    a collapsed <details> (long numbers rounded, exact in the tooltip); the whole JSON in a last <details>."""
    out = []
    sections = res.items() if isinstance(res, dict) else [("result", res)]
    for key, sec in sections:
        if not isinstance(sec, dict):
            continue
        out.append(f"<h4>{_e(str(key).replace('_', ' ').replace('theorem', 'Theorem '))}</h4>")
        if "verdict" in sec:
            v = str(sec["verdict"])
            cls = "ok" if v in ("holds", "true", "True") else "failed" if v in ("fails", "false", "False") else ""
            out.append(f'<p><b>verdict:</b> <span class="{cls}">{_e(v)}</span></p>')
        for k in ("statement", "input"):
            if k in sec:
                out.append(f"<p><b>{_e(k)}:</b> {_e(sec[k])}</p>")
        if "reading" in sec:
            out.append(f"<p class=\"small\">{_e(sec['reading'])}</p>")
        for k, v in sec.items():
            if isinstance(v, list) and v and all(isinstance(r, dict) for r in v):
                cols = list(dict.fromkeys(c for r in v for c in r))
                piv = _pivot(v)
                if piv:
                    what = ("first wrong step per format (never = exact for all lengths; none = no wrong step "
                            "within the steps run" if any("first_wrong_step" in r for r in v) else
                            "pre-period + period of the state under matvec rounding, per format (none = no period "
                            "within the cap")
                    out.append(f"<p class=\"small\">{_e(k)}: {what}; hover a cell for every field)</p>" + piv)
                rows = [[_cell(r.get(c)) for c in cols] for r in v]
                out.append(f"<details><summary>{_e(k)}: all {len(v)} rows</summary>{_table(cols, rows)}</details>")
    out.append(f"<details><summary>full result (JSON)</summary><pre>{_e(_pretty(res))}</pre></details>")
    return "".join(out)


def _pretty(x) -> str:
    import json
    try:
        return json.dumps(x, indent=1)[:200_000]
    except (TypeError, ValueError):
        return str(x)[:200_000]
