"""Paper 003's learning experiments as data (lrnnkit.learn.experiments_003): every entry is wrapped by the
experiments registry, its runs at each scale are fixed-point layers beside the baselines the paper names (Mamba's
block at scale paper, lrnnkit's Mamba-like diagonal layer below it; DeltaNet), the iteration measure reads the layers' own counters, and the judges turn synthetic numbers
into the outcome the criterion states."""
import pytest

torch = pytest.importorskip("torch")

from lrnnkit.learn.experiments import EXPERIMENTS  # noqa: E402
from lrnnkit.learn.experiments_003 import EXPERIMENTS_003, fixed_point_iterations  # noqa: E402
from lrnnkit.learn.tasks import make_task  # noqa: E402
from lrnnkit.learn.train import TrainConfig, train  # noqa: E402

SPECS = {s["name"]: s for s in EXPERIMENTS_003}


@pytest.mark.parametrize("name", sorted(SPECS))
def test_each_entry_is_registered_with_runs_at_every_scale(name):
    spec = SPECS[name]
    assert spec["paper"] == "003" and name.startswith("003-") and EXPERIMENTS[name].claim == spec["claim"]
    for scale in ("tiny", "small", "paper"):
        runs = spec["runs"](scale)
        labels = [label for label, _ in runs]
        assert len(set(labels)) == len(labels), (name, scale)
        mamba = "mamba" if scale == "paper" else "diagonal"      # the scale's Mamba model (learn.mamba_configs)
        assert {cfg.layer for _, cfg in runs} <= {"fixed-point", mamba, "deltanet"}    # the baselines of 003
        assert any(cfg.layer == "fixed-point" for _, cfg in runs)
        for label, cfg in runs:
            assert ("fixed-point" in label) == (cfg.layer == "fixed-point"), label
            assert ("Mamba [" in label) == (cfg.layer == "mamba") and ("Mamba-like" in label) == (cfg.layer ==
                                                                                               "diagonal"), label


def _iterations(a5_4, a5_8, copy_long):
    return {"A5 fixed-point r=2 trained at 4": {"fixed_point_iterations": {"4": a5_4, "8": a5_4 + 1}},
            "A5 fixed-point r=2 trained at 8": {"fixed_point_iterations": {"8": a5_8, "16": a5_8 + 1}},
            "copy fixed-point r=2": {"fixed_point_iterations": {"6": 4, "12": copy_long}}}


@pytest.mark.parametrize("a5_4,a5_8,copy_long,outcome", [(3, 6, 2, "reproduced"), (6, 3, 2, "partly reproduced"),
                                                         (6, 3, 9, "not reproduced")])
def test_the_iterations_judge(a5_4, a5_8, copy_long, outcome):
    """Reproduced: A5's iterations at the training length grow with it, and copying needs fewer iterations at the
    longest test length than the shortest test length has tokens."""
    judged = SPECS["003-iterations"]["judge"](_iterations(a5_4, a5_8, copy_long))
    assert judged["outcome"] == outcome


def test_iterations_are_read_from_the_fixed_point_layers():
    cfg = TrainConfig(task="parity", layer="fixed-point", n_h=2, width=8, heads=2, block_size=2, steps=1, batch=4,
                      train_len=(3, 6), test_len=(4, 6), eval_n=8, short_conv=False)
    model = train(cfg).pop("_model")
    its = fixed_point_iterations(model, make_task("parity"), cfg)["fixed_point_iterations"]
    assert set(its) == {"4", "6"} and all(1 <= n <= 100 for n in its.values())
    assert model.training                               # the measure leaves the mode as it found it
    diag = TrainConfig(task="parity", layer="diagonal", width=8, heads=2, steps=1, batch=4, train_len=(3, 6),
                       test_len=(4,), eval_n=8, short_conv=False)
    model = train(diag).pop("_model")
    assert fixed_point_iterations(model, make_task("parity"), diag)["fixed_point_iterations"] == {"4": None}
