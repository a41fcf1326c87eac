"""lrnnkit.theorems.rate_sweeps: the corrected statement of a printed learning result over a learning-rate sweep
(000 Fig. 6, Z60), judged on the committed runs; and the rule's edges on records made for the test."""
import copy
import json
import os

from hypothesis import given, settings
from hypothesis import strategies as st

from lrnnkit.theorems import get
from lrnnkit.theorems import rate_sweeps as rs
from lrnnkit.theorems.empirical import RESULTS_DIR, sweep_path


def _load(name):
    with open(os.path.join(RESULTS_DIR, name)) as fh:
        return json.load(fh)


def test_z60_is_falsified_as_printed_and_its_correction_is_seed_dependent():
    """``000:empirical-z60-deltanet-paper`` (Fig. 6 narrowed to the DeltaNets, lrnnkit's DeltaNet being the paper's
    model): at Fig. 6's one rate (1e-4) both DeltaNets stay at chance with two seeds, each seed rejected alone (the
    counterexample). At the best rate of 000's own sweep (1e-2) DeltaNet [-1,1] reaches the training length with both
    seeds; DeltaNet [0,1] does not with seed 0 (0.548) and does with seed 1 (0.994). The mean over seeds separates
    the pair, one seed does not: the corrected statement is ``open`` (seed-dependent), so the part stays
    ``falsified`` as printed, the sweep's evidence beside it. The stored record derives it. The whole experiment
    (``000:empirical-z60-paper``) is judged on Mamba's block, the one-state Mamba-like runs kept beside it as
    superseded; the sweep does not touch it."""
    paper, sweep = _load("000-z60-paper.json"), _load("000-z60-lr-sweep.json")
    whole = get("000:empirical-z60-paper")
    assert "Rate sweep" not in whole.evidence and "Mamba [-1,1]" in whole.evidence
    assert paper["superseded"] and all(k.startswith("Mamba-like") for k in paper["superseded"])
    s = get("000:empirical-z60-deltanet-paper")
    assert s.verdict == "falsified" and s.check("quick").verdict == "falsified"
    assert len(s.counterexample["seed_outcomes"]) >= 2
    assert all(o.startswith("not reproduced") for o in s.counterexample["seed_outcomes"].values())
    assert "Rate sweep" in s.evidence and "seed-dependent" in s.evidence
    assert "Rate sweep" in s.check("quick").evidence
    r = rs.judge(paper, sweep)
    assert r.verdict == "open" and r.corrected == rs.SWEEPS["000-z60"].corrected
    best = r.details["best_rates"]
    assert best["DeltaNet [-1,1]"][0] >= best["DeltaNet [0,1]"][0] + rs.MARGIN      # the mean separates them
    assert best["DeltaNet [-1,1]"][1] == best["DeltaNet [0,1]"][1] == 1e-2
    assert [x.split(":")[0] for x in r.details["seeds_not_separated"]] == ["seed 1"]
    assert dict(rs.seed_values(rs._merged(paper, sweep), "DeltaNet [0,1]", 1e-2))[1] > 0.95


def _turned(sweep: dict, label: str, value: float, seed=None) -> dict:
    out = copy.deepcopy(sweep)
    for r in out["runs"].values():
        if r.get("config_label") == label and seed in (None, r["config"]["seed"]):
            r["test_accuracy"][str(r["config"]["train_len"][1])] = value
    return out


def _holding(sweep: dict) -> dict:
    """The committed sweep with DeltaNet [0,1]'s seed-1 runs as poor as its seed-0 run at 1e-2."""
    return _turned(sweep, "DeltaNet [0,1]", 0.5, seed=1)


def test_a_correction_holds_only_where_every_seed_holds_too():
    """Where every seed of the pair is separated (the committed sweep with DeltaNet [0,1]'s seed 1 turned poor),
    the corrected statement holds and the DeltaNet part's falsified result becomes ``holds-as-corrected`` (the printed
    rate's counterexample kept); the committed sweep, whose seed 1 is not separated, leaves it ``falsified``."""
    from lrnnkit.theorems.empirical import _as_corrected
    from lrnnkit.theorems.registry import CheckResult
    paper, sweep = _load("000-z60-paper.json"), _load("000-z60-lr-sweep.json")
    r = rs.judge(paper, _holding(sweep))
    assert r.verdict == "holds-as-corrected" and r.details["seeds_not_separated"] == []
    printed = CheckResult("falsified", "as printed", {"seed_outcomes": {"0": "x"}})
    got = _as_corrected(printed, paper, _holding(sweep), "deltanet")
    assert got.verdict == "holds-as-corrected" and got.counterexample == printed.counterexample
    assert _as_corrected(printed, paper, sweep, "deltanet").verdict == "falsified"
    # the sweep corrects the DeltaNet part only: the whole experiment and its Mamba part are left as they are
    assert _as_corrected(printed, paper, _holding(sweep)).verdict == "falsified"
    assert _as_corrected(printed, paper, _holding(sweep), "mamba").verdict == "falsified"


def test_a_sweep_that_does_not_separate_the_pair_leaves_the_printed_verdict():
    """The same sweep with DeltaNet [0,1] as good as DeltaNet [-1,1] at its best rate: the corrected statement
    fails, so the entry stays ``falsified`` (as printed), with the sweep's evidence beside it."""
    paper, sweep = _load("000-z60-paper.json"), _load("000-z60-lr-sweep.json")
    turned = _turned(sweep, "DeltaNet [0,1]", 1.0)
    r = rs.judge(paper, turned)
    assert r.verdict == "falsified" and "DeltaNet [0,1] 1.000" in r.evidence
    # every seed of DeltaNet [-1,1] at 1.0: just under the margin fails, at the margin holds (the comparison is >=,
    # stated in the criterion), on the mean and at each seed alike
    top = _turned(sweep, "DeltaNet [-1,1]", 1.0)
    assert rs.judge(paper, _turned(top, "DeltaNet [0,1]", 1.0 - rs.MARGIN + 1e-6)).verdict == "falsified"
    assert rs.judge(paper, _turned(top, "DeltaNet [0,1]", 1.0 - rs.MARGIN - 1e-6)).verdict == "holds-as-corrected"


def test_a_sweep_off_the_protocol_in_more_than_the_rate_decides_nothing():
    """A sweep whose runs also differ in a ``config`` field other than the rate (here: fewer steps) is ``open``;
    one missing a configuration of a pair is ``open``."""
    paper, sweep = _load("000-z60-paper.json"), _load("000-z60-lr-sweep.json")
    for kind, text in (("config", "steps: 50000, paper: 100000"),
                       ("trainer", "early stop: at a loss threshold, paper: none")):
        off = copy.deepcopy(sweep)
        off["protocol"]["differences"].append({"kind": kind, "text": text, "configurations": "DeltaNet [0,1]"})
        r = rs.judge(paper, off)
        assert r.verdict == "open" and text in r.evidence, kind
    without = copy.deepcopy(paper)
    without["runs"] = {k: v for k, v in paper["runs"].items() if v["config_label"] != "DeltaNet [0,1]"}
    alone = copy.deepcopy(sweep)
    alone["runs"] = {k: v for k, v in sweep["runs"].items() if v["config_label"] != "DeltaNet [0,1]"}
    r = rs.judge(without, alone)
    assert r.verdict == "open" and "no finished run of DeltaNet [0,1]" in r.evidence


def test_the_sweep_file_is_not_read_as_the_experiments_own_record():
    """``kind: lr-sweep`` keeps the sweep out of the experiment entries: ``000:empirical-z60-paper`` is built from
    ``000-z60-paper.json``, whose runs are all at the printed rate."""
    from lrnnkit.theorems.empirical import _experiment_files
    paths = [os.path.basename(p) for p, _ in _experiment_files()]
    assert "000-z60-paper.json" in paths and os.path.basename(sweep_path("000-z60")) not in paths
    assert {r["config"]["lr"] for r in _load("000-z60-paper.json")["runs"].values()} == {1e-4}


cell = st.tuples(st.sampled_from(["A", "B"]), st.sampled_from([1e-2, 1e-3, 1e-4]), st.integers(0, 2),
                 st.floats(0, 1, allow_nan=False), st.booleans())


@settings(max_examples=200, deadline=None)
@given(st.lists(cell, max_size=12, unique_by=lambda c: c[:3]), st.floats(0, 1, allow_nan=False))
def test_best_rates_is_the_best_mean_over_seeds_of_the_finished_runs(cells, stale):
    """Against brute force: per configuration, among its rates, the highest mean over the finished runs' seeds
    (a run short of its steps does not count; on a tie the smaller rate). A second record of a finished (seed,
    rate) -- a repeated call's -- neither speaks nor counts as another seed: one run per cell speaks, the first of
    those with the most steps (run_records.run_cells)."""
    runs = {f"{c} (lr {lr:g}, seed {s})": {"config_label": c, "steps": 10 if done else 5, "test_accuracy": {"4": v},
                                           "config": {"lr": lr, "seed": s, "steps": 10, "train_len": [4, 4]}}
            for c, lr, s, v, done in cells}
    runs.update({f"{k} (repeated call)": {**r, "test_accuracy": {"4": stale}} for k, r in list(runs.items())
                 if r["steps"] == 10})
    want = {}
    for c in {x[0] for x in cells}:
        means = {}
        for lr in {x[1] for x in cells if x[0] == c and x[4]}:
            vals = [x[3] for x in cells if x[0] == c and x[1] == lr and x[4]]
            means[lr] = (sum(vals) / len(vals), len(vals))
        if means:
            top = max(m for m, _ in means.values())
            lr = min(r for r, (m, _) in means.items() if m == top)
            want[c] = (top, lr, means[lr][1])
    assert rs.best_rates(runs) == want


def test_the_perturbation_of_a_holding_correction_is_the_sweep_turned_against_it():
    """``holds-as-corrected``'s perturbation (:func:`rate_sweeps.perturbed`): the sweep's DeltaNet [0,1] runs given
    DeltaNet [-1,1]'s best value; the judge then says ``falsified``. Shown on the sweep made to hold
    (:func:`_holding`); the committed entry, ``falsified`` as printed, is perturbed through its record."""
    paper, sweep = _load("000-z60-paper.json"), _load("000-z60-lr-sweep.json")
    assert rs.judge(paper, rs.perturbed(paper, _holding(sweep))).verdict == "falsified"
    s = get("000:empirical-z60-deltanet-paper")
    assert set(s.perturb) == {"record"}
