"""lrnnkit.learn.mamba_configs: the model that stands for a paper's Mamba at each scale (Mamba's block at scale
paper, the one-state Mamba-like layer below) and its labels in every experiment (the label lookup the judges, parts,
protocols and the registry read a configuration through, :func:`lrnnkit.run_records.mamba_key`, is tested in
proofs_tests/test_run_records.py)."""
import pytest

pytest.importorskip("torch")

from lrnnkit.learn.experiments import EXPERIMENTS, SCALES  # noqa: E402
from lrnnkit.learn.mamba_configs import MAMBA, MAMBA_LIKE, mamba_model  # noqa: E402


def test_the_model_by_scale():
    assert mamba_model("paper") == (MAMBA, "mamba")
    assert mamba_model("small") == mamba_model("tiny") == (MAMBA_LIKE, "diagonal")


@pytest.mark.parametrize("scale", SCALES)
def test_every_experiments_mamba_configurations_train_the_scales_model(scale):
    """Where an experiment has a Mamba configuration, its label names the scale's model and its layer is that
    model's; no other configuration is named Mamba (000's and 003's; 004's diagonal [0,1] parity is 000 Fig. 1's
    positive diagonal, not Mamba)."""
    name, layer = mamba_model(scale)
    seen = 0
    for e in EXPERIMENTS.values():
        for label, cfg in e.runs(scale):
            if "Mamba" in label:
                seen += 1
                assert f"{name} [" in label and cfg.layer == layer, (e.name, scale, label)
                assert (MAMBA_LIKE in label) == (scale != "paper"), label
            else:
                assert cfg.layer != "mamba", (e.name, label)
    assert seen >= 10, scale      # 000-parity, -modarith, -modarith-brackets, -z60: 2 each; 003: 3
