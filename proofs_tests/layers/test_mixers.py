"""The mixers' table (lrnnkit.layers.mixers): one builder per layer kind of SequenceModel, each giving the mixer the
model docstring names (paper 000 / 001 / 002 / 003 / 004), with the backend rule "auto" -> the torch scan for non-GH
mixers; an unknown kind is refused in one line. The diagonal mixer's scan on its CUDA path (the Triton chunk kernel,
forward and reverse) against its sequential reference."""
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
        assert m.backend == "scan"                        # "auto" means the scans of the module text
    y = m(torch.randn(2, 5, 8))
    y = y[0] if isinstance(y, tuple) else y
    assert y.shape == (2, 5, 8) and bool(torch.isfinite(y).all())


def test_an_unknown_kind_is_refused():
    with pytest.raises(InputError, match="unknown layer kind 'lstm'"):
        build_mixer("lstm", **FIELDS)


@pytest.mark.parametrize("eig", [(0.0, 1.0), (-1.0, 1.0)])
def test_diagonal_mixer_on_the_triton_scan_matches_its_reference(eig, monkeypatch):
    """DiagonalMixer's scan as it runs on CUDA (lrnnkit.ops.diagonal.parallel with the Triton chunk kernel for the
    forward and, reversed, the backward; here through the interpreter, chunks of 4 so that carries cross chunks)
    against the same weights with backend "naive" (the sequential loop, autograd through it): outputs and every
    parameter's gradient, float64, tolerance 1e-10 (re-associated sums of 13 steps, each term O(1))."""
    from lrnnkit.ops._triton import INTERPRET
    if not INTERPRET:
        pytest.skip("needs TRITON_INTERPRET=1 (CPU tensors through the Triton interpreter)")
    from lrnnkit.ops.diagonal import parallel
    from lrnnkit.ops.diagonal.chunk import diagonal_scan_chunk
    calls = []

    def kernel(a, b):
        calls.append(a.shape)
        return diagonal_scan_chunk(a.contiguous(), b.contiguous(), validate=False, chunk_size=4)
    monkeypatch.setattr(parallel, "_kernel", kernel)
    torch.manual_seed(3)
    m = DiagonalMixer(6, eig, short_conv=True).double()
    ref = DiagonalMixer(6, eig, short_conv=True, backend="naive").double()
    ref.load_state_dict(m.state_dict())
    x = torch.randn(3, 13, 6, dtype=torch.float64)
    w = torch.randn(3, 13, 6, dtype=torch.float64)
    y, y0 = m(x), ref(x)
    torch.testing.assert_close(y, y0, rtol=0, atol=1e-10)
    g = torch.autograd.grad((y * w).sum(), list(m.parameters()))
    g0 = torch.autograd.grad((y0 * w).sum(), list(ref.parameters()))
    for a, b in zip(g, g0):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-10)
    assert len(calls) == 2          # one forward scan, one reverse scan for the backward: the kernel ran both
