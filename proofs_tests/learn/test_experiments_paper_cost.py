"""What a paper-scale experiment needs (benchmarks/paper_scale_cost.py): the step time of a configuration comes from
its own training loop and the hours follow from it exactly; the RESULTS section names what ran (with the capped
verdict) and what each other experiment needs. CPU, a tiny configuration, a synthetic cost file."""
import json
import os
import sys

import pytest

from lrnnkit.learn.train import TrainConfig
from proofs_tests._paths import REPO

sys.path.insert(0, os.path.join(REPO, "benchmarks"))
sys.path.insert(0, REPO)
import paper_scale_cost as psc  # noqa: E402


def test_a_configuration_is_timed_on_its_own_loop_and_hours_follow_from_the_paper_steps():
    cfg = TrainConfig(task="parity", layer="diagonal", width=8, heads=2, steps=50_000, batch=4, train_len=(2, 6),
                      test_len=(6,), short_conv=False)
    r = psc.time_config(cfg, steps=40)   # 40 steps: the two runs' difference stands well above timing noise
    assert r["ms_per_step"] > 0 and r["paper_steps"] == 50_000
    # hours are the paper's steps at the stored step time, rounded to 3 decimals (the 1e-12 absorbs the float
    # division's last bit, not any rounding of the stored numbers)
    assert r["hours"] == pytest.approx(round(50_000 * r["ms_per_step"] / 3.6e6, 3), abs=1e-12)
    assert r["peak_mib"] is not None and r["peak_mib"] > 0


def test_both_loops_are_timed_in_one_run_and_the_minutes_on_two_gpus_follow():
    cfg = TrainConfig(task="parity", layer="diagonal", width=8, heads=2, steps=50_000, batch=4, train_len=(2, 6),
                      test_len=(6,), short_conv=False)
    r = psc.time_config(cfg, steps=60, loops=("host", "device"))
    assert r["host"]["ms_per_step"] > 0 and r["device"]["ms_per_step"] > 0
    assert (r["ms_per_step"], r["hours"]) == (r["device"]["ms_per_step"], r["device"]["hours"])   # the new loop's
    assert r["device"]["step_graph"] == "eager (cpu)" and r["host"]["step_graph"] is None
    # longest first onto the least loaded card: {3, 2, 2, 1} hours on 2 GPUs -> 3+1 and 2+2: 4 hours
    assert psc.makespan_minutes([1, 2, 3, 2], gpus=2) == 240.0
    cost = {"device": "t", "torch": "x", "steps_timed": 60, "loops": ["host", "device"], "experiments": {
        "e": {"rows": [r], "hours": r["hours"], "failed": 0}}}
    (row,) = psc.summary_rows(cost)
    assert len(row) == len(psc.headers(cost)) and "->" in row[2] and "->" in row[4]


def test_the_section_names_what_ran_capped_and_what_each_other_experiment_needs(tmp_path):
    cost = {"device": "test", "torch": "x", "steps_timed": 10, "experiments": {
        "000-parity": {"rows": [{"ms_per_step": 10.0, "paper_steps": 100_000, "hours": 0.278, "peak_mib": 5.0}],
                       "hours": 0.28, "failed": 0},
        "000-s5": {"rows": [{"ms_per_step": 6.0, "paper_steps": 100_000, "hours": 0.167, "peak_mib": 7.0}],
                   "hours": 0.17, "failed": 0}}}
    cp = tmp_path / "cost.json"
    cp.write_text(json.dumps(cost))
    # the capped 200 s runs of 2026-11-25, kept in 000-parity's paper file under "superseded" since the protocol
    # runs replaced them: a results file of those alone is a capped run
    stored = json.load(open(os.path.join(REPO, "benchmarks", "results", "learning", "000-parity-paper.json")))
    ran = tmp_path / "000-parity-paper-capped.json"
    from lrnnkit.learn.experiments import get_experiment
    judged = get_experiment("000-parity").judge_runs(stored["superseded"])       # the judge's, not made up here
    ran.write_text(json.dumps({**stored, "runs": stored["superseded"], "parts": {}, "judgement": judged}))
    out = tmp_path / "RESULTS.md"
    body = psc.record(str(cp), [str(ran)], "notes here", path=str(out))
    lines = {ln.split(" | ")[0].lstrip("| "): ln for ln in body.splitlines() if ln.startswith("| 000-")}
    assert "capped: open" in lines["000-parity"] and "partly reproduced" in lines["000-parity"]
    assert "not run: needs 0.17 GPU-hours" in lines["000-s5"]
    text = out.read_text()
    assert "<!-- BEGIN learning at paper scale -->" in text and "notes here" in text
    assert "Total: 0.5 GPU-hours" in text


def test_a_file_whose_runs_were_all_superseded_is_not_read_as_a_run(tmp_path):
    """000-parity's paper file holds superseded runs only (the one-state layer's, before its Mamba configurations
    trained Mamba's block): the section says so instead of failing on runs that are not there."""
    cost = {"device": "test", "torch": "x", "steps_timed": 10, "experiments": {
        "000-parity": {"rows": [{"ms_per_step": 10.0, "paper_steps": 100_000, "hours": 0.278, "peak_mib": 5.0}],
                       "hours": 0.28, "failed": 0}}}
    cp = tmp_path / "cost.json"
    cp.write_text(json.dumps(cost))
    stored = json.load(open(os.path.join(REPO, "benchmarks", "results", "learning", "000-parity-paper.json")))
    assert stored["runs"] == {} and stored["superseded"]
    body = psc.record(str(cp), [os.path.join(REPO, "benchmarks", "results", "learning", "000-parity-paper.json")],
                      path=str(tmp_path / "RESULTS.md"))
    line = next(ln for ln in body.splitlines() if ln.startswith("| 000-parity"))
    assert f"not run on its current configurations: {len(stored['superseded'])} superseded runs kept" in line
    assert "registry: open" in line


def test_protocol_timing_takes_each_configuration_as_the_protocol_runs_it():
    """``--protocol``: one configuration each, as :func:`lrnnkit.learn.protocols.follow` has it (its first seed and
    rate): 003-copy's fixed-point configurations at the paper's training cap (100), the baseline unchanged; without
    it the ``--scale paper`` runs."""
    from lrnnkit.learn.experiments import get_experiment
    from lrnnkit.learn.protocols import follow
    exp = get_experiment("003-copy")
    got = psc._configurations("003-copy", exp, True)
    assert [lab for lab, _ in got] == [lab for lab, _ in exp.runs("paper")]
    first = {}
    for lab, c in follow("003-copy"):
        first.setdefault(lab, c)
    assert all(c == first[lab] for lab, c in got)
    assert {c.fp_train_iters for _, c in got if c.layer == "fixed-point"} == {100}
    assert psc._configurations("003-copy", exp, False) == exp.runs("paper")


def test_the_timing_keeps_the_fastest_of_two_pairs_and_refuses_a_difference_that_is_not_positive(monkeypatch):
    """ms/step = (fastest long run - fastest short run) / steps over REPEATS pairs: one slow short run (a stall)
    no longer makes it negative; when every pair's difference is not positive the row is an error, not a time.
    The clock is faked: each train() call advances it by its step count x 1 ms, plus a 50 ms stall where planted."""
    import lrnnkit.learn.train as tr
    clock = [0.0]
    stalls = []

    def fake_train(cfg, out, evaluate_at_end=False):
        clock[0] += cfg.steps * 1e-3 + (stalls.pop(0) if stalls else 0.0)
        return {"step_graph": "eager (cpu)"}
    monkeypatch.setattr(tr, "train", fake_train)
    monkeypatch.setattr(psc.time, "perf_counter", lambda: clock[0])
    cfg = TrainConfig(task="parity", layer="diagonal", steps=100000, device="cpu")
    stalls[:] = [0.0, 0.05]          # the warm-up, then a stall in the first timed short run
    r = psc._time_loop(cfg, 10)
    assert r["ms_per_step"] == pytest.approx(1.0, abs=0.01) and r["hours"] == pytest.approx(100000 / 3.6e6, abs=1e-3)
    monkeypatch.setattr(tr, "train", lambda cfg, out, evaluate_at_end=False: (
        clock.__setitem__(0, clock[0] + (0.1 if cfg.steps == psc.WARM else 0.001)), {})[1])
    with pytest.raises(RuntimeError, match="timing not positive"):
        psc._time_loop(cfg, 10)


def test_labels_time_only_the_configurations_that_hold_one(monkeypatch, capsys, tmp_path):
    """``--labels S3`` times 001's S3 configurations and no other (the rows are faked: which configurations are
    timed is the question, not how)."""
    timed = []

    def fake(cfg, steps, loops=(None,)):
        timed.append((cfg.task, cfg.n_h, cfg.batch))
        return {"paper_steps": cfg.steps, "ms_per_step": 1.0, "hours": 0.0, "peak_mib": None}
    monkeypatch.setattr(psc, "time_config", fake)
    out = tmp_path / "c.json"
    assert psc.main(["--device", "cpu", "--protocol", "--only", "001-deltaproduct", "--labels", "S3",
                     "--loops", "device", "--json", str(out)]) == 0
    assert sorted(n for _, n, _ in timed) == [1, 2, 3, 4] and {t for t, _, _ in timed} == {"group:S3"}
    rows = json.loads(out.read_text())["experiments"]["001-deltaproduct"]["rows"]
    assert [r["label"] for r in rows] == [f"S3 DeltaProduct n_h={n} [-1,1]" for n in (1, 2, 3, 4)]
    assert {r["batch"] for r in rows} == {2048}          # the protocol's S3 batch


def test_the_gemm_floor_counts_the_linear_weights_and_the_papers_tokens(capsys):
    """6 P N FLOPs at the rate: P the nn.Linear weights, checked against a second count (every 2-D parameter but the
    embedding's: norms are 1-D, short convolutions 3-D), N = steps x batch x the mean training length."""
    import torch
    from lrnnkit.learn.train import build
    cfg = TrainConfig(task="parity", layer="deltaproduct", width=16, heads=2, steps=1000, batch=8, train_len=(2, 6),
                      test_len=(6,), short_conv=True, device="cpu")
    f = psc.gemm_floor(cfg, 1e12)
    _, model, _ = build(cfg)
    emb = {id(m.weight) for m in model.modules() if isinstance(m, torch.nn.Embedding)}
    assert f["matmul_params"] == sum(p.numel() for p in model.parameters() if p.dim() == 2 and id(p) not in emb) > 0
    assert f["tokens"] == 1000 * 8 * 4
    assert f["hours"] == pytest.approx(6 * f["matmul_params"] * 32_000 / 1e12 / 3600, rel=1e-12)
    # the printed table: one row per configuration, and the total it returns
    total = psc.print_gemm_floor(["001-deltaproduct"], True, "S3 DeltaProduct n_h=1")
    out = capsys.readouterr().out
    assert "S3 DeltaProduct n_h=1 [-1,1]" in out and f"total: {total:.2f} GPU-hours" in out and total > 0
