"""The output normalisations (lrnnkit.ops.norm) against torch's own ``torch.nn.functional.rms_norm`` (an
independent implementation): ``RMSNorm(o) = o / sqrt(mean(o^2) + eps) * w`` and ``GatedRMSNorm(o, z) = RMSNorm(o) *
silu(z)`` over the last axis, fla's parameter name (``weight``), the input's dtype out.

Tolerances: float64 in and out, both sides compute in float64 (a mean of d squares, one rsqrt, two products):
rounding ~ d 2^-53, 1e-12 relative bounds it. bf16 in: both sides compute in float32 and round once to bf16, so the
results differ by at most one bf16 ulp (2^-7 relative) where the float32 values straddle a rounding boundary.

The Triton pass (``backend="triton"``; on a CPU the kernels run in the Triton interpreter) against the float64
reference :func:`rms_norm_torch`, values and the gradients in x, z and w: float32 in, relative L2 error <= 1e-5 (a
mean of D squares, one rsqrt, a sigmoid and a few products, each rounded once to fp32, ~2^-24 relative per
operation); bf16 in, the reference on the same bf16 values, <= 1e-2 (one bf16 rounding of each result, 2^-9
relative). dx = r (dxhat - xhat mean(dxhat xhat)) cancels where dxhat is radial (D = 1: nothing but the eps term is
left), so its error is bounded relative to the terms it subtracts, ||r dxhat||; dw sums over rows, so its error is
bounded relative to the sum of the magnitudes of its terms."""
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from hypothesis import given, settings, strategies as st  # noqa: E402

from lrnnkit.errors import InputError  # noqa: E402
from lrnnkit.ops._triton import INTERPRET  # noqa: E402
from lrnnkit.layers.norm import GatedRMSNorm, RMSNorm  # noqa: E402
from lrnnkit.ops.norm import rms_norm, rms_norm_torch  # noqa: E402

DEV = "cpu" if INTERPRET else "cuda"


def _layer(cls, d, eps=1e-5):
    m = cls(d, eps=eps)
    with torch.no_grad():
        m.weight.copy_(torch.linspace(0.5, 1.5, d))
    return m


@pytest.mark.parametrize("eps", [1e-5, 1e-2])
def test_rms_norm_float64(eps):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 7, 16, dtype=torch.float64, generator=g)
    m = _layer(RMSNorm, 16, eps)
    y = m(x)
    assert y.dtype == torch.float64 and list(m.state_dict()) == ["weight"]
    ref = F.rms_norm(x, (16,), m.weight.detach().double(), eps)
    assert torch.allclose(y, ref, rtol=1e-12, atol=0)


def test_gated_rms_norm_float64():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(2, 5, 8, dtype=torch.float64, generator=g)
    z = torch.randn(2, 5, 8, dtype=torch.float64, generator=g)
    m = _layer(GatedRMSNorm, 8)
    ref = F.rms_norm(x, (8,), m.weight.detach().double(), 1e-5) * F.silu(z)
    assert torch.allclose(m(x, z), ref, rtol=1e-12, atol=0)


def test_bf16_in_bf16_out_computed_in_float32():
    g = torch.Generator().manual_seed(2)
    x = torch.randn(4, 32, 64, generator=g).to(torch.bfloat16)
    z = torch.randn(4, 32, 64, generator=g).to(torch.bfloat16)
    m = _layer(GatedRMSNorm, 64)
    y = m(x, z)
    assert y.dtype == torch.bfloat16
    ref = (F.rms_norm(x.float(), (64,), m.weight.detach(), 1e-5) * F.silu(z.float())).to(torch.bfloat16)
    assert torch.allclose(y.float(), ref.float(), rtol=2 ** -7, atol=0)
    assert (y == ref).float().mean() > 0.95            # most values round identically


def _check_triton(x, z, w, dy, dtype, tol, eps=1e-5):
    """rms_norm(backend="triton") on x, z, dy rounded to ``dtype`` (w float32, as the modules keep it) against the
    float64 reference on the same rounded values; the bounds of the module text."""
    x, z, dy = (None if t is None else t.to(dtype).double() for t in (x, z, dy))
    w = None if w is None else w.float().double()
    ins = [t for t in (x, w, z) if t is not None]
    ours = [t.to(dtype if t is not w else torch.float32).to(DEV).requires_grad_(True) for t in ins]
    ref = [t.clone().requires_grad_(True) for t in ins]

    def split(ts):
        it = iter(ts)
        return next(it), next(it) if w is not None else None, next(it) if z is not None else None

    y = rms_norm(ours[0], split(ours)[1], eps, split(ours)[2], backend="triton")
    y0 = rms_norm_torch(ref[0], split(ref)[1], eps, split(ref)[2])
    assert y.dtype == dtype and y.shape == x.shape
    assert float((y.detach().cpu().double() - y0.detach()).norm()) <= tol * float(y0.detach().norm()) + 1e-30
    g = [t.cpu().double() for t in torch.autograd.grad(y, ours, dy.to(dtype).to(DEV))]
    g0 = torch.autograd.grad(y0, ref, dy)
    gx, gw, gz = split(g)
    gx0, gw0, gz0 = split(g0)
    r = torch.rsqrt(x.square().mean(-1, keepdim=True) + eps)
    s = 1 if z is None else F.silu(z)
    u = s * (1 if w is None else w)
    assert float((gx - gx0).norm()) <= tol * float((r * dy * u).norm()) + 1e-30
    if w is not None:
        terms = (dy * x * r * s).abs().reshape(-1, x.shape[-1]).sum(0)
        assert float((gw - gw0).norm()) <= tol * float(terms.norm()) + 1e-30
    if z is not None:
        assert float((gz - gz0).norm()) <= tol * float(gz0.norm()) + 1e-30


@pytest.mark.triton
@pytest.mark.parametrize("D", [17, 32, 48])
@pytest.mark.parametrize("gated,weighted", [(True, True), (False, True), (True, False), (False, False)])
@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), (torch.bfloat16, 1e-2)])
def test_triton_matches_float64_reference(D, gated, weighted, dtype, tol):
    # 3 x 43 = 129 rows: one row past a power of two, so the last program of every block size is mostly masked
    g = torch.Generator().manual_seed(D)
    x, z, dy = (torch.randn(3, 43, D, dtype=torch.float64, generator=g) for _ in range(3))
    w = 1 + 0.5 * torch.randn(D, dtype=torch.float64, generator=g)
    _check_triton(x, z if gated else None, w if weighted else None, dy, dtype, tol)


@pytest.mark.triton
@settings(max_examples=25 if INTERPRET else 60, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=0, max_size=2), D=st.integers(1, 70), scale=st.sampled_from(
    [1e-4, 1.0, 1e3]), gated=st.booleans(), weighted=st.booleans(), seed=st.integers(0, 99))
def test_triton_property(shape, D, scale, gated, weighted, seed):
    # tiny rows (scale 1e-4) put the eps inside the root in charge, where y is far from unit RMS
    g = torch.Generator().manual_seed(seed)
    x = scale * torch.randn(*shape, D, dtype=torch.float64, generator=g)
    z, dy = (3 * torch.randn(*shape, D, dtype=torch.float64, generator=g) for _ in range(2))
    w = torch.randn(D, dtype=torch.float64, generator=g)
    _check_triton(x, z if gated else None, w if weighted else None, dy, torch.float32, 1e-5)


@pytest.mark.skipif(INTERPRET, reason="bf16 rounding matters compiled; the interpreter computes in fp32")
def test_bf16_compiled_layer_shape():
    # the DeltaProduct layer's o_norm: 12 heads of 32, bf16 in and out, fp32 inside (one bf16 rounding, 2^-9)
    g = torch.Generator().manual_seed(11)
    x, z, dy = (torch.randn(64, 128, 12, 32, dtype=torch.float64, generator=g) for _ in range(3))
    _check_triton(x, z, 1 + 0.5 * torch.randn(32, dtype=torch.float64, generator=g), dy, torch.bfloat16, 1e-2)


@pytest.mark.triton
def test_triton_float64_is_the_reference():
    # float64 in: the kernels compute in float64 with eps unrounded (a compile-time constant), so they agree with
    # the reference to float64 rounding (D = 24 terms: 1e-13 relative bounds it)
    g = torch.Generator().manual_seed(7)
    x, z, dy = (torch.randn(5, 9, 24, dtype=torch.float64, generator=g) for _ in range(3))
    x[0, 0] *= 1e-4
    w = torch.randn(24, dtype=torch.float64, generator=g)
    ins = [t.clone().to(DEV).requires_grad_(True) for t in (x, w, z)]
    ref = [t.clone().requires_grad_(True) for t in (x, w, z)]
    y = rms_norm(ins[0], ins[1], 1e-5, ins[2], backend="triton")
    y0 = rms_norm_torch(ref[0], ref[1], 1e-5, ref[2])
    assert y.dtype == torch.float64 and torch.allclose(y.detach().cpu(), y0.detach(), rtol=1e-13, atol=1e-15)
    for a, b in zip(torch.autograd.grad(y, ins, dy.to(DEV)), torch.autograd.grad(y0, ref, dy)):
        assert float((a.cpu() - b).norm()) <= 1e-13 * float(b.norm())


@pytest.mark.triton
def test_triton_weight_gradient_is_deterministic():
    # per-program partial sums of dw, summed by torch: the same bits every run
    g = torch.Generator().manual_seed(3)
    x, z, dy = (torch.randn(300, 32, generator=g).to(DEV) for _ in range(3))
    w = torch.randn(32, generator=g).to(DEV).requires_grad_(True)
    a, b = (torch.autograd.grad(rms_norm(x, w, 1e-5, z, backend="triton"), w, dy)[0] for _ in range(2))
    assert torch.equal(a, b)


def test_backends_and_refusals():
    x = torch.randn(4, 6, dtype=torch.float64)
    w = torch.randn(6, dtype=torch.float64)
    assert torch.equal(rms_norm(x, w, 1e-5), rms_norm_torch(x, w, 1e-5))      # CPU / float64: the reference
    with pytest.raises(InputError, match="unknown backend 'cuda'"):
        rms_norm(x, w, 1e-5, backend="cuda")
    with pytest.raises(InputError, match="gate x's shape"):
        rms_norm(x.float(), w.float(), 1e-5, torch.randn(4, 1), backend="triton")
    m = GatedRMSNorm(6, backend="torch")
    assert m.backend == "torch" and list(m.state_dict()) == ["weight"]


@settings(max_examples=40, deadline=None)
@given(e=st.integers(-30, 120), D=st.integers(1, 64), seed=st.integers(0, 2**16))
def test_rescale_large_is_an_exact_power_of_two_that_leaves_ordinary_vectors_alone(e, D, seed):
    """rescale_large(x) = x / 2^k per vector, k >= 0 the smallest with max |x / 2^k| <= 2^56: exact (the ratio of
    every entry is the same power of two, compared exactly in float64), no change below 2^56."""
    from lrnnkit.ops.norm import RESCALE_ABOVE, rescale_large
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(3, D, generator=g, dtype=torch.float64).float() * 2.0 ** e
    y = rescale_large(x)
    m = x.abs().amax(-1)
    for i in range(3):
        if m[i] <= RESCALE_ABOVE:
            assert torch.equal(y[i], x[i])
        else:
            nz = x[i] != 0
            r = (x[i][nz].double() / y[i][nz].double()).unique()
            assert r.numel() == 1 and float(r).is_integer() and float(r) > 1
            k = int(torch.log2(r))
            assert 2.0 ** k == float(r)
            assert y[i].abs().max() <= RESCALE_ABOVE < 2 * y[i].abs().max()     # the smallest such k


def test_scale_safe_rmsnorm_is_torchs_below_2_56_and_right_beyond_float32s_squares():
    """ScaleSafeRMSNorm (the residual stream's norm of SequenceModel) equals torch.nn.RMSNorm bit for bit on
    ordinary vectors, values and gradients, with the same state dict; on a vector scaled by 2^70 it returns the
    norm of the unscaled vector (RMSNorm is scale-invariant where eps is negligible), where torch's own returns 0
    because mean(x^2) overflows float32 (the failure of 002's long words: a state grown past ~1.8e19). The batched
    model's norm (learn.batched._rms) does the same."""
    from lrnnkit.layers.norm import ScaleSafeRMSNorm
    from lrnnkit.learn.batched import _rms
    torch.manual_seed(0)
    safe, plain = ScaleSafeRMSNorm(16), torch.nn.RMSNorm(16)
    with torch.no_grad():
        plain.weight.uniform_(0.5, 1.5)
    safe.load_state_dict(plain.state_dict())
    x = torch.randn(4, 7, 16, requires_grad=True)
    a, b = safe(x), plain(x)
    assert torch.equal(a, b)
    g = torch.randn_like(a)
    ga, = torch.autograd.grad(a, x, g)
    gb, = torch.autograd.grad(b, x, g)
    assert torch.equal(ga, gb)
    big = x.detach() * 2.0 ** 70
    assert plain(big).abs().max() == 0            # torch's RMSNorm: mean(x^2) = inf in float32
    assert torch.allclose(safe(big), b.detach(), rtol=1e-6, atol=0)
    w = plain.weight.detach()[None]               # one run
    assert torch.equal(_rms(x.detach()[None], w), b.detach()[None])
    assert torch.allclose(_rms(big[None], w), b.detach()[None], rtol=1e-6, atol=0)


def test_sequence_models_normalise_with_the_scale_safe_norm():
    """Every residual-stream norm of SequenceModel is a ScaleSafeRMSNorm (state dict keys as torch's)."""
    from lrnnkit.layers.norm import ScaleSafeRMSNorm
    from lrnnkit.learn.models import SequenceModel
    m = SequenceModel(5, 5, layer="block-diagonal", layers=2, width=16, mlp=True)
    norms = [m.final_norm, *m.norms, *m.mlp_norms]
    assert len(norms) == 5 and all(type(n) is ScaleSafeRMSNorm for n in norms)
    assert "final_norm.weight" in m.state_dict() and "norms.1.weight" in m.state_dict()


@settings(max_examples=8, deadline=None)
@given(R=st.integers(1, 3), rows=st.integers(1, 40), D=st.integers(1, 20), seed=st.integers(0, 2**16),
       huge=st.booleans())
def test_runs_with_their_own_weights_match_the_scale_safe_reference(R, rows, D, seed, huge):
    """rms_norm_runs (each row's run weight and rescale_large's power of two inside the kernel) against the same
    equations in float64 (rescale_large, torch's RMSNorm with float32's eps, as the kernel's, each run's weight),
    values and the gradients of x and of every run's weight; rms_norm_runs_torch equals each run alone. Float32
    against float64, relative 1e-5 as the tests above: y against each row's largest entry, dx against the row's
    ||r dxhat|| (it cancels where dxhat is radial), dw against the sum of its terms' magnitudes. With ``huge``, every
    third row holds entries near 2^100, past float32's sum of squares (2^128): the rescale keeps them finite."""
    from lrnnkit.ops.norm import rescale_large, rms_norm_runs, rms_norm_runs_torch
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(R, rows, D, generator=g, dtype=torch.float64)
    if huge:
        x[:, ::3] *= 2.0 ** 100
    w = torch.randn(R, D, generator=g, dtype=torch.float64)
    dy = torch.randn(R, rows, D, generator=g, dtype=torch.float64)
    alone = torch.stack([F.rms_norm(rescale_large(x[r]), (D,), eps=torch.finfo(torch.float64).eps) * w[r]
                         for r in range(R)])
    assert torch.allclose(rms_norm_runs_torch(x, w), alone, rtol=1e-12, atol=0)
    xk, wk = x.float().to(DEV).requires_grad_(True), w.float().to(DEV).requires_grad_(True)
    xr, wr = x.clone().requires_grad_(True), w.clone().requires_grad_(True)
    y = rms_norm_runs(xk, wk)
    y0 = F.rms_norm(rescale_large(xr), (D,), eps=torch.finfo(torch.float32).eps) * wr[:, None, :]
    assert torch.isfinite(y).all()
    gx, gw = (t.detach().double().cpu() for t in torch.autograd.grad(y, (xk, wk), dy.float().to(DEV)))
    gx0, gw0 = torch.autograd.grad(y0, (xr, wr), dy)
    xs = rescale_large(x)
    r = torch.rsqrt(xs.square().mean(-1, keepdim=True)) * (xs / x.where(x != 0, 1)).abs().amax(-1, keepdim=True)
    xhat = xs * torch.rsqrt(xs.square().mean(-1, keepdim=True))
    bounds = [(y.detach().double().cpu(), y0.detach(), y0.detach().abs().amax(-1, keepdim=True)),
              (gx, gx0, r * (dy * w[:, None, :]).norm(dim=-1, keepdim=True)),
              (gw, gw0, (dy * xhat).abs().sum(1))]
    for a, b, size in bounds:
        assert a.shape == b.shape
        assert float(((a - b).abs() / size.clamp_min(1e-300)).max()) <= 1e-5
