"""Paper 003: claims about paper 000's experiments, checked against 000's own tables: 003:appendix-E.1.best-reported,
003:table-1.baselines.

000, Table 3 (best of 3 runs, scaled accuracy; in parentheses the numbers Beck et al. (2024) reported) and App.
E.1.1 ('For modular arithmetic, we increase the number of layers to 3') are transcribed below as printed."""
from __future__ import annotations

from fractions import Fraction as F

from ..registry import CheckResult, statement
from ._common import PAPER

#: 000, Table 3, column 'Mod. Arithm. w/ brackets': (000's own best-of-3 run, the number quoted from Beck et al.)
T3_BRACKETS = {"Transformer": ("0.025", None), "mLSTM": ("0.034", "0.03"), "sLSTM": ("0.173", "0.57"),
               "Mamba [0, 1]": ("0.092", None), "Mamba [-1, 1]": ("0.136", None), "DeltaNet [0, 1]": ("0.137", None),
               "DeltaNet [-1, 1]": ("0.200", None)}
#: 000, App. E.1.1: layers of the modular-arithmetic models (parity: 2)
LAYERS_000_MODARITH = 3
#: 003, Table 1 as printed: (label, accuracy)
T1_003 = [("2L Transformer", "0.025"), ("2L mLSTM", "0.034"), ("2L sLSTM", "0.173"), ("2L Mamba", "0.136"),
          ("2L DeltaNet", "0.200")]
T1_SOURCE = {"2L Transformer": "Transformer", "2L mLSTM": "mLSTM", "2L sLSTM": "sLSTM", "2L Mamba": "Mamba [-1, 1]",
             "2L DeltaNet": "DeltaNet [-1, 1]"}


@statement(
    id="003:appendix-E.1.best-reported", paper=PAPER, kind="claim",
    statement="(App. E.1) 'the mod arithmetic task with brackets, for which the best performance reported so far "
              "according to Grazzi et al. (2024) is an accuracy of 0.2'.",
    hypotheses="000 (Grazzi et al.), Table 3, column 'Mod. Arithm. w/ brackets'.",
    conclusion="The best score in that column is 0.2.",
    verdict="holds-with-wording-slip",
    evidence="Literally false: 000's Table 3 also reports, in parentheses, Beck et al.'s sLSTM score 0.57 on the same "
             "task, so 'the best performance reported so far according to Grazzi et al.' is 0.57. The intended "
             "reading, the best of 000's own runs, holds exactly: max over the seven models is 0.200 (DeltaNet "
             "[-1, 1]; next 0.173 sLSTM, 0.137 DeltaNet [0, 1]). Perturbed to a claimed 0.25 the check fails.",
    counterexample={"000 Table 3, sLSTM (Beck et al.)": "0.57", "000's own best": "0.200 (DeltaNet [-1, 1])"},
    corrected="The best score among 000's own runs (Table 3, best of 3) is 0.200 (DeltaNet [-1, 1]); 000 also quotes "
              "Beck et al.'s 0.57 for sLSTM, which 000 could not reproduce (0.173).",
    perturb={"claimed": "0.25"})
def check_best_reported(profile: str = "quick", claimed: str = "0.2") -> CheckResult:
    own = max(F(v) for v, _ in T3_BRACKETS.values())
    quoted = max(F(q) for _, q in T3_BRACKETS.values() if q is not None)
    if own != F(claimed):
        return CheckResult("falsified", f"000's own best is {own}, not {claimed}",
                           counterexample={"000's own best": str(own), "claimed": claimed})
    if quoted <= own:
        return CheckResult("holds", f"the best reported number in 000's Table 3 is {own}")
    return CheckResult("holds-with-wording-slip", f"000's own best {own} = {claimed}; 000 also quotes {quoted}",
                       counterexample={"000 Table 3, sLSTM (Beck et al.)": "0.57",
                                       "000's own best": "0.200 (DeltaNet [-1, 1])"},
                       corrected="best of 000's own runs")


@statement(
    id="003:table-1.baselines", paper=PAPER, kind="claim",
    statement="(Table 1) Accuracies on modular arithmetic with brackets of '2L Transformer 0.025, 2L mLSTM 0.034, 2L "
              "sLSTM 0.173, 2L Mamba 0.136, 2L DeltaNet 0.200'; 'We adopt the reported numbers by Grazzi et al. "
              "(2024) who evaluate baselines with extended eigenvalue range'; 'we use two layers (2L) for the "
              "diagonal linear RNN baselines'.",
    hypotheses="000, Table 3 (the numbers) and App. E.1.1 (the models behind them).",
    conclusion="The adopted numbers are 000's results of two-layer models.",
    verdict="holds-as-corrected",
    evidence="The five numbers equal 000's Table 3 best-of-3 column exactly (Mamba and DeltaNet with range [-1, 1]), "
             "but 000's App. E.1.1 says 'For modular arithmetic, we increase the number of layers to 3': the "
             "adopted baselines are three-layer models, not 2L as labelled (and as the comparison with the 2-layer "
             "Bedouin assumes). Corrected: the same numbers labelled 3L. Perturbed (a transcription error in one "
             "number) the check fails.",
    counterexample={"003 Table 1": "2L", "000 App. E.1.1": "modular arithmetic: 3 layers"},
    corrected="Table 1's baselines are 000's three-layer models (000, App. E.1.1), with the numbers as printed.",
    perturb={"table": [("2L Transformer", "0.025"), ("2L mLSTM", "0.034"), ("2L sLSTM", "0.173"),
                       ("2L Mamba", "0.163"), ("2L DeltaNet", "0.200")]})
def check_table_1_baselines(profile: str = "quick", table: list = None) -> CheckResult:
    table = T1_003 if table is None else table
    wrong = [(lab, v) for lab, v in table if F(v) != F(T3_BRACKETS[T1_SOURCE[lab]][0])]
    if wrong:
        return CheckResult("falsified", f"numbers differ from 000's Table 3: {wrong}",
                           counterexample={"rows": [list(w) for w in wrong]})
    labelled = {int(lab.split("L")[0]) for lab, _ in table}
    if labelled == {LAYERS_000_MODARITH}:
        return CheckResult("holds", "numbers and layer counts agree with 000")
    return CheckResult("holds-as-corrected", f"numbers equal 000's Table 3; layers labelled {sorted(labelled)}, 000 "
                       f"used {LAYERS_000_MODARITH}", counterexample={"003 Table 1": "2L",
                                                                      "000 App. E.1.1": "modular arithmetic: 3 layers"},
                       corrected="3L")
