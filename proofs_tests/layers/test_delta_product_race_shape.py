"""DeltaProductLayer at the keywords of the race against fla (benchmarks/bench_layer_vs_fla.py: hidden 384, 12 heads
of K = 32, expand_v 1, n_h = 2 (paper 001, DeltaProduct), eigenvalues in [-1, 1] (paper 000, Theorem 1), short
convolution, output gate, no forget gate), and the plumbing of benchmarks/diagnose_fla_a5.py that needs no GPU.

* float64: the layer equals :func:`reference` of test_delta_product (an independent loop written from fla 0.6.0's
  conventions) to 1e-10 (the tolerance argument there: contractions only, float64 both sides).
* float32 (the race's master weights, its initial values): output and every gradient within 1e-4 (relative L2) of
  the same layer in float64. float32 rounds at 6e-8; T n_h = 64 positions of contractions, chunked triangular solves
  and RMSNorm keep the measured error near 1e-6 (CPU, fla's layer and ours alike: both 1e-6 at B = 2, T = 64), so
  1e-4 leaves a 100x margin and still fails on any semantic slip (those move outputs by O(1)).
* The Triton chunk kernels (interpreted on the CPU) at K = 32, n_h = 2: o and the gradients of q, k, v, beta within
  1e-5 of the float64 loop.
* The diagnosis script's float64 truth in fla's interleaved layout (position t n_h + j holds factor j of token t)
  equals an independent loop over that layout, and its verdict ``first_departure`` names the first departing tensor
  (and none when fla's chunk path is as close as the others).
"""
from __future__ import annotations

import pytest
import torch

from benchmarks import bench_layer_vs_fla as race
from benchmarks import diagnose_fla_a5 as diag
from lrnnkit.ops._triton import INTERPRET
from lrnnkit.layers.delta_product import DeltaProductLayer
from lrnnkit.ops.gh.api import chunk_gh
from lrnnkit.ops.gh.naive import delta_product_naive

from .test_delta_product import TOL, cfg_of, err, make_layer, reference

F64 = torch.float64
KW = race.LAYER_KW


def rel(a, b) -> float:
    return float((a.double() - b.double()).norm() / b.double().norm())


def test_race_keywords_are_the_ones_under_test():
    """The race's keywords: K = 32, n_h = 2, 12 heads of a 384-wide model, [-1, 1], conv, no forget gate."""
    assert KW == dict(hidden_size=384, head_dim=32, num_heads=12, expand_v=1, num_householder=2,
                      allow_neg_eigval=True, use_forget_gate=False, use_short_conv=True)


@pytest.mark.parametrize("mode", ["naive", "torch"])
def test_race_keywords_float64_equal_reference(mode):
    layer = make_layer(5, mode, **KW)
    x = torch.randn(1, 10, 384, dtype=F64, generator=torch.Generator().manual_seed(6))
    with torch.no_grad():
        o = layer(x)[0][0]
    r = reference(layer.state_dict(), cfg_of(**KW), x[0])
    assert float(r.abs().max()) > 0.1
    assert err(o, r) <= TOL


def test_race_initial_weights_float32_output_and_every_gradient():
    """The race's initial weights (seed 0, the layer's own initialisation), float32 against float64."""
    torch.manual_seed(0)
    layer = DeltaProductLayer(**KW)
    truth = DeltaProductLayer(**KW, mode="naive").double()
    truth.load_state_dict(layer.state_dict())
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(1, 24, 384, dtype=F64, generator=gen)    # 48 positions: three chunks of the torch path's 16
    do = torch.randn(1, 24, 384, dtype=F64, generator=gen)
    res = {}
    for name, m, dt in (("f32", layer, torch.float32), ("f64", truth, F64)):
        xx = x.to(dt).requires_grad_(True)
        o = m(xx)[0]
        (o.double() * do).sum().backward()
        res[name] = dict(o=o.detach(), dx=xx.grad, **{n: p.grad for n, p in m.named_parameters()})
    assert res["f32"].keys() == res["f64"].keys() and len(res["f64"]) == 12   # o, dx and the 10 parameters
    errs = {k: rel(res["f32"][k], res["f64"][k]) for k in res["f64"]}
    assert all(float(res["f64"][k].norm()) > 0 for k in res["f64"])
    assert max(errs.values()) <= 1e-4, errs


@pytest.mark.skipif(not INTERPRET, reason="CPU Triton interpreter run (TRITON_INTERPRET=1)")
def test_chunk_kernels_at_k32_nh2_against_float64():
    B, T, H, K, n = 1, 32, 2, 32, 2
    gen = torch.Generator().manual_seed(2)
    q, k, v = (torch.randn(B, T, *s, dtype=F64, generator=gen) for s in ((H, K), (n, H, K), (n, H, K)))
    beta = 2 * torch.rand(B, T, n, H, dtype=F64, generator=gen)
    do = torch.randn(B, T, H, K, dtype=F64, generator=gen)
    out = {}
    for name, dt, backend in (("chunk", torch.float32, "chunk"), ("f64", F64, "naive")):
        xs = [t.to(dt).requires_grad_(True) for t in (q, k, v, beta)]
        o, _ = chunk_gh(xs[0], xs[1], xs[2], None, xs[3], n, use_qk_l2norm_in_kernel=True, backend=backend,
                        validate=False)
        (o.double() * do).sum().backward()
        out[name] = [o.detach()] + [t.grad for t in xs]
    for a, b, nm in zip(out["chunk"], out["f64"], ("o", "dq", "dk", "dv", "dbeta")):
        assert rel(a, b) <= 1e-5, nm


def _interleaved_loop(q, k, v, beta, n, scale):
    """float64, fla's interleaved layout: k, v (B, T n, H, K), beta (B, T n, H); unit q, k; o at each token's
    last position."""
    unit = lambda x: x / torch.sqrt((x * x).sum(-1, keepdim=True) + 1e-6)   # noqa: E731
    q, k = unit(q), unit(k)
    B, T, H, K = q.shape
    S = torch.zeros(B, H, K, v.shape[-1], dtype=F64)
    o = []
    for p in range(T * n):
        kp, vp, bp = k[:, p], v[:, p], beta[:, p, :, None, None]
        S = S + bp * kp[..., :, None] * (vp - torch.einsum("bhk,bhkv->bhv", kp, S))[..., None, :]
        if p % n == n - 1:
            o.append(scale * torch.einsum("bhk,bhkv->bhv", q[:, p // n], S))
    return torch.stack(o, 1)


def test_diagnosis_truth_in_fla_layout():
    B, T, n = 2, 6, diag.NH
    gen = torch.Generator().manual_seed(3)
    q = torch.randn(B, T, diag.H, diag.K, dtype=F64, generator=gen)
    k, v = (torch.randn(B, T * n, diag.H, diag.K, dtype=F64, generator=gen) for _ in range(2))
    beta = 2 * torch.rand(B, T * n, diag.H, dtype=F64, generator=gen)
    do = torch.randn(B, T, diag.H, diag.K, dtype=F64, generator=gen)
    o, dq, dk, dv, db = diag.truth_core(q, k, v, beta, do)
    assert err(o, _interleaved_loop(q, k, v, beta, n, diag.SCALE)) <= 1e-12
    xs = [t.clone().requires_grad_(True) for t in (q, k, v, beta)]
    (_interleaved_loop(*xs, n, diag.SCALE) * do).sum().backward()
    for a, b in zip((dq, dk, dv, db), xs):
        assert err(a, b.grad) <= 1e-12
    # the layouts between fla's interleaved sequence and a token's n positions
    assert torch.equal(diag._last(diag._interleave_q(q, n), n), q)
    assert float(diag._interleave_q(q, n).unflatten(1, (T, n))[:, :, :-1].abs().max()) == 0


def test_first_departure_names_the_first_tensor():
    base = dict(level="recurrence", inputs="A5", dtype="bfloat16", seconds=0.0)
    good = dict(o=1e-2, dq=1e-2, dk=1.2e-2, dv=1e-2, dbeta=1e-2)
    rows = [dict(base, path="ours", **good), dict(base, path="fla-fused", **good),
            dict(base, path="fla-chunk", **dict(good, dk=0.5, dbeta=0.9))]
    [verdict] = diag.first_departure(rows)
    assert verdict["first_departure"] == dict(tensor="dk", fla_chunk=0.5, worst_other=1.2e-2)
    rows[-1] = dict(base, path="fla-chunk", **dict(good, dk=1.5e-2))     # within 3x the others: no departure
    assert diag.first_departure(rows)[0]["first_departure"] is None
    # paths that share a kernel with fla-chunk (its beta variant, its backward in chunk-dr) do not hide it
    rows = [dict(base, path="ours", **good), dict(base, path="fla-chunk", **dict(good, dv=0.4)),
            dict(base, path="fla-chunk-b32", **dict(good, dv=0.4)), dict(base, path="fla-chunk-dr", **dict(good, dv=0.4))]
    assert diag.first_departure(rows)[0]["first_departure"]["tensor"] == "dv"
    # ours and a path that refused: the refusal is not a comparison
    rows = [dict(base, path="ours", **good), dict(base, path="fla-chunk", **dict(good, o=0.3)),
            dict(base, path="fla-naive", error="RuntimeError: x")]
    assert diag.first_departure(rows)[0]["first_departure"]["tensor"] == "o"


def test_parting_step():
    curves = [dict(path="ours", losses=[4.1, 4.0, 3.9, 3.0]), dict(path="fla-chunk", losses=[4.1, 4.02, 4.0, 3.9])]
    assert diag.parting(curves) == {"fla-chunk": dict(first_step_apart=3, max_diff_first20=0.9)}
