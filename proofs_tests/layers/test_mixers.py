"""The mixers' table (lrnnkit.layers.mixers): one builder per layer kind of SequenceModel, each giving the mixer the
model docstring names (paper 000 / 001 / 002 / 003 / 004), with the backend rule "auto" -> the torch scan for non-GH
mixers; an unknown kind is refused in one line. The diagonal mixer's scan on its CUDA path (the Triton chunk kernel,
forward and reverse) against its sequential reference."""
import pytest
import torch

from lrnnkit.errors import InputError
from lrnnkit.layers.delta_product import DeltaProductLayer
from lrnnkit.layers.fixed_point import FixedPointMixer
from lrnnkit.layers.mamba import MambaMixer
from lrnnkit.layers.mixers import MIXERS, BilinearMixer, BlockDiagonalMixer, DiagonalMixer, build_mixer
from lrnnkit.learn.kinds import LAYER_KINDS

FIELDS = dict(width=8, heads=2, head_dim=4, n_h=1, eig=(-1.0, 1.0), gate=False, short_conv=False,
              output_gate=True, block_size=4, backend="auto")
WANT = {"diagonal": DiagonalMixer, "deltanet": DeltaProductLayer, "deltaproduct": DeltaProductLayer,
        "block-diagonal": BlockDiagonalMixer, "fixed-point": FixedPointMixer, "bilinear": BilinearMixer,
        "mamba": MambaMixer}


def test_one_builder_per_layer_kind():
    assert set(MIXERS) == set(LAYER_KINDS) == set(WANT)


@pytest.mark.parametrize("kind", sorted(WANT))
def test_each_kind_builds_its_mixer(kind):
    torch.manual_seed(0)
    m = build_mixer(kind, **FIELDS)
    assert type(m) is WANT[kind]
    if kind in ("diagonal", "block-diagonal", "bilinear", "mamba"):
        assert m.backend == "scan"                        # "auto" means the scans of the module text
    y = m(torch.randn(2, 5, 8))
    y = y[0] if isinstance(y, tuple) else y
    assert y.shape == (2, 5, 8) and bool(torch.isfinite(y).all())


def test_an_unknown_kind_is_refused():
    with pytest.raises(InputError, match="unknown layer kind 'lstm'"):
        build_mixer("lstm", **FIELDS)


def test_the_fixed_point_builder_takes_its_cap_and_rule(monkeypatch):
    """``fp_train_iters`` and ``fp_iteration`` reach FixedPointMixer's constructor through the table (absent or None:
    the defaults, 16 and "paper"), and SequenceModel hands them to the builder: the rule is the constructor's
    argument, not set on the layer afterwards (a spy on the constructor records it); the model config carries
    ``fp_iteration`` only off its default and rebuilds the same rule."""
    import lrnnkit.layers.mixers as M
    from lrnnkit.learn.models import SequenceModel
    m = build_mixer("fixed-point", **FIELDS)
    assert m.layer.iteration_rule == "paper" and m.layer.train_max_iters == FixedPointMixer.TRAIN_MAX_ITERS
    m = build_mixer("fixed-point", **FIELDS, fp_train_iters=5, fp_iteration="authors")
    assert m.layer.iteration_rule == "authors" and m.layer.train_max_iters == 5
    assert build_mixer("fixed-point", **FIELDS, fp_iteration=None).layer.iteration_rule == "paper"
    with pytest.raises(InputError, match="iteration"):
        build_mixer("fixed-point", **FIELDS, fp_iteration="damped")
    seen = []

    def spy(*a, **k):
        seen.append(k.get("iteration"))
        return FixedPointMixer(*a, **k)
    monkeypatch.setattr(M, "FixedPointMixer", spy)
    for rule in (None, "authors"):
        seen.clear()
        model = SequenceModel(3, 2, layer="fixed-point", layers=2, width=8, heads=2, fp_iteration=rule)
        assert seen == [rule or "paper"] * 2
        assert [mx.layer.iteration_rule for mx in model.mixers] == [rule or "paper"] * 2
        assert ("fp_iteration" in model.config) == (rule is not None)
        again = SequenceModel(**model.config)
        assert [mx.layer.iteration_rule for mx in again.mixers] == [rule or "paper"] * 2


def _diagonal_path():
    from lrnnkit.ops.diagonal import parallel
    from lrnnkit.ops.diagonal.chunk import diagonal_scan_chunk
    return parallel, lambda a, b: diagonal_scan_chunk(a.contiguous(), b.contiguous(), validate=False, chunk_size=4)


def _block_path():
    from lrnnkit.ops.block_diagonal import differentiable
    from lrnnkit.ops.block_diagonal.fused_recurrent import block_diagonal_scan_fused
    return differentiable, lambda A, b: block_diagonal_scan_fused(A.contiguous(), b.contiguous(), validate=False)


@pytest.mark.parametrize("case", ["diagonal [0,1]", "diagonal [-1,1]", "block-diagonal"])
def test_each_scanning_mixer_on_its_triton_kernel_matches_its_reference(case, monkeypatch):
    """The diagonal and block-diagonal mixers' scans as they run on CUDA (the Triton chunk scan, chunks of 4 so that
    carries cross chunks; the fused recurrent block kernel), forward and, reversed, backward
    (lrnnkit.ops.linear_scan), here through the interpreter, against the same weights with backend "naive" (the
    sequential loop, autograd through it): outputs and every parameter's gradient, float64, tolerance 1e-10
    (re-associated sums of 13 steps, each term O(1)); the kernel must run twice."""
    from lrnnkit.ops._triton import INTERPRET
    if not INTERPRET:
        pytest.skip("needs TRITON_INTERPRET=1 (CPU tensors through the Triton interpreter)")
    module, fused = _block_path() if case == "block-diagonal" else _diagonal_path()
    calls = []
    monkeypatch.setattr(module, "_kernel", lambda A, b: calls.append(A.shape) or fused(A, b))
    torch.manual_seed(3)
    if case == "block-diagonal":
        m, ref = BlockDiagonalMixer(8, block_size=4), BlockDiagonalMixer(8, block_size=4, backend="naive")
    else:
        eig = (0.0, 1.0) if "[0,1]" in case else (-1.0, 1.0)
        m, ref = DiagonalMixer(8, eig, short_conv=True), DiagonalMixer(8, eig, short_conv=True, backend="naive")
    m, ref = m.double(), ref.double()
    ref.load_state_dict(m.state_dict())
    x = torch.randn(3, 13, 8, dtype=torch.float64)
    w = torch.randn(3, 13, 8, dtype=torch.float64)
    y, y0 = m(x), ref(x)
    torch.testing.assert_close(y, y0, rtol=0, atol=1e-10)
    g = torch.autograd.grad((y * w).sum(), list(m.parameters()))
    g0 = torch.autograd.grad((y0 * w).sum(), list(ref.parameters()))
    for a, b in zip(g, g0):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-10)
    assert len(calls) == 2


def test_the_bilinear_recurrence_stays_float32_under_bf16_autocast(monkeypatch):
    """Under bf16 autocast (CPU autocast casts einsum and matmul as CUDA's does) the bilinear scan still receives
    and returns float32, and the mixer's output matches the autocast-free one to bf16's rounding of the two
    projections (rel. 3e-2: two bf16 matmuls of width 32, ~2^-8 each, summed over 32 terms). Without the region the
    doubling scan's einsum and @ would run in bf16 across all log2(T) levels."""
    import lrnnkit.layers.mixers as M
    torch.manual_seed(0)
    mx = BilinearMixer(32, heads=2, head_dim=8)
    x = torch.randn(2, 64, 32)
    seen = []
    scan = M._linear_scan

    def spy(A, h0):
        out = scan(A, h0)
        seen.append((A.dtype, out.dtype))
        return out
    monkeypatch.setattr(M, "_linear_scan", spy)
    with torch.no_grad():
        ref = mx(x)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            got = mx(x)
    assert seen == [(torch.float32, torch.float32)] * 2
    assert got.dtype == torch.bfloat16
    err = ((got.float() - ref).norm() / ref.norm()).item()
    assert err < 3e-2, err
