"""lrnnkit.learn.mamba_configs: the model that stands for a paper's Mamba at each scale (Mamba's block at scale
paper, the one-state Mamba-like layer below), its labels in every experiment, and the label lookup the judges,
parts, protocols and the registry read a configuration through."""
import pytest
from hypothesis import given, strategies as st

pytest.importorskip("torch")

from lrnnkit.learn.experiments import EXPERIMENTS, SCALES  # noqa: E402
from lrnnkit.learn.mamba_configs import MAMBA, MAMBA_LIKE, mamba_key, mamba_model  # noqa: E402


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


@pytest.mark.parametrize("label,have,want", [
    ("Mamba [0,1]", {"Mamba-like diagonal [0,1]": 1}, "Mamba-like diagonal [0,1]"),
    ("Mamba-like diagonal [0,1]", {"Mamba [0,1]": 1}, "Mamba [0,1]"),
    ("A5 Mamba [0,1] 2L", ["A5 Mamba-like diagonal [0,1] 2L", "A5 Mamba [0,1] 2L"], "A5 Mamba [0,1] 2L"),
    ("A5 Mamba [0,1] 2L", ["A5 Mamba-like diagonal [0,1] 2L"], "A5 Mamba-like diagonal [0,1] 2L"),
    ("Mamba [0,1]", {"Mamba [-1,1]": 1}, "Mamba [0,1]"),                       # the other range is not it
    ("DeltaNet [0,1]", {"Mamba [0,1]": 1}, "DeltaNet [0,1]"),
])
def test_mamba_key_cases(label, have, want):
    assert mamba_key(label, have) == want


@given(st.sampled_from(["", "A5 ", "copy "]), st.sampled_from(["[0,1]", "[-1,1]"]), st.sampled_from(["", " 2L"]),
       st.booleans(), st.booleans())
def test_mamba_key_finds_the_one_configuration_under_either_name(pre, rng, post, asked_like, stored_like):
    """Either name finds the stored one, whichever it is; a label itself present is always its own key."""
    def lab(like):
        return f"{pre}{MAMBA_LIKE if like else MAMBA} {rng}{post}"
    have = {lab(stored_like): 0, "DeltaNet " + rng: 1}
    assert mamba_key(lab(asked_like), have) == lab(stored_like)
    assert mamba_key(lab(stored_like), {**have, lab(not stored_like): 2}) == lab(stored_like)
