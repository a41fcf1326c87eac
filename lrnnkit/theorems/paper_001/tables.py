"""Paper 001: the numbers of Tables 1 and 2 checked against the paper itself and against 000's tables (exact
arithmetic on the printed numbers): 001:table-1.avg-column, 001:table-2.avg-column, 001:table-2.improvements,
001:table-2.baselines-from-000; and a claim only training can decide, 001:section-5.1.deltanet-five-layers.

Table 1 (lm-eval-harness, the FineWeb rows; the SlimPajama rows are 000's Table 4 rows, checked there) and Table 2
(formal languages, scaled accuracy, best of 3 runs) are transcribed as printed."""
from __future__ import annotations

from fractions import Fraction as F

from ..paper_000.tables_discussion import T3, T4
from ..registry import CheckResult, empirical_claim, entry

#: 001, Table 1, the 35B-token FineWeb rows: model -> Wiki. ppl, LMB. ppl, LMB., PIQA, Hella., Wino., ARC-e, ARC-c,
#: Avg., SWDE, SQUAD, FDA
T1_FW = {"DeltaNet [-1, 1] 340M": "26.92 43.07 29.8 69.0 41.0 50.9 46.6 24.5 43.6 26.4 30.2 3.7",
         "DeltaNet [-1, 1] 12 heads, 392M": "26.57 36.76 31.8 69.2 42.3 50.9 47.2 24.4 44.3 15.8 11.0 0.18",
         "DeltaProduct_2 [-1, 1] 392M": "26.43 30.66 34.0 68.9 42.4 53.1 48.9 25.9 45.5 32.0 30.0 3.9",
         "DeltaProduct_3 [-1, 1] 443M": "25.94 29.91 34.2 69.9 43.2 51.9 48.2 24.1 45.2 30.6 30.4 5.3",
         "Gated DeltaNet [-1, 1] 340M": "25.97 33.57 33.1 69.5 44.1 51.1 50.9 26.7 45.9 27.4 31.4 4.2",
         "Gated DeltaProduct_2 [-1, 1] 393M": "25.12 30.03 34.2 69.1 44.6 55.3 49.8 25.3 46.4 30.1 31.6 6.6"}
#: 001, Table 1, the 15B-token SlimPajama rows as printed (000's Table 4 340M SPJ rows, which 000 checks)
T1_SPJ = {"Transformer++": "28.39 42.69 31.0 63.3 34.0 50.4 44.5 24.2 41.2 42.2 22.1 21.4",
          "Mamba [0, 1]": "28.39 39.66 30.6 65.0 35.4 50.1 46.3 23.6 41.8 12.4 23.0 2.1",
          "GLA [0, 1]": "29.47 45.53 31.3 65.1 33.8 51.6 44.4 24.6 41.8 24.0 24.7 7.3",
          "DeltaNet [0, 1]": "28.24 37.37 32.1 64.8 34.3 52.2 45.8 23.5 42.1 26.4 28.9 12.8"}
#: 001, Table 2 (scaled accuracy, best of 3): model -> parity, mod. arithm. w/o brackets, w/ brackets, Avg.
T2 = {"Transformer": "0.022 0.031 0.025 0.026", "mLSTM": "0.087 0.040 0.034 0.054",
      "sLSTM": "1.000 0.787 0.173 0.653", "Mamba [0, 1]": "0.000 0.095 0.092 0.062",
      "Mamba [-1, 1]": "1.000 0.241 0.136 0.459", "DeltaNet [0, 1]": "0.233 0.302 0.286 0.274",
      "DeltaProduct_2 [0, 1]": "0.264 0.402 0.267 0.311", "DeltaProduct_3 [0, 1]": "0.285 0.402 0.291 0.326",
      "DeltaProduct_4 [0, 1]": "0.295 0.369 0.298 0.321", "DeltaNet [-1, 1]": "0.982 0.915 0.253 0.717",
      "DeltaProduct_2 [-1, 1]": "0.896 0.887 0.266 0.683", "DeltaProduct_3 [-1, 1]": "0.932 0.736 0.394 0.687",
      "DeltaProduct_4 [-1, 1]": "0.982 0.893 0.460 0.778"}
#: the rows of Table 2 that are not DeltaProduct_{2,3,4} [-1, 1]: "the other models", whose results the caption
#: says were taken from 000 (Grazzi et al., 2025)
T2_OTHERS = [m for m in T2 if not (m.startswith("DeltaProduct") and "[-1, 1]" in m)]


def _row(text: str) -> list:
    return [F(x) for x in text.split()]


@entry("001:table-1.avg-column",
       perturb={"rows": {**T1_FW, "DeltaProduct_3 [-1, 1] 443M": "25.94 29.91 34.2 69.9 43.2 51.9 48.2 24.1 45.5 "
                                                                 "30.6 30.4 5.3"}})
def check_table_1_avg(profile: str = "quick", rows: dict = None) -> CheckResult:
    """Every Avg. of Table 1 is the mean of the row's six accuracy columns (LMB. .. ARC-c) to within 0.05 (the
    printed accuracies and the Avg. are rounded to one decimal: the mean of the rounded entries is within 0.05 + 0.05
    of the rounded true mean only if the authors averaged unrounded numbers; 0.05 is what averaging the printed
    numbers gives); the SlimPajama rows equal 000's Table 4 rows, 12 of 12 columns."""
    rows = T1_FW if rows is None else rows
    worst, gap = None, F(0)
    for m, text in {**rows, **T1_SPJ}.items():
        v = _row(text)
        g = abs(sum(v[2:8]) / 6 - v[8])
        if g > gap:
            worst, gap = m, g
    if gap > F(1, 20):
        return CheckResult("falsified", f"{worst}: mean of the six accuracies {float(sum(_row({**rows, **T1_SPJ}[worst])[2:8]) / 6):.3f}, "
                           f"Avg. {_row({**rows, **T1_SPJ}[worst])[8]}", counterexample={"row": worst, "gap": str(gap)})
    differ = [m for m, text in T1_SPJ.items() if _row(text) != _row(T4[("340M SPJ", m)])]
    if differ:
        return CheckResult("falsified", f"SlimPajama rows differ from 000's Table 4: {differ}",
                           counterexample={"rows": differ})
    return CheckResult("holds", f"every Avg. within {float(gap):.3f} of its row's mean ({len(rows) + len(T1_SPJ)} "
                                "rows); the 4 SlimPajama rows equal 000's Table 4 (12 of 12 columns)")


@entry("001:table-2.avg-column", perturb={"rows": {**T2, "DeltaNet [-1, 1]": "0.982 0.915 0.253 0.724"}})
def check_table_2_avg(profile: str = "quick", rows: dict = None) -> CheckResult:
    """Every Avg. of Table 2 is the mean of the row's three scaled accuracies, rounded to 3 decimals: within 1/2000
    of the mean of the printed (rounded) entries plus their own rounding, 1/1000 in all (exact)."""
    rows = T2 if rows is None else rows
    off = {m: abs(sum(_row(t)[:3]) / 3 - _row(t)[3]) for m, t in rows.items()}
    worst = max(off, key=off.get)
    if off[worst] > F(1, 1000):
        return CheckResult("falsified", f"{worst}: mean {sum(_row(rows[worst])[:3]) / 3}, Avg. {_row(rows[worst])[3]}",
                           counterexample={"row": worst, "mean": str(sum(_row(rows[worst])[:3]) / 3),
                                           "printed": str(_row(rows[worst])[3])})
    return CheckResult("holds", f"all {len(rows)} rows: Avg. within {float(off[worst]):.4f} of the mean")


@entry("001:table-2.improvements", perturb={"claimed": ("0.778", "19.15", "8.51")})
def check_table_2_improvements(profile: str = "quick", claimed: tuple = ("0.778", "19.14", "8.51")) -> CheckResult:
    """001 Section 5.1: 'DeltaProduct_4 [-1, 1] achieves an average accuracy of 0.778, improving 19.14% and 8.51%
    over sLSTM and DeltaNet [-1, 1]': relative improvements of Table 2's Avg. column, 100 (a / b - 1), rounded to
    two decimals (exact; the percentages are relative, not points: 0.778 - 0.653 = 0.125)."""
    avg = {m: _row(t)[3] for m, t in T2.items()}
    best = avg["DeltaProduct_4 [-1, 1]"]
    got = [best] + [100 * (best / avg[m] - 1) for m in ("sLSTM", "DeltaNet [-1, 1]")]
    want = [F(x) for x in claimed]
    ok = got[0] == want[0] and all(abs(g - w) <= F(1, 200) for g, w in zip(got[1:], want[1:]))
    shown = {"average": str(got[0]), "over sLSTM %": f"{float(got[1]):.4f}", "over DeltaNet [-1, 1] %":
             f"{float(got[2]):.4f}"}
    if not ok:
        return CheckResult("falsified", f"Table 2 gives {shown}, the text {list(claimed)}",
                           counterexample={"table 2": shown, "claimed": list(claimed)})
    return CheckResult("holds", f"Table 2's Avg. column gives {shown} (relative improvements, to 2 decimals)")


@entry("001:table-2.baselines-from-000", perturb={"others": ["Transformer", "mLSTM", "sLSTM", "Mamba [0, 1]",
                                                             "Mamba [-1, 1]"]})
def check_table_2_sources(profile: str = "quick", others: list = None) -> CheckResult:
    """Table 2's caption: 'The results for the other models were taken directly from Grazzi et al. (2025)' (000's
    Table 3, best of 3, the same metric). The other models: every row but DeltaProduct_{2,3,4} [-1, 1]. A row is
    taken from 000 if 000's Table 3 has the model with the same three numbers."""
    others = T2_OTHERS if others is None else others
    t3 = {m: _row(t) for m, t in T3.items()}
    bad = {m: ("not in 000's Table 3" if m not in t3 else f"000: {T3[m]}") for m in others
           if m not in t3 or _row(T2[m])[:3] != t3[m]}
    same = [m for m in others if m not in bad]
    if bad:
        return CheckResult("falsified", f"rows equal to 000's Table 3: {same}; not: "
                           + "; ".join(f"{m} ({T2[m].rsplit(' ', 1)[0]}): {why}" for m, why in bad.items()),
                           counterexample={m: {"001": T2[m].rsplit(" ", 1)[0], "000 Table 3": why}
                                           for m, why in bad.items()})
    return CheckResult("holds", f"rows {same} equal 000's Table 3 (3 of 3 columns)")


empirical_claim("001:section-5.1.deltanet-five-layers")
