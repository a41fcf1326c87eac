"""Paper 003: claims about paper 000's experiments, checked against 000's own tables: 003:appendix-E.1.best-reported,
003:table-1.baselines; and the numbers of 003's own tables, which only training decides: 003:table-1.bedouin,
003:table-2.copying.

000, Table 3 (best of 3 runs, scaled accuracy; in parentheses the numbers Beck et al. (2024) reported) and App.
E.1.1 ('For modular arithmetic, we increase the number of layers to 3') are transcribed below as printed."""
from __future__ import annotations

from fractions import Fraction as F

from ..registry import CheckResult, empirical_claim, entry

#: 000, Table 3, column 'Mod. Arithm. w/ brackets': (000's own best-of-3 run, the number quoted from Beck et al.)
T3_BRACKETS = {"Transformer": ("0.025", None), "mLSTM": ("0.034", "0.03"), "sLSTM": ("0.173", "0.57"),
               "Mamba [0, 1]": ("0.092", None), "Mamba [-1, 1]": ("0.136", None), "DeltaNet [0, 1]": ("0.137", None),
               "DeltaNet [-1, 1]": ("0.200", None)}
#: 000, App. E.1.1: 'For parity, all models contain 2 blocks (layers) ... For modular arithmetic, we increase the
#: number of layers to 3 and use a gradient clipping norm of 1.0 for Transformer, Mamba, and DeltaNet, while for
#: mLSTM and sLSTM we decrease the embedding size and number of heads to 64 and 1'. Ambiguous: 'for Transformer,
#: Mamba, and DeltaNet' may govern both clauses (then mLSTM and sLSTM keep parity's 2 layers) or only the
#: clipping (then every model has 3). Transformer, Mamba and DeltaNet have 3 layers under both readings; mLSTM and
#: sLSTM have 2 or 3 (the value: the set of layer counts the text admits).
LAYERS_000_MODARITH = {"Transformer": {3}, "Mamba [-1, 1]": {3}, "DeltaNet [-1, 1]": {3}, "mLSTM": {2, 3},
                       "sLSTM": {2, 3}}
#: 003, Table 1 as printed: (label, accuracy)
T1_003 = [("2L Transformer", "0.025"), ("2L mLSTM", "0.034"), ("2L sLSTM", "0.173"), ("2L Mamba", "0.136"),
          ("2L DeltaNet", "0.200")]
T1_SOURCE = {"2L Transformer": "Transformer", "2L mLSTM": "mLSTM", "2L sLSTM": "sLSTM", "2L Mamba": "Mamba [-1, 1]",
             "2L DeltaNet": "DeltaNet [-1, 1]"}


@entry("003:appendix-E.1.best-reported", perturb={"claimed": "0.57"})
def check_best_reported(profile: str = "quick", claimed: str = "0.2") -> CheckResult:
    """The best number 000's Table 3 reports on the task: its own runs and the numbers it quotes from Beck et al.
    A misquoted number is ``falsified`` (docs/registry.rst, the labelling rule)."""
    own = max(F(v) for v, _ in T3_BRACKETS.values())
    quoted = max(F(q) for _, q in T3_BRACKETS.values() if q is not None)
    best = max(own, quoted)
    if best == F(claimed):
        return CheckResult("holds", f"the best reported number in 000's Table 3 is {best}")
    return CheckResult("falsified", f"the best number 000's Table 3 reports is {best} (quoted from Beck et al.), not "
                       f"{claimed}; 000's own best is {own}",
                       counterexample={"000 Table 3, sLSTM (Beck et al.)": "0.57",
                                       "000's own best": "0.200 (DeltaNet [-1, 1])", "claimed": claimed})


@entry("003:table-1.baselines",
       perturb={"table": [("2L Transformer", "0.025"), ("2L mLSTM", "0.034"), ("2L sLSTM", "0.173"),
                       ("2L Mamba", "0.163"), ("2L DeltaNet", "0.200")]})
def check_table_1_baselines(profile: str = "quick", table: list = None) -> CheckResult:
    table = T1_003 if table is None else table
    wrong = [(lab, v) for lab, v in table if F(v) != F(T3_BRACKETS[T1_SOURCE[lab]][0])]
    if wrong:
        return CheckResult("falsified", f"numbers differ from 000's Table 3: {wrong}",
                           counterexample={"rows": [list(w) for w in wrong]})
    wrong = [lab for lab, _ in table if int(lab.split("L")[0]) not in LAYERS_000_MODARITH[T1_SOURCE[lab]]]
    ambiguous = [lab for lab, _ in table if len(LAYERS_000_MODARITH[T1_SOURCE[lab]]) > 1]
    if not wrong:
        return CheckResult("holds", f"numbers and layer counts agree with 000 (layer counts of {ambiguous} admitted "
                                    "by either reading of 000's App. E.1.1)")
    return CheckResult("holds-as-corrected", f"numbers equal 000's Table 3; {wrong} are 3-layer models under either "
                       f"reading of 000's App. E.1.1; {ambiguous}: 2 or 3 layers (000's sentence is ambiguous)",
                       counterexample={"003 Table 1": "2L", "000 App. E.1.1": "modular arithmetic: 3 layers for "
                                       "Transformer, Mamba and DeltaNet", "labels contradicted": wrong},
                       corrected="3L for the Transformer, Mamba and DeltaNet baselines; mLSTM and sLSTM 2L or 3L")


empirical_claim("003:table-1.bedouin")
empirical_claim("003:table-2.copying")
