"""Runs of one experiment merged from several GPU calls: the judges see one run per configuration (the
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


def test_import_runs_keeps_a_protocol_runs_configuration_when_a_second_call_repeats_its_label(tmp_path):
    """A protocol run's label names its rate and seed (``S3 ... (lr 0.001, seed 0)``) and its result the
    configuration (``config_label``); a second call's run of the same label is tagged ``(call NAME)`` and must stay
    a run of that configuration, so the judge sees it (found: 004's diagonal runs of a later call were judged as a
    configuration of their own, and the experiment read as incomplete)."""
    bl = _bench()
    into = str(tmp_path / "merged")
    lab = S3[1] + " (lr 0.001, seed 0)"
    a = _call(tmp_path, "a", {lab: _res(0.17, 105, config_label=S3[1])})
    b = _call(tmp_path, "b", {lab: _res(0.99, 3278, config_label=S3[1])})
    bl.import_runs(a, into, {"call": "first", "commit": "x"})
    bl.import_runs(b, into, {"call": "second", "commit": "y"})
    bl.summarise(into, "small")
    doc = json.load(open(os.path.join(into, "001-deltaproduct.json")))
    assert doc["runs"][lab + " (call second)"]["config_label"] == S3[1]
    assert best_per_config(doc["runs"])[S3[1]]["steps"] == 3278


S4 = ["S4 DeltaProduct n_h=1 [-1,1]", "S4 DeltaProduct n_h=2 [-1,1]"]


@settings(max_examples=60, deadline=None)
@given(st.floats(0, 1), st.floats(0, 1))
def test_s4_part_judge_is_the_stated_criterion(two, one):
    """The S4 panel (001 Fig. 3: n_h = 2 extrapolates on S4) has the S3 panel's criterion, on S4's runs only."""
    e = get_experiment("001-deltaproduct")
    runs = {S4[0]: _res(one, 1500), S4[1]: _res(two, 1500), S3[0]: _res(0.0, 1500), S3[1]: _res(1.0, 1500)}
    j = e.judge_part("S4", runs)
    two, one = round(two, 4), round(one, 4)
    assert (j["outcome"] == "reproduced") == (two >= 0.9 and one < 0.9 and two - one >= GAP)
    assert set(j["measured"]["token_accuracy_at_longest_length"]) == set(S4)


def test_s4_part_on_the_recorded_cells_is_not_reproduced():
    """lrnnkit's layer after 1,500 steps: S4 n_h = 2 at 0.195 does not extrapolate; the claim is not reproduced."""
    j = get_experiment("001-deltaproduct").judge_part("S4", {S4[0]: _res(0.052, 1500), S4[1]: _res(0.1951, 1500)})
    assert j["outcome"] != "reproduced"


def _bench():
    sys.path.insert(0, ROOT)
    try:
        from benchmarks import bench_learning as bl
    finally:
        sys.path.remove(ROOT)
    return bl


def _cell(kind, group, n_h, acc512, steps=1500):
    return {"kind": kind, "group": group, "n_h": n_h, "seed": 0, "ms_step": 14.0, "steps": steps, "wall": 21.0,
            "first_step": None, "first_s": None, "final": {"128": min(1.0, acc512 + 0.05), "256": acc512,
                                                           "512": acc512},
            "curve": [[50, 0.7, 0.18], [100, 1.4, 0.2]], "over": {}}


def _layer_vs_fla(tmp_path, cells, name="fig3.json"):
    p = tmp_path / name
    p.write_text(json.dumps({"device": "NVIDIA H100 80GB HBM3", "torch": "2.11", "fla": "0.6.0", "fig3": cells}))
    return str(p)


def test_import_layer_vs_fla_ours_cells_become_runs_with_provenance(tmp_path):
    from lrnnkit.learn.train import TrainConfig
    bl = _bench()
    src = _layer_vs_fla(tmp_path, [_cell("fla", "S3", 2, 0.98), _cell("ours", "S3", 2, 0.92),
                                   _cell("ours", "S3", 1, 0.34), _cell("fla", "S3", 1, 0.34)])
    into = str(tmp_path / "m")
    pv = {"call": "fig3-6", "commit": "4419d93", "command": "python3 benchmarks/bench_layer_vs_fla.py --parts fig3"}
    assert bl.import_layer_vs_fla(src, into, pv) == 4
    ours = sorted(os.listdir(os.path.join(into, "runs", "001-deltaproduct")))
    assert len(ours) == 2   # fla's cells are not runs of 001-deltaproduct
    for f in ours:
        rec = json.load(open(os.path.join(into, "runs", "001-deltaproduct", f)))
        assert rec["label"] in S3 and rec["status"] == "ok"
        assert rec["provenance"] == pv and rec["result"]["provenance"] == pv
        res = rec["result"]
        assert res["source"]["kind"] == "ours" and res["source"]["file"].endswith("fig3.json")
        assert res["source"]["layer"] == "lrnnkit.layers.DeltaProductLayer"
        cfg = TrainConfig.from_json(dict(res["config"]))   # the learning format's config, valid as such
        assert (cfg.task, cfg.layer, cfg.width, cfg.heads, cfg.head_dim, cfg.batch) == ("group:S3", "deltaproduct",
                                                                                        384, 12, 32, 512)
        assert cfg.n_h == int(rec["label"].split("n_h=")[1][0]) and tuple(cfg.test_len) == (128, 256, 512)
        assert res["steps"] == cfg.steps == 1500 and res["test_accuracy"]["512"] in (0.92, 0.34)
    fla = sorted(os.listdir(os.path.join(into, "runs", "001-fla-anchor")))
    assert len(fla) == 2
    bl.summarise(into, "small")
    doc = json.load(open(os.path.join(into, "001-deltaproduct.json")))
    assert doc["parts"]["S3"]["judgement"]["outcome"] == "reproduced"
    assert set(doc["calls"]) == {"fig3-6"}
    cmp = json.load(open(os.path.join(into, "001-fla-anchor.json")))   # fla beside ours from the same call
    assert {k for k in cmp["runs"] if k.startswith("lrnnkit ")} == {"lrnnkit " + k for k in S3}
    assert cmp["kind"] == "comparison"


def test_superseded_runs_are_kept_and_not_judged(tmp_path):
    """Runs of an earlier layer with more steps would speak for their configurations; superseded, they are kept
    under ``superseded`` (with their call) and the judge sees the current layer's runs only; unpacking the written
    file keeps them superseded."""
    bl = _bench()
    into = str(tmp_path / "m")
    old = _call(tmp_path, "old", {S3[0]: _res(0.36, 4000), S3[1]: _res(0.99, 3278)})
    bl.import_runs(old, into, {"call": "s3", "commit": "8bbe309"})
    src = _layer_vs_fla(tmp_path, [_cell("ours", "S3", 1, 0.34), _cell("ours", "S3", 2, 0.5)])
    bl.summarise(into, "small")
    assert json.load(open(os.path.join(into, "001-deltaproduct.json")))["parts"]["S3"]["judgement"][
        "outcome"] == "reproduced"   # the old runs alone
    assert bl.supersede(into, "001-deltaproduct", {"s3"}, "earlier layer") == 2
    assert bl.import_layer_vs_fla(src, into, {"call": "fig3-6"}) == 2
    bl.summarise(into, "small")
    doc = json.load(open(os.path.join(into, "001-deltaproduct.json")))
    assert set(doc["runs"]) == set(S3) and {r["provenance"]["call"] for r in doc["runs"].values()} == {"fig3-6"}
    assert set(doc["superseded"]) == {k + " (call s3)" for k in S3}
    assert all(r["superseded"] == "earlier layer" for r in doc["superseded"].values())
    assert set(doc["superseded_calls"]) == {"s3"} and set(doc["calls"]) == {"fig3-6"}
    assert doc["parts"]["S3"]["judgement"]["outcome"] != "reproduced"   # n_h = 2 at 0.5 now speaks
    again = str(tmp_path / "again")
    assert bl.unpack_results(into, again, {"call": "x"}) == 4
    bl.summarise(again, "small")
    doc2 = json.load(open(os.path.join(again, "001-deltaproduct.json")))
    assert doc2["runs"] == doc["runs"] and doc2["superseded"] == doc["superseded"]


def test_supersede_by_label_keeps_the_other_configurations_of_a_call(tmp_path):
    """``--supersede EXPERIMENT=CALL --labels SUBSTRING``: of one call's runs only the configurations whose label
    holds the substring are superseded (000-z60's one-state Mamba-like runs shared their calls with the DeltaNets,
    which stay judged); without ``--labels`` every run of the call is."""
    bl = _bench()
    into = str(tmp_path / "m")
    bl.import_runs(_call(tmp_path, "c", {S3[0]: _res(0.36, 4000), S3[1]: _res(0.99, 3278)}), into, {"call": "c"})
    assert bl.main(["--into", into, "--supersede", "001-deltaproduct=c", "--labels", "n_h=1 [",
                    "--reason", "earlier layer"]) == 0
    bl.summarise(into, "small")
    doc = json.load(open(os.path.join(into, "001-deltaproduct.json")))
    assert set(doc["runs"]) == {S3[1]} and set(doc["superseded"]) == {S3[0] + " (call c)"}
    assert bl.supersede(into, "001-deltaproduct", {"c"}, "all of it") == 1       # the rest of the call
    assert bl.supersede(into, "001-deltaproduct", {"c"}, "again") == 0           # superseded once


def test_unpacking_leaves_a_rate_sweeps_file_out_of_the_experiments_runs(tmp_path):
    """A learning-rate sweep's results file (``kind: lr-sweep``) names its experiment but is not its record: the
    committed results unpacked for a merge give the experiment's own runs only (found: 000-z60's re-summarised
    record had taken in the sweep's 1e-2 .. 5e-4 runs)."""
    bl = _bench()
    res = tmp_path / "results"
    res.mkdir()
    own = {"name": "001-deltaproduct", "scale": "paper", "runs": {S3[0]: _res(0.36, 4000)}}
    sweep = {"name": "001-deltaproduct", "scale": "paper", "kind": "lr-sweep", "runs": {S3[1]: _res(0.99, 3278)}}
    (res / "001-deltaproduct-paper.json").write_text(json.dumps(own))
    (res / "001-deltaproduct-lr-sweep.json").write_text(json.dumps(sweep))
    into = str(tmp_path / "m")
    assert bl.unpack_results(str(res), into, {"call": "x"}, scale="paper") == 1
    bl.summarise(into, "paper")
    assert set(json.load(open(os.path.join(into, "001-deltaproduct.json")))["runs"]) == {S3[0]}


def test_import_layer_vs_fla_rejects_a_file_without_cells(tmp_path, capsys):
    bl = _bench()
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"race": []}))
    rc = bl.main(["--import-layer-vs-fla", str(bad), "--into", str(tmp_path / "m"), "--provenance",
                  '{"call": "c"}'])
    err = capsys.readouterr().err
    assert rc == 2 and "fig3" in err and "Traceback" not in err


def test_over_training_curves_need_every_runs_evaluations_and_plot(tmp_path):
    """Runs that kept evaluations during training are drawn over training (step, accuracy at the longest length),
    grouped by configuration; one run without them and the summary falls back to accuracy against length."""
    bl = _bench()
    from lrnnkit.learn.evaluate import plot_over_training

    def run(seed, accs, evaluated=True):
        evs = [{"step": 100 * (i + 1), "test_accuracy": {"40": 1.0, "500": a}} for i, a in enumerate(accs)]
        return {"config_label": "Sum(5)", "config": {"seed": seed},
                "test_accuracy": {"40": 1.0, "500": accs[-1]}, **({"evaluations": evs} if evaluated else {})}
    ok = {"a": run(0, [0.5, 0.9]), "b": run(1, [0.7, 0.8])}
    over = bl._over_training(ok)
    assert over == {"Sum(5)": {"a": [(100, 0.5), (200, 0.9)], "b": [(100, 0.7), (200, 0.8)]}}
    assert bl._over_training({**ok, "c": run(2, [0.1, 0.2], evaluated=False)}) == {}
    path = str(tmp_path / "over.png")
    plot_over_training(over, path, title="t")
    with open(path, "rb") as fh:
        assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
