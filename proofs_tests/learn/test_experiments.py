"""The experiments' judges (lrnnkit.learn.experiments) read what the papers report: 000's Chomsky tasks the scaled
accuracy over the test mixture (000, Fig. 4 caption) where a run evaluated one, else the per-length mean."""
from lrnnkit.learn.experiments import get_experiment

LABELS = ["Mamba-like diagonal [0,1]", "Mamba-like diagonal [-1,1]", "DeltaNet [0,1]", "DeltaNet [-1,1]"]


def _result(per_length: float, mixture=None) -> dict:
    r = {"scaled_accuracy": {"40": per_length, "256": per_length}}
    if mixture is not None:
        r["test_mix"] = {"words": 8192, "lengths": [40, 256], "scaled_accuracy": mixture}
    return r


def test_the_parity_judge_reads_the_mixture_and_keeps_the_per_length_mean():
    judge = get_experiment("000-parity").judge
    # per-length means say [-1,1] solves parity; the mixtures (what 000 reports) say it does not
    res = {k: _result(1.0 if "[-1,1]" in k else 0.0, 0.5 if "[-1,1]" in k else 0.0) for k in LABELS}
    out = judge(res)
    assert out["measured"]["scaled_accuracy_mean_40_256"]["DeltaNet [-1,1]"] == 0.5
    assert out["measured"]["scaled_accuracy_mean_over_test_lengths"]["DeltaNet [-1,1]"] == 1.0
    assert out["outcome"] == "partly reproduced"       # [0,1] at chance holds, [-1,1] >= 0.9 does not
    assert out["read_on"]["DeltaNet [-1,1]"] == "8192 words of lengths uniform in 40..256"
    # without a mixture the judge reads the per-length mean, as before, and says nothing of a mixture
    out = judge({k: _result(1.0 if "[-1,1]" in k else 0.0) for k in LABELS})
    assert out["outcome"] == "reproduced" and "read_on" not in out


def test_the_extension_judge_reads_the_mixture():
    judge = get_experiment("000-modarith").judge
    res = {k: _result(0.9 if "[-1,1]" in k else 0.2, 0.3) for k in LABELS}     # mixtures equal: no gain
    out = judge(res)
    assert out["outcome"] == "not reproduced" and set(out["measured"]["scaled_accuracy_mean"].values()) == {0.3}


def test_paper_scale_000_runs_evaluate_the_mixture_and_004_runs_left_to_right():
    for name in ("000-parity", "000-modarith", "000-modarith-brackets"):
        assert {c.test_mix for _, c in get_experiment(name).runs("paper")} == {(8192, 40, 256)}
    runs = dict(get_experiment("004-bilinear").runs("paper"))
    cfg = runs["bilinear, modular arithmetic (left to right) M=5"]
    assert cfg.task == "mod-arith-lr:5" and cfg.layers == 1


def test_paper_scale_000_runs_have_the_papers_test_words():
    from lrnnkit.learn.protocols import differences
    for name in ("000-parity", "000-modarith", "000-modarith-brackets"):
        assert not [d for d in differences(name) if d.field == "test_words"]


def test_004_below_paper_scale_keeps_the_configuration_its_stored_results_ran():
    runs = dict(get_experiment("004-bilinear").runs("small"))
    assert runs["bilinear, modular arithmetic (precedence) M=5"].task == "mod-arith:5"
