"""The judgements stored in the learning results files agree with the experiments' judges as the code defines them
now (:mod:`lrnnkit.learn.experiments`): the registry's empirical entries read only the stored judgement
(:mod:`lrnnkit.theorems.empirical`), so a judge that changed, or a results file edited by hand, shows up here."""
import copy

import pytest

from lrnnkit.theorems.empirical import _experiment_files, _stored

pytest.importorskip("torch")
from lrnnkit.learn.experiments import best_per_config, get_experiment  # noqa: E402  (torch: the trainable layers)

FILES = [(p, r) for p, r in _experiment_files() if r.get("judgement") and not r.get("failed")]
PARTS = [(p, r, part) for p, r in _experiment_files() for part, pj in (r.get("parts") or {}).items()
         if pj.get("judgement") and not any(k in pj.get("configurations", []) for k in (r.get("failed") or {}))]


def _id(x):
    return x[1]["name"] + "-" + x[1]["scale"] + ("-" + x[2] if len(x) > 2 else "")


def test_there_are_judged_files():
    assert FILES and PARTS


@pytest.mark.parametrize("entry", FILES, ids=[_id(x) for x in FILES])
def test_stored_judgement_is_the_judges(entry):
    """The judge's outcome on the stored runs; where a configuration of the scale has no run, the summariser's
    ``incomplete (N of M configurations finished)`` with N and M counted afresh."""
    path, rec = entry
    e = get_experiment(rec["name"])
    labels = [lab for lab, _ in e.runs(rec["scale"])]
    n_have = sum(lab in best_per_config(rec["runs"]) for lab in labels)
    if n_have < len(labels):
        assert rec["judgement"]["outcome"] == f"incomplete ({n_have} of {len(labels)} configurations finished)", path
    else:
        assert e.judge_runs(rec["runs"])["outcome"] == rec["judgement"]["outcome"], path


@pytest.mark.parametrize("entry", PARTS, ids=[_id(x) for x in PARTS])
def test_stored_part_judgement_is_the_judges(entry):
    path, rec, part = entry
    got = get_experiment(rec["name"]).judge_part(part, rec["runs"])["outcome"]
    assert got == rec["parts"][part]["judgement"]["outcome"], (path, part)


def test_an_edited_file_is_caught():
    """The check can fail: one configuration's accuracies zeroed changes some judge's outcome."""
    changed = 0
    for path, rec in FILES:
        runs = copy.deepcopy(rec["runs"])
        for r in runs.values():
            for k, v in list(r.items()):
                if "acc" in k and isinstance(v, (int, float)):
                    r[k] = 0.0
                elif "acc" in k and isinstance(v, dict):
                    r[k] = {kk: 0.0 for kk in v}
        try:
            out = get_experiment(rec["name"]).judge_runs(runs)["outcome"]
        except (KeyError, TypeError, ValueError, IndexError):
            continue
        changed += out != rec["judgement"]["outcome"]
    assert changed


def test_stored_reads_the_outcome():
    assert _stored({"outcome": "reproduced", "measured": {}}, "x", "f.json", "w").verdict == "holds"
    assert _stored({"outcome": "not reproduced"}, "x", "f.json", "w").verdict == "open"
    assert _stored({}, "x", "f.json", "w").verdict == "open"


# ------------------------------------------------------------------------------------------------ capped runs
def _empirical_with_perturbation():
    from lrnnkit.learn.experiments import EXPERIMENTS
    from lrnnkit.theorems import all_statements, empirical
    from lrnnkit.theorems.registry import OWN
    empirical.JUDGES.update(EXPERIMENTS)
    out = [s for s in all_statements() if s.kind == "empirical" and s.paper != OWN and s.perturb is not None]
    assert out
    return out


def _capped(rec: dict, how: str) -> dict:
    """``rec`` with every run capped the way ``how`` says (what bench_learning.py --cap or max_seconds leave)."""
    runs = copy.deepcopy(rec["runs"])
    for r in runs.values():
        if how == "max_seconds":            # a cap that stopped the run
            r["config"]["max_seconds"] = 600.0
            r["stopped_early"] = True
        elif how == "safety_cap":           # a cap under which every configured step ran: not a cap
            r["config"]["max_seconds"] = 600.0
        elif how == "auto_steps":
            r["config"]["auto_steps"] = True
        elif how == "fewer_steps":
            r["config"]["steps"] = r["steps"] + 1
        elif how == "stopped_early":
            r["stopped_early"] = True
    return {**rec, "runs": runs}


@pytest.mark.parametrize("how", ["max_seconds", "auto_steps", "fewer_steps", "stopped_early"])
def test_capped_paper_scale_runs_that_the_judge_rejects_stay_open(how):
    """The perturbation (the paper's scale, uncapped, numbers turned against the claim) is ``falsified``; the same
    record with its runs capped in wall-clock time or short of their configured steps is not the paper's
    experiment: ``open``, the evidence naming the capped runs."""
    for s in _empirical_with_perturbation():
        turned = s.perturb["record"]
        assert s.check("quick", record=turned).verdict == "falsified", s.id
        r = s.check("quick", record=_capped(turned, how))
        assert r.verdict == "open", (s.id, r.evidence)
        assert "Not at the paper's scale" in r.evidence and "capped" in r.evidence, (s.id, r.evidence)


def test_a_safety_cap_that_did_not_bind_leaves_a_paper_scale_verdict_standing():
    """A GPU call's wall-clock limit under which every run trained all its configured steps did not change the
    runs: the perturbed record stays ``falsified``, as without the limit."""
    for s in _empirical_with_perturbation():
        r = s.check("quick", record=_capped(s.perturb["record"], "safety_cap"))
        assert r.verdict == "falsified", (s.id, r.evidence)


def test_capped_runs_reads_the_deciding_run_of_each_configuration():
    from lrnnkit.theorems.empirical import capped_runs
    full = {"steps": 100, "stopped_early": False, "config": {"steps": 100, "max_seconds": None, "auto_steps": False}}
    short = {"steps": 40, "stopped_early": True, "config_label": "a",
             "config": {"steps": 100, "max_seconds": 60, "auto_steps": False}}
    sized = {"steps": 70, "stopped_early": False, "config": {"steps": 70, "max_seconds": 60, "auto_steps": True}}
    assert capped_runs({"a": full}) == []
    assert capped_runs({"a (call 2)": short}) == [("a", "40 of its 100 configured steps, a 60 s wall-clock cap")]
    assert capped_runs({"a": full, "a (call 2)": short}) == []          # the run with the most steps speaks
    assert capped_runs({"b": sized}) == [("b", "a 60 s wall-clock cap, its schedule sized to the cap "
                                               "(auto_steps: 70 steps)")]
    assert capped_runs({"c": {"steps": 5}}) == [("c", "no step counts recorded")]
    # a safety cap of a GPU call under which the run trained every configured step did not change the run
    safe = {"steps": 100, "stopped_early": False, "config": {"steps": 100, "max_seconds": 500, "auto_steps": False}}
    assert capped_runs({"d": safe}) == []


def test_a_paper_scale_verdict_needs_the_papers_protocol():
    """000-s5's swaps part ran at the paper's settings to its end and the judge says "reproduced", but with one seed,
    100k of the paper's 312,500 steps, a short convolution the paper left out and one layer where the paper's [0,1]
    model had five: ``open``, the evidence naming those differences. The same record marked as following the
    protocol derives ``holds``; its perturbation (numbers turned) ``falsified``; a file that records no protocol
    ``open``."""
    sid = "000:empirical-s5-swaps-paper"
    (s,) = [x for x in _empirical_with_perturbation() if x.id == sid]
    (path, rec) = [(p, r) for p, r in _experiment_files() if r["name"] == "000-s5" and r["scale"] == "paper"][0]
    r = s.check("quick", record=rec)
    assert r.verdict == "open" and "Not the paper's protocol" in r.evidence and "seeds: 1, paper: 3" in r.evidence
    assert s.verdict == "open"
    follows = copy.deepcopy(rec)
    follows["parts"]["swaps"]["protocol"] = {"follows": True, "statement": "as the paper"}
    assert s.check("quick", record=follows).verdict == "holds"
    assert s.check("quick", record=s.perturb["record"]).verdict == "falsified"
    silent = copy.deepcopy(rec)
    del silent["parts"]["swaps"]["protocol"], silent["protocol"]
    r = s.check("quick", record=silent)
    assert r.verdict == "open" and "does not record it" in r.evidence
