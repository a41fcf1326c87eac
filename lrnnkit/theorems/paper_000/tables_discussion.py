"""Paper 000: claims of the Discussion and of Tables 3, 4 and 5 checked against the paper itself (exact arithmetic
on the printed numbers): 000:discussion.width-exponential, 000:table-4.avg-column, 000:table-4.mamba-average,
000:table-4.duplicate-rows, 000:table-3.negative-eigenvalues-help, 000:table-5.median-mad.

Tables 3 (best of 3 runs) and 5 (median and median absolute deviation of 3 runs), Section 5.1, scaled accuracy
(1 perfect, 0 chance), are transcribed as printed too.

Table 4 (Section 5.3) is transcribed below as printed (000_46236c15318b7b2c.txt, Table 4): every accuracy as a
decimal string, read exactly as a Fraction."""
from __future__ import annotations

import itertools
from fractions import Fraction as F

from ..registry import CheckResult, entry
from ...automata.holonomy import holonomy_decomposition, members
from .theorem_4_5 import S4_IDEMPOTENT, tile_indicator_widths

#: Table 4 columns; "avg" is the printed Avg. column, the mean of the six accuracy columns LMB..ARC-c
T4_COLS = ("wiki_ppl", "lmb_ppl", "lmb", "piqa", "hella", "wino", "arc_e", "arc_c", "avg", "swde", "squad", "fda")
T4_ACC = ("lmb", "piqa", "hella", "wino", "arc_e", "arc_c")
T4 = {
    ("340M SPJ", "Transformer++"): "28.39 42.69 31.0 63.3 34.0 50.4 44.5 24.2 41.2 42.2 22.1 21.4",
    ("340M SPJ", "Mamba [0, 1]"): "28.39 39.66 30.6 65.0 35.4 50.1 46.3 23.6 41.8 12.4 23.0 2.1",
    ("340M SPJ", "GLA [0, 1]"): "29.47 45.53 31.3 65.1 33.8 51.6 44.4 24.6 41.8 24.0 24.7 7.3",
    ("340M SPJ", "DeltaNet [0, 1]"): "28.24 37.37 32.1 64.8 34.3 52.2 45.8 23.5 42.1 26.4 28.9 12.8",
    ("340M SPJ", "DeltaNet [-1, 1]"): "28.39 39.66 30.6 65.0 35.4 50.1 46.3 23.6 41.8 12.4 23.0 2.1",
    ("340M FW", "DeltaNet [0, 1]"): "24.68 31.49 33.7 70.3 45.1 51.3 50.0 26.1 46.1 35.2 28.7 11.8",
    ("340M FW", "DeltaNet [-1, 1]"): "24.54 31.15 34.0 69.9 44.6 51.9 50.0 24.4 45.8 37.2 33.1 6.6",
    ("340M FW", "Mamba [0, 1]"): "24.84 24.69 35.6 70.6 48.4 51.2 53.4 24.8 47.3 21.6 27.7 2.8",
    ("340M FW", "Mamba [-1, 1]"): "25.02 24.71 36.2 70.5 47.8 53.3 54.7 26.7 48.2 20.9 24.8 2.5",
    ("1.3B SPJ", "Transformer++"): "16.85 13.44 48.9 70.8 49.6 53.6 56.0 26.5 50.9 66.6 31.5 27.4",
    ("1.3B SPJ", "Mamba [0, 1]"): "17.06 13.89 46.2 72.2 40.1 54.1 59.0 28.2 50.0 41.4 35.2 6.2",
    ("1.3B SPJ", "GLA [0, 1]"): "17.22 14.47 46.9 71.8 49.8 53.9 57.2 26.6 51.0 50.6 42.6 19.9",
    ("1.3B SPJ", "DeltaNet [0, 1]"): "16.87 12.21 48.9 71.2 50.2 53.6 57.2 28.3 51.6 49.5 37.4 17.2",
    ("1.3B SPJ", "DeltaNet [-1, 1]"): "16.87 12.21 48.9 71.2 50.2 53.6 57.2 28.3 51.6 49.5 37.4 17.2",
    ("1.3B FW", "DeltaNet [0, 1]"): "18.54 14.32 43.5 73.7 56.2 56.9 58.2 29.9 53.1 49.1 35.1 8.6",
    ("1.3B FW", "DeltaNet [-1, 1]"): "18.57 12.73 43.7 73.3 55.8 56.8 56.9 27.9 52.4 48.8 33.9 12.3",
}


def table_4(rows: dict = None) -> dict:
    """{(group, model): {column: Fraction}} from the transcription (or from ``rows`` of the same shape)."""
    return {k: dict(zip(T4_COLS, (F(x) for x in v.split()))) for k, v in (rows or T4).items()}


def acc_mean(r: dict) -> F:
    return sum(r[c] for c in T4_ACC) / len(T4_ACC)


@entry("000:table-4.avg-column",
       perturb={"rows": {**T4, ("340M FW", "Mamba [-1, 1]"):
                      "25.02 24.71 36.2 70.5 47.8 53.3 54.7 26.7 48.7 20.9 24.8 2.5"}})
def check_avg_column(profile: str = "quick", rows: dict = None) -> CheckResult:
    t = table_4(rows)
    worst = max(t, key=lambda k: abs(acc_mean(t[k]) - t[k]["avg"]))
    gap = abs(acc_mean(t[worst]) - t[worst]["avg"])
    # rounding to one decimal: the printed Avg. is within 0.05 of the mean of the printed (rounded) entries when the
    # authors averaged the rounded numbers, within 0.1 when they averaged unrounded ones
    if gap > F(1, 10):
        return CheckResult("falsified", f"{worst}: mean {float(acc_mean(t[worst])):.3f}, printed {t[worst]['avg']}",
                           counterexample={"row": list(worst), "mean": str(acc_mean(t[worst])),
                                           "printed": str(t[worst]["avg"])})
    return CheckResult("holds", f"every row's Avg. is the mean of its six accuracies to within {float(gap):.3f}")


@entry("000:table-4.mamba-average", perturb={"claimed": F(9, 10)})
def check_mamba_average(profile: str = "quick", claimed: F = F(21, 10)) -> CheckResult:
    t = table_4()
    a, b = t[("340M FW", "Mamba [0, 1]")], t[("340M FW", "Mamba [-1, 1]")]
    cols = T4_ACC + ("swde", "squad", "fda")
    hits = []
    for k in range(2, len(cols) + 1):
        for sub in itertools.combinations(cols, k):
            gain = sum(b[c] - a[c] for c in sub) / k
            if abs(gain - claimed) <= F(5, 100):           # the claim is rounded to one decimal
                hits.append(sub)
    avg_gain = b["avg"] - a["avg"]
    if hits or abs(avg_gain - claimed) <= F(5, 100):
        return CheckResult("holds", f"average gain {claimed} found: Avg. column {avg_gain}, subsets {hits[:3]}")
    return CheckResult("falsified", f"Avg. gain {avg_gain}; no subset of >= 2 of the nine accuracy columns averages "
                       f"{claimed}; Winogrande alone gains {b['wino'] - a['wino']}",
                       counterexample={"Avg. [0, 1] -> [-1, 1]": "47.3 -> 48.2 (+0.9)",
                                       "Wino., ARC-e, ARC-c mean gain": "+53/30 = +1.77",
                                       "Winogrande alone": "+2.1"})


@entry("000:table-4.duplicate-rows",
       perturb={"rows": {k: v for k, v in T4.items() if "[-1, 1]" not in k[1] or "FW" in k[0]}})
def check_duplicate_rows(profile: str = "quick", rows: dict = None) -> CheckResult:
    t = table_4(rows)
    dups = [(k1, k2) for k1, k2 in itertools.combinations(t, 2) if t[k1] == t[k2]]
    if not dups:
        return CheckResult("holds", "no two rows of Table 4 are identical")
    return CheckResult("falsified", f"identical rows: {dups}", counterexample={
        f"{k1[0]}": f"{k2[1]} == {k1[1]} (12 of 12 columns)" for k1, k2 in dups})


@entry("000:discussion.width-exponential", perturb={"width_slack": -1})
def check_width_exponential(profile: str = "quick", width_slack: int = 0) -> CheckResult:
    cases = [(n, [list(g) for g in gs]) for n in (2, 3) for gs in itertools.combinations(
        itertools.product(range(n), repeat=n), 2)] + [(4, S4_IDEMPOTENT)]
    for n, gens in cases:
        hd = holonomy_decomposition(gens, n, levels="class")
        widest, levels, bad = tile_indicator_widths(hd)
        total = sum(len(members(hd.sets[hd.rep[c]])) for c in hd.schreier)
        if bad is not None or widest > n + width_slack or total > n * (2 ** n - n - 1):
            return CheckResult("falsified", f"{gens}: per-layer width {widest}, total {total}",
                               counterexample={"n": n, "generators": gens, "width": widest, "total": total})
    return CheckResult("holds-with-wording-slip", f"{len(cases)} automata: per-layer width <= |Q| (not exponential), "
                       "total width <= |Q| (2^|Q| - |Q| - 1)",
                       counterexample={"Theorem 4": "n <= |Q| per layer",
                                       "S4_IDEMPOTENT": "|Q| = 4, per-layer width 4 < 2^4"},
                       corrected="layers and total width exponential; per-layer width <= |Q|")


# --------------------------------------------------------------------------------------------- Tables 3 and 5
T3_COLS = ("parity", "mod_wo", "mod_w")
#: 000, Table 3 (best of 3 runs): model -> the three columns; in parentheses Beck et al.'s numbers (kept apart)
T3 = {"Transformer": "0.022 0.031 0.025", "mLSTM": "0.087 0.040 0.034", "sLSTM": "1.000 0.787 0.173",
      "Mamba [0, 1]": "0.000 0.095 0.092", "Mamba [-1, 1]": "1.000 0.241 0.136",
      "DeltaNet [0, 1]": "0.017 0.314 0.137", "DeltaNet [-1, 1]": "1.000 0.971 0.200"}
T3_BECK = {"mLSTM": "0.04 0.04 0.03", "sLSTM": "1.00 1.00 0.57"}
#: 000, Table 5 (median +- median absolute deviation of 3 runs): model -> "median mad" per column
T5 = {"Transformer": "0.003 0.013 0.018 0.009 0.025 0.000", "mLSTM": "0.018 0.035 0.027 0.013 0.034 0.001",
      "sLSTM": "1.000 0.000 0.124 0.000 0.153 0.020", "Mamba [0, 1]": "0.000 0.000 0.066 0.029 0.072 0.008",
      "Mamba [-1, 1]": "1.000 0.000 0.214 0.027 0.126 0.010",
      "DeltaNet [0, 1]": "0.010 0.005 0.214 0.056 0.113 0.009",
      "DeltaNet [-1, 1]": "0.999 0.006 0.826 0.146 0.129 0.016"}


def _cols(text: str) -> dict:
    return dict(zip(T3_COLS, (F(x) for x in text.split())))


@entry("000:table-3.negative-eigenvalues-help",
       perturb={"t3": {**T3, "DeltaNet [-1, 1]": "1.000 0.971 0.100"}})
def check_table_3_claims(profile: str = "quick", t3: dict = None) -> CheckResult:
    """Section 5.1 and the captions of Tables 3 and 5 on the printed numbers: [-1, 1] beats [0, 1] in every column
    for Mamba and for DeltaNet (best of 3 and median); with [-1, 1] both solve parity (1.000, best of 3); the gain is
    larger for DeltaNet than for Mamba on both modular-arithmetic tasks ('especially DeltaNet'); 000's sLSTM is
    below Beck et al.'s numbers on both modular-arithmetic tasks ('unable to reproduce')."""
    t3 = {k: _cols(v) for k, v in (t3 or T3).items()}
    t5 = {k: dict(zip(T3_COLS, (F(x) for x in v.split()[::2]))) for k, v in T5.items()}
    beck = {k: _cols(v) for k, v in T3_BECK.items()}
    failed = []
    for name, t in (("Table 3", t3), ("Table 5", t5)):
        for m in ("Mamba", "DeltaNet"):
            for c in T3_COLS:
                if not t[f"{m} [-1, 1]"][c] > t[f"{m} [0, 1]"][c]:
                    failed.append(f"{name}, {m}, {c}: [-1, 1] {t[f'{m} [-1, 1]'][c]} <= [0, 1] {t[f'{m} [0, 1]'][c]}")
    for m in ("Mamba", "DeltaNet"):
        if t3[f"{m} [-1, 1]"]["parity"] != 1:
            failed.append(f"{m} [-1, 1] parity {t3[f'{m} [-1, 1]']['parity']} (not fully solved)")
    for c in ("mod_wo", "mod_w"):
        gd = t3["DeltaNet [-1, 1]"][c] - t3["DeltaNet [0, 1]"][c]
        gm = t3["Mamba [-1, 1]"][c] - t3["Mamba [0, 1]"][c]
        if not gd > gm:
            failed.append(f"{c}: DeltaNet's gain {gd} <= Mamba's {gm}")
        if not t3["sLSTM"][c] < beck["sLSTM"][c]:
            failed.append(f"{c}: sLSTM {t3['sLSTM'][c]} >= Beck et al.'s {beck['sLSTM'][c]}")
    if failed:
        return CheckResult("falsified", "; ".join(failed), counterexample=failed[0])
    return CheckResult("holds", "[-1, 1] > [0, 1] in all 12 (model, column) cells of Tables 3 and 5 for Mamba and "
                                "DeltaNet; both [-1, 1] models at 1.000 on parity (best of 3); DeltaNet's gain above "
                                "Mamba's on both modular-arithmetic tasks; sLSTM below Beck et al. on both")


@entry("000:table-5.median-mad", perturb={"t5": {**T5, "DeltaNet [-1, 1]": "0.999 0.001 0.826 0.146 0.129 0.016"}})
def check_table_5_median_mad(profile: str = "quick", t5: dict = None) -> CheckResult:
    """Table 5 prints, per cell, the median b and the median absolute deviation of 3 runs a <= b <= c, i.e.
    min(b - a, c - b) (the deviations from the median are 0, b - a, c - b). A scaled accuracy is at most 1, so
    min(b - a, c - b) <= c - b <= 1 - b. With each printed number rounded to 3 decimals (half-width 1/2000), a cell
    is possible only if mad - 1/2000 <= 1 - (median - 1/2000), i.e. median + mad <= 1 + 1/1000 (exact)."""
    bad = []
    for m, text in (t5 or T5).items():
        v = [F(x) for x in text.split()]
        for c, (med, mad) in zip(T3_COLS, zip(v[::2], v[1::2])):
            if med + mad > 1 + F(1, 1000):
                bad.append({"model": m, "column": c, "median": str(med), "mad": str(mad)})
    if bad:
        return CheckResult("falsified", f"no three scaled accuracies <= 1 have the printed median and median absolute "
                           f"deviation: {bad}", counterexample=bad[0])
    return CheckResult("holds", "every cell admits three runs with the printed median and median absolute deviation")
