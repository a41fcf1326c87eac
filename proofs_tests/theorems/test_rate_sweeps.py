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


def test_z60_is_falsified_as_printed_and_holds_at_the_swept_rate():
    """``000:empirical-z60-paper``: at Fig. 6's one rate (1e-4) both DeltaNets stay at chance with two seeds, each
    seed rejected alone (the counterexample); with the rate of 000's own sweep, DeltaNet [-1,1] reaches the training
    length and DeltaNet [0,1] does not, so the printed ordering holds as corrected. The stored record derives it."""
    s = get("000:empirical-z60-paper")
    assert s.verdict == "holds-as-corrected"
    assert s.corrected == rs.SWEEPS["000-z60"].corrected
    assert len(s.counterexample["seed_outcomes"]) >= 2
    assert all(o.startswith("partly reproduced") for o in s.counterexample["seed_outcomes"].values())
    r = s.check("quick")
    assert r.verdict == "holds-as-corrected" and r.corrected == s.corrected
    best = r.details["best_rates"]
    assert best["DeltaNet [-1,1]"][0] >= best["DeltaNet [0,1]"][0] + rs.MARGIN
    assert best["DeltaNet [-1,1]"][1] != 1e-4          # not at the printed rate: that is the correction


def _turned(sweep: dict, label: str, value: float) -> dict:
    out = copy.deepcopy(sweep)
    for r in out["runs"].values():
        if r.get("config_label") == label:
            r["test_accuracy"][str(r["config"]["train_len"][1])] = value
    return out


def test_a_sweep_that_does_not_separate_the_pair_leaves_the_printed_verdict():
    """The same sweep with DeltaNet [0,1] as good as DeltaNet [-1,1] at its best rate: the corrected statement
    fails, so the entry would stay ``falsified`` (as printed), with the sweep's evidence beside it."""
    paper, sweep = _load("000-z60-paper.json"), _load("000-z60-lr-sweep.json")
    assert rs.judge(paper, sweep).verdict == "holds-as-corrected"
    turned = _turned(sweep, "DeltaNet [0,1]", 1.0)
    r = rs.judge(paper, turned)
    assert r.verdict == "falsified" and "DeltaNet [0,1] 1.000" in r.evidence
    # just under the margin fails, at the margin holds (the comparison is >=, stated in the criterion)
    top = rs.best_rates(sweep["runs"])["DeltaNet [-1,1]"][0]
    assert rs.judge(paper, _turned(sweep, "DeltaNet [0,1]", top - rs.MARGIN + 1e-6)).verdict == "falsified"
    assert rs.judge(paper, _turned(sweep, "DeltaNet [0,1]", top - rs.MARGIN - 1e-6)).verdict == \
        "holds-as-corrected"


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
    without["runs"] = {k: v for k, v in paper["runs"].items() if v["config_label"] != "Mamba-like diagonal [0,1]"}
    r = rs.judge(without, sweep)
    assert r.verdict == "open" and "Mamba-like diagonal [0,1]" in r.evidence


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


def test_the_entrys_perturbation_is_the_sweep_turned_against_the_corrected_statement():
    """``holds-as-corrected``'s perturbation: the same paper-scale record with the sweep's DeltaNet [0,1] runs
    given DeltaNet [-1,1]'s best value; the check then says ``falsified`` (the printed statement's verdict), and the
    judge's outcome for the printed rate stays a rejection."""
    from lrnnkit.theorems.registry import run_check
    s = get("000:empirical-z60-paper")
    assert set(s.perturb) == {"sweep"}
    r = run_check(s.id, "quick", perturbed=True)
    assert r.verdict == "falsified" and "Rate sweep" in r.evidence
    assert r.details["judgement"]["outcome"].startswith("partly reproduced")
    assert rs.judge(_load("000-z60-paper.json"), s.perturb["sweep"]).verdict == "falsified"
