"""GH-product layer (DeltaNet / DeltaProduct, paper 001): the fused recurrent Triton kernel and the chunk equations
in torch vs the naive sequential reference; bad input refused by every entry point (naive, fused recurrent, and
``chunk_gh(backend="chunk")``'s chunked kernels behind fla's signature). The trainable chunked kernels
(:mod:`lrnnkit.kernels.gh.wy`, ``chunk_gh(backend="chunk")``) are checked, outputs and every gradient, in
kernels/gh/test_wy.py.

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
from lrnnkit.kernels._triton import INTERPRET
from lrnnkit.kernels.gh.fused_recurrent import fused_recurrent_delta_product
from lrnnkit.kernels.gh.naive import delta_product_naive
from lrnnkit.kernels.gh.reference import chunk_gh_torch
from lrnnkit.kernels.gh.api import chunk_gh

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
    """The chunk equations (docs/algorithms.rst, WY/UT form; :func:`lrnnkit.kernels.gh.reference.chunk_gh_torch`, the
    reference of the Triton chunk kernels) compute the same function as the recurrence (float64), gated or not."""
    q, k, v, beta, g, h0 = make(2, T, NH, 2, 8, 5, torch.float64, fresh_gen(seed), gate)
    o, ht = chunk_gh_torch(q, k, v, beta, g, scale=1.3, initial_state=h0, chunk_size=C)
    r, rt = reference(q, k, v, beta, g, h0, 1.3)
    tol = (T * NH + C + 1) * 64 * U[torch.float64]
    assert rel(o, r) <= tol and rel(ht, rt) <= tol


# ------------------------------------------------------------------------------------------ bad input
def small(dtype=torch.float32):
    return make(1, 3, 1, 1, 4, 4, dtype, fresh_gen(7))[:4]


def chunked(q, k, v, beta, g=None, normalize=False):
    """``chunk_gh(backend="chunk")`` (the Triton WY kernels of lrnnkit.kernels.gh.wy) called with the naive loop's
    arguments, in fla's order and with its own checks (validate on by default); ``normalize`` is fla's
    ``use_qk_l2norm_in_kernel``, which normalizes q as well as k."""
    return chunk_gh(q, k, v, g, beta, 1 if k.ndim == 4 else k.shape[2], use_qk_l2norm_in_kernel=normalize,
                    backend="chunk")


# the entry points and their input checks (lrnnkit.kernels.gh.inputs.prepare for the first two, chunk_gh's own for
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
