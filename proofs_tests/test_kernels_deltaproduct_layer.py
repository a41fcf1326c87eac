"""DeltaProductLayer (the trainable DeltaNet / DeltaProduct token mixer, paper 001) and chunk_gh's torch backends.

Exact-math checks run in float64, where the chunk equations and the sequential loop agree to rounding (every
factor is a contraction, so errors stay ~ steps * K * 2^-53; we allow 1e-10 absolute on O(1) outputs)."""
from __future__ import annotations

import pytest
import torch

from lrnnkit.errors import InputError
from lrnnkit.kernels import DeltaProductLayer, chunk_gh

F64 = torch.float64


def _inputs(B, T, NH, H, K, V, gate, seed):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(B, T, H, K, dtype=F64, generator=g)
    k = torch.nn.functional.normalize(torch.randn(B, T, NH, H, K, dtype=F64, generator=g), dim=-1)
    v = torch.randn(B, T, NH, H, V, dtype=F64, generator=g)
    b = 2 * torch.rand(B, T, NH, H, dtype=F64, generator=g)
    gt = -torch.rand(B, T, H, dtype=F64, generator=g) if gate else None
    return q, k, v, b, gt


@pytest.mark.parametrize("nh", [1, 2, 3])
@pytest.mark.parametrize("gate", [False, True])
def test_torch_chunk_equals_naive_with_varlen(nh, gate):
    q, k, v, b, g = _inputs(1, 29, nh, 2, 8, 5, gate, 10 * nh + gate)
    cu = torch.tensor([0, 4, 4, 21, 29])          # includes an empty sequence
    h0 = torch.randn(4, 2, 8, 5, dtype=F64)
    o1, s1 = chunk_gh(q, k, v, b, g, nh, cu, h0, True, backend="torch", chunk_size=16)
    o2, s2 = chunk_gh(q, k, v, b, g, nh, cu, h0, True, backend="naive")
    assert torch.allclose(o1, o2, atol=1e-10, rtol=0) and torch.allclose(s1, s2, atol=1e-10, rtol=0)
    # fla's interleaved layout gives the same result
    o3, _ = chunk_gh(q, k.flatten(1, 2), v.flatten(1, 2), b.flatten(1, 2), g, nh, cu, h0, backend="torch",
                     chunk_size=16)
    assert torch.equal(o1, o3)


@pytest.mark.parametrize("backend", ["chunk", "naive", "torch"])
def test_layer_shapes_grads_and_varlen_isolation(backend):
    torch.manual_seed(0)
    layer = DeltaProductLayer(16, 2, 4, n_h=2, use_gate=True, backend=backend).double()
    x = torch.randn(1, 12, 16, dtype=F64)
    y = layer(x)
    assert y.shape == (1, 12, 16)
    y.square().sum().backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in layer.parameters())
    # packed sequences do not see each other (conv taps and state are reset at the boundary)
    cu = torch.tensor([0, 5, 12])
    with torch.no_grad():
        yp = layer(x, cu)
        ys = torch.cat([layer(x[:, :5]), layer(x[:, 5:])], 1)
    assert torch.allclose(yp, ys, atol=1e-12, rtol=0)


def test_layer_eig_range_and_gate():
    torch.manual_seed(1)
    x = torch.randn(2, 6, 8)
    for rng, lo, hi in (((-1, 1), 0.0, 2.0), ((0, 1), 0.0, 1.0)):
        layer = DeltaProductLayer(8, 1, 4, eig_range=rng, use_gate=True)
        with torch.no_grad():
            q, k, v, b, g = layer.gh_inputs(x)
        assert float(b.min()) >= lo and float(b.max()) <= hi
        assert torch.allclose(k.norm(dim=-1), torch.ones(()), atol=1e-6)
        assert float(g.max()) <= 0.0
    with pytest.raises(InputError):
        DeltaProductLayer(8, 1, 4, eig_range=(-2, 1))
    with pytest.raises(InputError):
        DeltaProductLayer(8, 1, 4, backend="bogus")
    with pytest.raises(InputError, match="fp32_precision"):
        DeltaProductLayer(8, 1, 4, fp32_precision="bf16x3")
    with pytest.raises(InputError, match="keep_states"):
        DeltaProductLayer(8, 1, 4, keep_states="yes")
