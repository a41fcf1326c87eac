"""Input validation shared by the kernels: bad input raises :class:`lrnnkit.errors.InputError`, never silent
garbage.

The GH (DeltaNet / DeltaProduct) recurrences are stable only for unit keys and ``beta in [0, 2]``: then every factor
``I - beta k k^T`` has eigenvalues ``1`` and ``1 - beta in [-1, 1]`` and spectral norm <= 1 (paper 000,
Proposition 1; docs/algorithms.rst "The chunked delta rule": the entries of the chunk's ``T = (I + strictly_lower(diag(b) K
K^T))^{-1}`` stay bounded only then). Unnormalized keys make the state grow geometrically, so they are refused
unless the caller asks for normalization explicitly.
"""
from __future__ import annotations

import torch

from ..errors import InputError
from .l2norm import l2norm_torch

FLOAT_DTYPES = (torch.float64, torch.float32, torch.float16, torch.bfloat16)

# Allowed | ||k||_2 - 1 | for keys given in each dtype. A unit vector rounded to the dtype has every entry off by
# at most one half ulp (relative 2^-p, p = mantissa bits + 1), so its squared norm is off by at most ~2 * 2^-p
# relative and its norm by ~2^-p; we allow 4x that, plus the fp32 summation error for K up to a few thousand.
KEY_NORM_TOL = {torch.float64: 1e-9, torch.float32: 1e-5, torch.float16: 4 * 2.0 ** -11,
                torch.bfloat16: 4 * 2.0 ** -8}


def acc_dtype(dtype: torch.dtype) -> torch.dtype:
    """Accumulation / state dtype: float64 for float64 inputs, float32 otherwise (fp32 state accumulation)."""
    return torch.float64 if dtype == torch.float64 else torch.float32


def check_float(name: str, x: torch.Tensor, dtype: torch.dtype | None = None) -> None:
    if not isinstance(x, torch.Tensor):
        raise InputError(f"{name}: expected a torch.Tensor, got {type(x).__name__}")
    if x.dtype not in FLOAT_DTYPES:
        raise InputError(f"{name}: unsupported dtype {x.dtype} (supported: float64, float32, float16, bfloat16)")
    if dtype is not None and x.dtype != dtype:
        raise InputError(f"{name}: dtype {x.dtype} differs from the other inputs' {dtype}")
    if x.numel() and not bool(torch.isfinite(x).all()):
        bad = torch.nonzero(~torch.isfinite(x))[0].tolist()
        raise InputError(f"{name}: contains NaN or infinity (first at index {bad})")


def check_shape(name: str, x: torch.Tensor, shape: tuple) -> None:
    if tuple(x.shape) != tuple(shape):
        raise InputError(f"{name}: expected shape {tuple(shape)}, got {tuple(x.shape)}")


def check_unit_rows(name: str, k: torch.Tensor) -> None:
    """Every vector along the last axis must have Euclidean norm 1 within the dtype's rounding."""
    if k.numel() == 0:
        return
    n = torch.linalg.vector_norm(k.to(acc_dtype(k.dtype)), dim=-1)
    err = (n - 1).abs()
    tol = KEY_NORM_TOL[k.dtype]
    if bool((err > tol).any()):
        i = int(torch.argmax(err.reshape(-1)))
        idx = list(torch.unravel_index(torch.tensor(i), err.shape))
        raise InputError(f"{name}: keys must be unit vectors (||k||_2 = 1 within {tol:.1e} for {k.dtype}); "
                         f"key at index {[int(j) for j in idx]} has norm {float(n.reshape(-1)[i]):.6g}; "
                         "normalize them or pass normalize=True")


def check_range(name: str, x: torch.Tensor, lo: float, hi: float) -> None:
    if x.numel() == 0:
        return
    bad = ~((x >= lo) & (x <= hi))   # NaN fails both comparisons, so it is refused here too
    if bool(bad.any()):
        i = torch.nonzero(bad)[0].tolist()
        raise InputError(f"{name}: values must lie in [{lo}, {hi}]; found {float(x[tuple(i)]):.6g} at index {i}")


def l2_normalize(k: torch.Tensor) -> torch.Tensor:
    """``k / ||k||_2`` along the last axis: :func:`lrnnkit.ops.l2norm.l2norm_torch` with ``eps = 0`` (computed in
    the accumulation dtype), zero vectors refused rather than divided by zero."""
    n = torch.linalg.vector_norm(k.to(acc_dtype(k.dtype)), dim=-1)
    if bool((n == 0).any()):
        i = torch.nonzero(n == 0)[0].tolist()
        raise InputError(f"keys: cannot normalize a zero key (index {i})")
    return l2norm_torch(k, eps=0.0)


def check_gh(q, k, v, beta, g=None, initial_state=None, *, finite: bool = True, unit_keys: bool = True,
             ranges: bool = True, same_dtype: bool = False) -> None:
    """The GH (DeltaNet / DeltaProduct) inputs, checked in one place (paper 000, Proposition 1: every factor
    ``I - beta k k^T`` is a contraction for ``||k|| = 1`` and ``beta in [0, 2]``): ``finite``, every tensor a
    finite float (``same_dtype``: k and v in q's dtype); ``unit_keys``, unit keys (left out where the keys were just
    normalized with an eps, which leaves their norms just under 1: the factors stay contractions); ``ranges``,
    ``beta in [0, 2]`` and the log-gate ``g <= 0``."""
    if finite:
        for name, x in (("q", q), ("k", k), ("v", v), ("beta", beta), ("g", g), ("initial_state", initial_state)):
            if x is not None:
                check_float(name, x, q.dtype if same_dtype and name in ("k", "v") else None)
    if unit_keys:
        check_unit_rows("k", k)
    if ranges:
        check_range("beta", beta, 0.0, 2.0)
        if g is not None:
            check_range("g", g, float("-inf"), 0.0)


def check_offsets(where: str, cu_seqlens, T: int) -> list:
    """The sequence offsets ``cu_seqlens`` as a list of ints: a 1-D integer torch.Tensor rising from 0 to ``T``
    (fla's LongTensor); a float tensor (whose values would be truncated), a list or anything else is an
    InputError naming ``where``."""
    if not isinstance(cu_seqlens, torch.Tensor) or cu_seqlens.ndim != 1 or cu_seqlens.dtype.is_floating_point \
            or cu_seqlens.dtype.is_complex or cu_seqlens.dtype == torch.bool:
        got = (f"a {cu_seqlens.ndim}-D {cu_seqlens.dtype} tensor" if isinstance(cu_seqlens, torch.Tensor)
               else type(cu_seqlens).__name__)
        raise InputError(f"{where}cu_seqlens: expected a 1-D integer torch.Tensor of sequence offsets (fla's "
                         f"LongTensor), got {got}")
    cu = [int(t) for t in cu_seqlens.tolist()]
    if len(cu) < 2 or cu[0] != 0 or cu[-1] != T or any(b < a for a, b in zip(cu, cu[1:])):
        raise InputError(f"{where}cu_seqlens must rise from 0 to T = {T}, got {cu[:8]}{'...' if len(cu) > 8 else ''}")
    return cu
