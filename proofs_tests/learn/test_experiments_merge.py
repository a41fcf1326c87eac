"""Runs of one experiment merged from several GPU calls (issue 13): the judges see one run per configuration (the
one with the most steps), named sub-claims (001 Fig. 3's S3 panel) are judged on their own, and the merge keeps
every run with its call. Synthetic run records, no training: the judging and bookkeeping only."""
import json
import os
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from lrnnkit.learn.experiments import GAP, best_per_config, get_experiment
from proofs_tests._paths import REPO

ROOT = REPO
S3 = ["S3 DeltaProduct n_h=1 [-1,1]", "S3 DeltaProduct n_h=2 [-1,1]"]


def _res(acc512: float, steps: int, **kw) -> dict:
    return {"steps": steps, "test_accuracy": {"128": acc512, "256": acc512, "512": acc512}, **kw}


def test_best_per_config_takes_the_run_with_most_steps():
    runs = {S3[1]: _res(0.17, 105), S3[1] + " (call s3)": _res(0.99, 3278, config_label=S3[1]),
            S3[1] + " (call anchor)": _res(0.36, 1772, config_label=S3[1]), S3[0]: _res(0.17, 155)}
    best = best_per_config(runs)
    assert set(best) == set(S3)
    assert best[S3[1]]["steps"] == 3278 and best[S3[0]]["steps"] == 155


@settings(max_examples=60, deadline=None)
@given(st.floats(0, 1), st.floats(0, 1))
def test_s3_part_judge_is_the_stated_criterion(two, one):
    """reproduced iff n_h=2 >= 0.9, n_h=1 < 0.9 and the gap >= GAP (all at the longest test length)."""
    j = get_experiment("001-deltaproduct").judge_part("S3", {S3[0]: _res(one, 4000), S3[1]: _res(two, 3000)})
    two, one = round(two, 4), round(one, 4)   # the judge reads the accuracies rounded to 4 digits
    want = two >= 0.9 and one < 0.9 and two - one >= GAP
    assert (j["outcome"] == "reproduced") == want


def test_s3_part_judge_on_the_recorded_numbers_and_a_near_miss():
    e = get_experiment("001-deltaproduct")
    assert e.judge_part("S3", {S3[0]: _res(0.3591, 4000), S3[1]: _res(0.9938, 3278)})["outcome"] == "reproduced"
    # both sides of 0.9 but close together: not the paper's picture
    assert e.judge_part("S3", {S3[0]: _res(0.89, 4000), S3[1]: _res(0.91, 3278)})["outcome"] != "reproduced"
    # the grid's short runs alone: nothing learned
    assert e.judge_part("S3", {S3[0]: _res(0.171, 155), S3[1]: _res(0.1697, 105)})["outcome"] != "reproduced"


def _call(tmp_path, name, runs):
    d = tmp_path / name / "runs" / "001-deltaproduct"
    d.mkdir(parents=True)
    for i, (label, res) in enumerate(runs.items()):
        (d / f"{i}.json").write_text(json.dumps({"experiment": "001-deltaproduct", "label": label, "status": "ok",
                                                 "config": {"n_h": 2}, "result": res}))
    return str(tmp_path / name)


def test_import_runs_tags_a_second_call_and_summarise_judges_the_part(tmp_path):
    sys.path.insert(0, ROOT)
    try:
        from benchmarks import bench_learning as bl
    finally:
        sys.path.remove(ROOT)
    into = str(tmp_path / "merged")
    a = _call(tmp_path, "a", {S3[0]: _res(0.17, 155), S3[1]: _res(0.17, 105)})
    b = _call(tmp_path, "b", {S3[0]: _res(0.36, 4000), S3[1]: _res(0.99, 3278)})
    assert bl.import_runs(a, into, {"call": "grid", "commit": "x"}) == 2
    assert bl.import_runs(b, into, {"call": "s3", "commit": "y"}) == 2
    s = bl.summarise(into, "small")
    doc = json.load(open(os.path.join(into, "001-deltaproduct.json")))
    assert set(doc["runs"]) == set(S3) | {k + " (call s3)" for k in S3}
    assert {r["provenance"]["call"] for r in doc["runs"].values()} == {"grid", "s3"}
    assert set(doc["calls"]) == {"grid", "s3"}
    assert doc["parts"]["S3"]["judgement"]["outcome"] == "reproduced"
    assert s["experiments"]["001-deltaproduct"]["parts"]["S3"]["outcome"] == "reproduced"
    assert doc["judgement"]["outcome"].startswith("incomplete (2 of 12 configurations")
