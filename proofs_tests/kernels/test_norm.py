"""The output normalisations (lrnnkit.kernels.norm) against torch's own ``torch.nn.functional.rms_norm`` (an
independent implementation): ``RMSNorm(o) = o / sqrt(mean(o^2) + eps) * w`` and ``GatedRMSNorm(o, z) = RMSNorm(o) *
silu(z)`` over the last axis, fla's parameter name (``weight``), the input's dtype out.

Tolerances: float64 in and out, both sides compute in float64 (a mean of d squares, one rsqrt, two products):
rounding ~ d 2^-53, 1e-12 relative bounds it. bf16 in: both sides compute in float32 and round once to bf16, so the
results differ by at most one bf16 ulp (2^-7 relative) where the float32 values straddle a rounding boundary."""
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from lrnnkit.kernels.norm import GatedRMSNorm, RMSNorm  # noqa: E402


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
