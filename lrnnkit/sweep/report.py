"""Summary of a sweep: a text table (``summary.txt``) and, for collapse sweeps, the heat map
construction x format -> first wrong step (``collapse_heatmap.png``).

Rows are labelled by the parameters that vary over the grid (constant ones are stated once in the header).
Collapse cells: the first wrong step; ``-`` no wrong output within the steps run; ``ok*`` none at any length
(periodic input, exact verdict); ``FAIL`` the point raised (its error is in the record).
"""
from __future__ import annotations

import math
from ..cli_format import escaped
from ..fileio import save_figure
from ..heatmap import label_cells, short_count

__all__ = ["summary_table", "collapse_matrix", "plot_collapse_heatmap", "write_summary"]

_RESULT_COLUMNS = {"certify": ("certified", "method", "reachable_states", "model_construction"),
                   "theorems": ("verdict", "recorded_verdict", "agrees")}


def _varying(records, params) -> list:
    return [p for p in params if len({repr(r.get(p)) for r in records}) > 1]


def _params_of(spec) -> list:
    names = list(spec.params)
    for axis, vals in spec.grid.items():
        if isinstance(vals[0], dict):
            for v in vals:
                names += [k for k in v if k not in names]
        elif axis not in names:
            names.append(axis)
    return names


def _cell(r) -> str:
    if r.get("status") != "ok":
        return "FAIL"
    fw = r.get("first_wrong_step")
    if fw is None:
        return "ok*" if r.get("exact_for_all_lengths") else "-"
    return str(fw)


def collapse_matrix(records, params, compact: bool = False) -> tuple:
    """``(row_labels, formats, cells)``: rows = the varying parameters other than ``format`` (``name=value``; only
    the values with ``compact``); ``cells[i][j]`` the record of row i and format j (or None)."""
    var = _row_params(records, params)
    formats, rows, cells = [], [], {}
    for r in records:
        f = str(r.get("format"))
        if f not in formats:
            formats.append(f)
        label = (" / ".join(escaped(r.get(p)) for p in var) if compact else
                 " ".join(escaped(f"{p}={r.get(p)}") for p in var)) or "all"
        if label not in rows:
            rows.append(label)
        cells[(label, f)] = r
    return rows, formats, [[cells.get((lab, f)) for f in formats] for lab in rows]


def _row_params(records, params) -> list:
    return [p for p in _varying(records, params) if p != "format"]


def summary_table(spec, records) -> str:
    params = _params_of(spec)
    const = [p for p in params if p not in _varying(records, params)]
    head = [f"sweep {spec.kind} {spec.spec_hash}: {len(records)} record(s) of {spec.n_points()} point(s), "
            f"{sum(r['status'] == 'ok' for r in records)} ok, {sum(r['status'] != 'ok' for r in records)} failed"]
    if records and const:
        head.append("fixed: " + ", ".join(f"{p}={records[0].get(p)}" for p in const))
    if not records:
        return _text(head)
    if spec.kind == "collapse" and any("first_wrong_step" in r for r in records):
        rows, formats, cells = collapse_matrix(records, params)
        w0 = max(len(x) for x in rows + ["point"])
        ws = [max(len(f), 7) for f in formats]
        lines = [f"{'point':<{w0}}  " + "  ".join(f"{f:>{w}}" for f, w in zip(formats, ws))]
        for lab, row in zip(rows, cells):
            lines.append(f"{lab:<{w0}}  " + "  ".join(f"{(_cell(r) if r else ''):>{w}}" for r, w in zip(row, ws)))
        lines.append("cells: first wrong step; '-' none within the steps run; 'ok*' none at any length; FAIL: error")
        return _text(head + lines)
    var = _varying(records, params)
    cols = var + [c for c in _RESULT_COLUMNS.get(spec.kind, ()) if any(c in r for r in records)]
    if spec.kind not in _RESULT_COLUMNS:   # train and custom kinds: the scalar result keys
        skip = set(params) | {"status", "error", "seed", "point_key", "spec_hash", "meta"}
        for r in records:
            for k, v in r.items():
                if k not in skip and k not in cols and isinstance(v, (int, float, str, bool)) and len(cols) < 10:
                    cols.append(k)
    cols.append("status")
    table = [[_fmt(r.get(c)) for c in cols] for r in records]
    ws = [max([len(c)] + [len(row[i]) for row in table]) for i, c in enumerate(cols)]
    lines = ["  ".join(f"{c:<{w}}" for c, w in zip(cols, ws))]
    lines += ["  ".join(f"{x:<{w}}" for x, w in zip(row, ws)) for row in table]
    fails = [r for r in records if r["status"] != "ok"]
    lines += [f"failed: {json_point(r, params)}: {r.get('error')}" for r in fails[:20]]
    return _text(head + lines)


def _text(lines) -> str:
    """The lines of a summary, each with its control characters escaped (a value or key of the spec may hold
    any text: one spec line stays one summary line, and no escape sequence reaches a terminal)."""
    return "".join(escaped(x) + "\n" for x in lines)


def json_point(r, params) -> str:
    return ", ".join(f"{p}={r.get(p)}" for p in params if p in r)


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return "" if v is None else escaped(v)[:40]


def plot_collapse_heatmap(spec, records, path: str) -> str | None:
    """Heat map: rows = the varying parameters but format (construction/source/policy...), columns = formats,
    colour = log10(first wrong step), every cell labelled in the colour that contrasts with it (lrnnkit.heatmap);
    hatched grey = failed, white with "never" / "none<=N" in green = no wrong step."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    rows, formats, cells = collapse_matrix(records, _params_of(spec), compact=True)
    if not rows or not formats:
        return None
    val = np.full((len(rows), len(formats)), np.nan)
    for i, row in enumerate(cells):
        for j, r in enumerate(row):
            if r and r.get("status") == "ok" and r.get("first_wrong_step") is not None:
                val[i, j] = math.log10(r["first_wrong_step"])
    fig, ax = plt.subplots(figsize=(2.0 + 1.1 * len(formats), 1.2 + 0.32 * len(rows)))
    vmax = max(1.0, float(np.nanmax(val)) if np.isfinite(val).any() else 1.0)
    im = ax.imshow(np.ma.masked_invalid(val), cmap="viridis_r", vmin=0, vmax=vmax, aspect="auto")
    label_cells(ax, im, val, [[_heat_label(r) for r in row] for row in cells])
    for i, row in enumerate(cells):
        for j, r in enumerate(row):
            if r is not None and r.get("status") != "ok":
                ax.add_patch(plt.Rectangle((j - .5, i - .5), 1, 1, fill=True, color="0.8", hatch="//", zorder=1.5))
    ax.set_xticks(range(len(formats)), formats, rotation=30, ha="right")
    ax.set_yticks(range(len(rows)), rows, fontsize=7)
    ax.set_ylabel(" / ".join(_row_params(records, _params_of(spec))), fontsize=8)
    ax.set_title(f"first wrong step ({spec.kind} sweep {spec.spec_hash})", fontsize=9)
    fig.colorbar(im, ax=ax, label="log10 first wrong step")
    fig.tight_layout()
    fig.text(0.01, 0.0, "white: 'never' = no wrong step at any length; 'none<=N' = none within the N steps run",
             ha="left", va="top", fontsize=7, color="0.3")
    save_figure(fig, path, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


def _heat_label(r) -> str:
    """A heat-map cell: the first wrong step (abbreviated), "never" (exact for all lengths), "none<=N" (none
    within the N steps run), "FAIL"."""
    if r is None:
        return ""
    if r.get("status") != "ok":
        return "FAIL"
    if r.get("first_wrong_step") is not None:
        return short_count(r["first_wrong_step"])
    return "never" if r.get("exact_for_all_lengths") else f"none<={short_count(r.get('steps_run') or r.get('steps'))}"


def write_summary(store, spec, records, plots: bool = True) -> list:
    import os
    files = [store.write_text("summary.txt", summary_table(spec, records))]
    if plots and spec.kind == "collapse" and records:
        p = plot_collapse_heatmap(spec, records, os.path.join(store.out_dir, "collapse_heatmap.png"))
        if p:
            files.append(p)
    return files
