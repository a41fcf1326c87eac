"""The mixers' table (lrnnkit.layers.mixers): one builder per layer kind of SequenceModel, each giving the mixer the
model docstring names (paper 000 / 001 / 002 / 003 / 004), with the backend rule "auto" -> the torch scan for non-GH
mixers; an unknown kind is refused in one line."""
import pytest
import torch

from lrnnkit.errors import InputError
from lrnnkit.layers.delta_product import DeltaProductLayer
from lrnnkit.layers.fixed_point import FixedPointMixer
from lrnnkit.layers.mixers import MIXERS, BilinearMixer, BlockDiagonalMixer, DiagonalMixer, build_mixer
from lrnnkit.learn.kinds import LAYER_KINDS

FIELDS = dict(width=8, heads=2, head_dim=4, n_h=1, eig=(-1.0, 1.0), gate=False, short_conv=False,
              output_gate=True, block_size=4, backend="auto")
WANT = {"diagonal": DiagonalMixer, "deltanet": DeltaProductLayer, "deltaproduct": DeltaProductLayer,
        "block-diagonal": BlockDiagonalMixer, "fixed-point": FixedPointMixer, "bilinear": BilinearMixer}


def test_one_builder_per_layer_kind():
    assert set(MIXERS) == set(LAYER_KINDS) == set(WANT)


@pytest.mark.parametrize("kind", sorted(WANT))
def test_each_kind_builds_its_mixer(kind):
    torch.manual_seed(0)
    m = build_mixer(kind, **FIELDS)
    assert type(m) is WANT[kind]
    if kind in ("diagonal", "block-diagonal", "bilinear"):
        assert m.backend == "scan"                        # "auto" means the torch scan for non-GH mixers
    y = m(torch.randn(2, 5, 8))
    y = y[0] if isinstance(y, tuple) else y
    assert y.shape == (2, 5, 8) and bool(torch.isfinite(y).all())


def test_an_unknown_kind_is_refused():
    with pytest.raises(InputError, match="unknown layer kind 'lstm'"):
        build_mixer("lstm", **FIELDS)
