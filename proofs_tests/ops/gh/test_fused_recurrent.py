"""GH-product layer (DeltaNet / DeltaProduct, paper 001): the fused recurrent Triton kernel and the chunk equations
in torch vs the naive sequential reference; bad input refused by every entry point (naive, fused recurrent, and
``chunk_gh(backend="chunk")``'s chunked kernels behind fla's signature). The trainable chunked kernels
(:mod:`lrnnkit.ops.gh.wy`, ``chunk_gh(backend="chunk")``) are checked, outputs and every gradient, in
ops/gh/test_wy.py.

Error measure: ||out - ref||_F / ||ref||_F, ref = the float64 naive loop on the SAME (already rounded) inputs.
Bounds per dtype (why):
* float64 / float32 compute: every factor I - beta k k^T (unit k, beta in [0, 2]) is a contraction, so rounding
  errors made at each of the T*n_h steps are not amplified; each step's mat-vec products carry at most ~(K + 4) u
  relative error. Bound: ``(T*n_h + 1) * (K + 4) * u`` with u = 2^-53 / 2^-24 (a worst-case sum, loose).
* bf16 / fp16 inputs in the fused recurrent kernel: computed in float32, then one conversion of each output to the
  input dtype. Round-to-nearest errs by <= half an ulp, but the CPU interpreter converts by truncation (<= 1 ulp),
  so we allow one ulp relative: 2^-7 (bf16, 8 significant bits) / 2^-10 (fp16, 11 bits), per element hence also
  for the norm of the error.
"""
from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings, strategies as st

from lrnnkit.errors import InputError
from lrnnkit.ops._triton import INTERPRET
from lrnnkit.ops.gh.fused_recurrent import fused_recurrent_delta_product, fused_recurrent_gated_delta_rule
from lrnnkit.ops.gh.naive import delta_product_naive
from lrnnkit.ops.gh.reference import chunk_gh_torch
from lrnnkit.ops.gh.api import chunk_gh

DEV = "cpu" if INTERPRET else "cuda"   # Triton interpreter on CPU tensors, else compiled on CUDA
U = {torch.float64: 2.0 ** -53, torch.float32: 2.0 ** -24}
ULP = {torch.bfloat16: 2.0 ** -7, torch.float16: 2.0 ** -10}


def rel(a, b):
    a, b = a.double(), b.double()
    assert torch.isfinite(a).all(), "kernel produced NaN/inf"
    return float((a - b).norm() / b.norm())


def make(B, T, NH, H, K, V, dtype, gen, gate=False):
    f = torch.float64
    q = torch.randn(B, T, H, K, dtype=f, generator=gen).to(dtype)
    k = torch.nn.functional.normalize(torch.randn(B, T, NH, H, K, dtype=f, generator=gen), dim=-1).to(dtype)
    v = torch.randn(B, T, NH, H, V, dtype=f, generator=gen).to(dtype)
    beta = (2 * torch.rand(B, T, NH, H, dtype=f, generator=gen)).to(dtype)
    beta[..., 0] = 2.0   # the reflection end of the range, exactly
    g = -torch.rand(B, T, H, dtype=f, generator=gen) if gate else None
    h0 = torch.randn(B, H, K, V, dtype=f, generator=gen)
    mv = lambda x: None if x is None else x.to(DEV)  # noqa: E731
    return mv(q), mv(k), mv(v), mv(beta), mv(g), mv(h0)


def reference(q, k, v, beta, g, h0, scale):
    d = lambda x: None if x is None else x.double()  # noqa: E731
    return delta_product_naive(d(q), d(k), d(v), d(beta), d(g), scale=scale, initial_state=d(h0),
                               output_final_state=True, validate=False)


def fresh_gen(seed):
    gen = torch.Generator().manual_seed(seed)
    return gen


shapes = st.tuples(st.integers(1, 2), st.integers(1, 9), st.integers(1, 3), st.integers(1, 2),
                   st.sampled_from([4, 8, 16]), st.sampled_from([3, 8, 16]))


@pytest.mark.triton
@settings(max_examples=4, deadline=None)
@given(shapes, st.sampled_from([torch.float64, torch.float32, torch.bfloat16, torch.float16]), st.booleans(),
       st.integers(0, 2 ** 31 - 1))
def test_fused_recurrent_matches_naive(shape, dtype, gate, seed):
    B, T, NH, H, K, V = shape
    q, k, v, beta, g, h0 = make(B, T, NH, H, K, V, dtype, fresh_gen(seed), gate)
    o, ht = fused_recurrent_delta_product(q, k, v, beta, g, scale=0.7, initial_state=h0, output_final_state=True)
    r, rt = reference(q, k, v, beta, g, h0, 0.7)
    assert o.dtype == dtype and o.shape == (B, T, H, V)
    comp = U.get(dtype, U[torch.float32])
    tol_state = (T * NH + 1) * (K + 4) * comp
    tol_out = tol_state + ULP.get(dtype, 0.0)
    assert rel(ht, rt) <= tol_state
    assert rel(o, r) <= tol_out


@settings(max_examples=5, deadline=None)
@given(st.integers(1, 30), st.integers(1, 3), st.sampled_from([4, 8, 16]), st.booleans(), st.integers(0, 2 ** 31 - 1))
def test_torch_chunk_form_equals_recurrence(T, NH, C, gate, seed):
    """The chunk equations (docs/algorithms.rst, WY/UT form; :func:`lrnnkit.ops.gh.reference.chunk_gh_torch`, the
    reference of the Triton chunk kernels) compute the same function as the recurrence (float64), gated or not."""
    q, k, v, beta, g, h0 = make(2, T, NH, 2, 8, 5, torch.float64, fresh_gen(seed), gate)
    o, ht = chunk_gh_torch(q, k, v, beta, g, scale=1.3, initial_state=h0, chunk_size=C)
    r, rt = reference(q, k, v, beta, g, h0, 1.3)
    tol = (T * NH + C + 1) * 64 * U[torch.float64]
    assert rel(o, r) <= tol and rel(ht, rt) <= tol


@pytest.mark.triton
@settings(max_examples=4, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=4), st.integers(1, 3),
       st.sampled_from([torch.float64, torch.float32, torch.bfloat16]), st.booleans(), st.integers(0, 2 ** 31 - 1))
def test_fused_recurrent_packed_sequences_with_states(lens, NH, dtype, gate, seed):
    """Packed sequences (cu_seqlens, B = 1; empty ones too, their state passes through) from their own initial
    states, in one launch: each sequence is the naive loop on it alone (the layer's decode step is the case of
    length 1). Bounds as in test_fused_recurrent_matches_naive."""
    cu = [0]
    for n in lens:
        cu.append(cu[-1] + n)
    T, N, H, K, V = cu[-1], len(lens), 2, 8, 5
    q, k, v, beta, g, _ = make(1, T, NH, H, K, V, dtype, fresh_gen(seed), gate)
    h0 = torch.randn(N, H, K, V, dtype=torch.float64, generator=fresh_gen(seed + 1)).to(DEV)
    o, ht = fused_recurrent_delta_product(q, k, v, beta, g, scale=0.9, initial_state=h0, output_final_state=True,
                                          cu_seqlens=torch.tensor(cu, device=DEV))
    assert o.shape == (1, T, H, V) and ht.shape == (N, H, K, V)
    comp = U.get(dtype, U[torch.float32])
    for n, (a, b) in enumerate(zip(cu[:-1], cu[1:])):
        sl = slice(a, b)
        r, rt = reference(q[:, sl], k[:, sl], v[:, sl], beta[:, sl], None if g is None else g[:, sl], h0[n:n + 1],
                          0.9)
        tol = ((b - a) * NH + 1) * (K + 4) * comp
        assert rel(ht[n:n + 1], rt) <= tol
        if b > a:
            assert rel(o[:, sl], r) <= tol + ULP.get(dtype, 0.0)


def _interleave(x):
    """(B, T, n, ...) -> fla's (B, T*n, ...) rows: token t's step j at row t*n + j."""
    return x.flatten(1, 2)


@pytest.mark.triton
@pytest.mark.parametrize("gva,v_first", [(1, False), (2, True)])
def test_fla_decode_signature_is_the_product(gva, v_first):
    """fla's decode path for DeltaProduct (GatedDeltaProduct, mode fused_recurrent): the n_h steps of every token as
    n_h rows of fused_recurrent_gated_delta_rule, the gate on the first row, the query on the last (zeros
    elsewhere), raw q, k normalized in the kernel, raw beta through the sigmoid (x2, negative eigenvalues), raw gate
    through -exp(A_log) softplus(g + dt_bias), packed sequences at cu_seqlens * n_h. Every n_h-th output and the
    final state equal the canonical kernel run on the token-level inputs (float64, 1e-12)."""
    gen, f, n, H, K, V = fresh_gen(3), torch.float64, 2, 2, 8, 4
    HV = H * gva
    cu = torch.tensor([0, 3, 7])
    T = 7
    q = torch.randn(1, T, H, K, dtype=f, generator=gen)
    k = torch.randn(1, T, n, H, K, dtype=f, generator=gen)
    v = torch.randn(1, T, n, HV, V, dtype=f, generator=gen)
    b = torch.randn(1, T, n, HV, dtype=f, generator=gen)
    a = torch.randn(1, T, HV, dtype=f, generator=gen)
    A_log, dt_bias = torch.randn(HV, dtype=f, generator=gen), torch.randn(HV, dtype=f, generator=gen)
    h0 = torch.randn(2, HV, K, V, dtype=f, generator=gen)
    # fla's layer: q on the last sub-step, the raw gate on the first
    q_rows = torch.zeros(1, T, n, H, K, dtype=f)
    q_rows[:, :, -1] = q
    g_rows = torch.zeros(1, T, n, HV, dtype=f)
    g_rows[:, :, 0] = a
    o, ht = fused_recurrent_gated_delta_rule(
        _interleave(q_rows), _interleave(k), _interleave(v), g=_interleave(g_rows), beta=_interleave(b),
        initial_state=h0.transpose(-1, -2) if v_first else h0, output_final_state=True,
        use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True, A_log=A_log, dt_bias=dt_bias,
        use_beta_sigmoid_in_kernel=True, allow_neg_eigval=True, state_v_first=v_first, cu_seqlens=cu * n)
    # the same recurrence at token level; fla's zero-gate rows are exp(-exp(A) softplus(dt_bias)) -- not 1 --
    # so its gate on the other rows is part of fla's decode math, reproduced here
    gfull = -A_log.exp() * torch.nn.functional.softplus(g_rows + dt_bias)       # (1, T, n, HV)
    unit = lambda x: x / torch.sqrt(x.square().sum(-1, keepdim=True) + 1e-6)   # noqa: E731
    rep = lambda x: x.repeat_interleave(gva, dim=-2)                            # noqa: E731
    want_o, want_s = [], []
    for s, (lo, hi) in enumerate([(0, 3), (3, 7)]):
        S = h0[s]
        for t in range(lo, hi):
            for j in range(n):
                S = torch.exp(gfull[0, t, j])[:, None, None] * S
                kj, bj = rep(unit(k[0, t, j])), 2 * torch.sigmoid(b[0, t, j])
                S = S + bj[:, None, None] * kj[:, :, None] * (v[0, t, j] - torch.einsum("hk,hkv->hv", kj, S))[:, None]
            want_o.append(K ** -0.5 * torch.einsum("hk,hkv->hv", rep(unit(q[0, t])), S))
        want_s.append(S)
    got_s = ht.transpose(-1, -2) if v_first else ht
    assert o.shape == (1, T * n, HV, V) and ht.dtype == torch.float64
    assert err_max(o.reshape(1, T, n, HV, V)[0, :, -1], torch.stack(want_o)) <= 1e-12
    assert err_max(got_s, torch.stack(want_s)) <= 1e-12


def err_max(a, b) -> float:
    return float((a - b).abs().max())


@pytest.mark.triton
def test_fla_decode_signature_refusals():
    q, k, v, beta = (x[:, :, 0] if x.ndim == 5 else x for x in small())
    beta = beta[..., 0] if beta.ndim == 4 else beta
    for kw, needle in ((dict(gk=torch.zeros(1, 3, 1, 4)), "gk"), (dict(gv=torch.zeros(1, 3, 1, 4)), "gv"),
                       (dict(allow_neg_eigval=True), "use_beta_sigmoid_in_kernel"),
                       (dict(use_gate_in_kernel=True, g=torch.zeros(1, 3, 1)), "A_log")):
        with pytest.raises(InputError) as e:
            fused_recurrent_gated_delta_rule(q, k, v, beta=beta, **kw)
        assert needle in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(InputError, match="head-wise"):
        fused_recurrent_gated_delta_rule(q, k, v, beta=beta[..., None].expand(*beta.shape, 4))


# ------------------------------------------------------------------------------------------ bad input
def small(dtype=torch.float32):
    return make(1, 3, 1, 1, 4, 4, dtype, fresh_gen(7))[:4]


def chunked(q, k, v, beta, g=None, normalize=False):
    """``chunk_gh(backend="chunk")`` (the Triton WY kernels of lrnnkit.ops.gh.wy) called with the naive loop's
    arguments, in fla's order and with its own checks (validate on by default); ``normalize`` is fla's
    ``use_qk_l2norm_in_kernel``, which normalizes q as well as k."""
    return chunk_gh(q, k, v, g, beta, 1 if k.ndim == 4 else k.shape[2], use_qk_l2norm_in_kernel=normalize,
                    backend="chunk")


# the entry points and their input checks (lrnnkit.ops.gh.inputs.prepare for the first two, chunk_gh's own for
# the third)
KERNELS = [delta_product_naive, fused_recurrent_delta_product, chunked]


@pytest.mark.triton
@pytest.mark.parametrize("fn", KERNELS)
def test_unnormalized_keys_refused_or_normalized(fn):
    q, k, v, beta = small()
    k2 = k * 1.5
    with pytest.raises(InputError, match="unit"):
        fn(q, k2, v, beta)
    o, _ = fn(q, k2, v, beta, normalize=True)
    r, _ = delta_product_naive(torch.nn.functional.normalize(q, dim=-1) if fn is chunked else q, k, v, beta)
    assert rel(o, r) <= 1e-5  # normalized keys equal the original unit keys up to float32 rounding


@pytest.mark.triton
@pytest.mark.parametrize("fn", KERNELS)
@pytest.mark.parametrize("bad", [2.0001, -1e-3])
def test_beta_outside_range_refused(fn, bad):
    q, k, v, beta = small()
    beta = beta.clone()
    beta[0, 1, 0, 0] = bad
    with pytest.raises(InputError, match=r"\[0.0, 2.0\]"):
        fn(q, k, v, beta)


@pytest.mark.triton
@pytest.mark.parametrize("fn", KERNELS)
@pytest.mark.parametrize("which", [0, 2])
@pytest.mark.parametrize("val", [float("nan"), float("inf")])
def test_nonfinite_refused(fn, which, val):
    xs = list(small())
    xs[which] = xs[which].clone()
    xs[which].view(-1)[1] = val
    with pytest.raises(InputError, match="NaN or infinity"):
        fn(*xs)


@pytest.mark.triton
@pytest.mark.parametrize("fn", KERNELS)
def test_bad_shapes_and_dtypes_refused(fn):
    q, k, v, beta = small()
    with pytest.raises(InputError, match="beta"):
        fn(q, k, v, beta[:, :2])
    with pytest.raises(InputError, match="q"):
        fn(q[0], k, v, beta)
    with pytest.raises(InputError, match="dtype"):
        fn(q, k.double(), v, beta)
    with pytest.raises(InputError, match="dtype"):
        fn(q.to(torch.int32), k, v, beta)


@pytest.mark.triton
def test_fused_recurrent_refuses_grad():
    q, k, v, beta = small()
    with pytest.raises(InputError, match="backward"):
        fused_recurrent_delta_product(q.requires_grad_(True), k, v, beta)
