"""``chunk_gh``: the trainable GH-product layer (DeltaNet n_h = 1, DeltaProduct n_h > 1, optionally gated) in
fla's layout, differentiable, with packed variable-length batches.

Math (paper 001, DeltaProduct; fla's ``chunk_gated_delta_product`` convention): per token t, first
``S <- exp(g_t) S`` (if a gate is given), then for j = 1..n_h ``S <- (I - b_j k_j k_j^T) S + b_j k_j v_j^T``, and
``o_t = scale * S^T q_t``. Keys must be unit vectors and ``b in [0, 2]`` (eigenvalue ``1 - b in [-1, 1]``).
"""
from __future__ import annotations

import math
import numbers

import torch

from ...errors import InputError
from .._checks import check_gh, check_offsets
from ..l2norm import l2norm

BACKENDS = ("chunk", "torch", "naive")


def canonical(q, k, v, beta, g, n_h: int, cu_seqlens, initial_state):
    """fla layout -> canonical shapes. q (B,T,H,K); k, v either (B, T*n_h, H, .) interleaved (fla) or
    (B, T, n_h, H, .); beta (B, T*n_h, H) or (B, T, n_h, H); g (B, T, H) per token or None."""
    for name, x in (("q", q), ("k", k), ("v", v), ("beta", beta)):
        if not isinstance(x, torch.Tensor):
            raise InputError(f"{name}: expected a torch.Tensor, got {type(x).__name__}")
    if q.ndim != 4:
        raise InputError(f"q: expected shape (B, T, H, K), got {tuple(q.shape)}")
    if not isinstance(n_h, int) or n_h < 1:
        raise InputError(f"n_h must be a positive integer, got {n_h!r}")
    B, T, H, K = q.shape
    for name, x in (("q", q), ("k", k), ("v", v)):
        if 0 in x.shape:
            raise InputError(f"{name}: every axis must have length >= 1, got shape {tuple(x.shape)}")
    for name, x in (("beta", beta), ("g", g), ("initial_state", initial_state)):
        if x is not None and not isinstance(x, torch.Tensor):
            raise InputError(f"{name}: expected a torch.Tensor or None, got {type(x).__name__}")
        if x is not None and not x.dtype.is_floating_point:
            raise InputError(f"{name}: expected a floating-point tensor, got dtype {x.dtype}")

    def five(name, x, width):
        if x.ndim == 4 and x.shape[:3] == (B, T * n_h, H):
            return x.reshape(B, T, n_h, H, x.shape[-1])
        if x.ndim == 5 and x.shape[:4] == (B, T, n_h, H):
            return x
        raise InputError(f"{name}: expected shape (B, T*n_h, H, {width}) or (B, T, n_h, H, {width}) with "
                         f"B={B}, T={T}, n_h={n_h}, H={H}; got {tuple(x.shape)}")

    k = five("k", k, "K")
    v = five("v", v, "V")
    if k.shape[-1] != K:
        raise InputError(f"k: last axis {k.shape[-1]} differs from q's {K}")
    if beta.ndim == 3 and beta.shape == (B, T * n_h, H):
        beta = beta.reshape(B, T, n_h, H)
    elif not (beta.ndim == 4 and beta.shape == (B, T, n_h, H)):
        raise InputError(f"beta: expected shape (B, T*n_h, H) or (B, T, n_h, H); got {tuple(beta.shape)}")
    if g is not None and (not isinstance(g, torch.Tensor) or g.shape != (B, T, H)):
        raise InputError(f"g: expected a tensor of shape (B, T, H) = {(B, T, H)}, got "
                         f"{tuple(g.shape) if isinstance(g, torch.Tensor) else type(g).__name__}")
    for name, x in (("k", k), ("v", v)):
        if x.dtype != q.dtype:
            raise InputError(f"{name}: dtype {x.dtype} differs from q's {q.dtype}")
    if q.dtype not in (torch.float64, torch.float32, torch.float16, torch.bfloat16):
        raise InputError(f"q: unsupported dtype {q.dtype}")
    N = B
    if cu_seqlens is not None:
        if B != 1:
            raise InputError(f"cu_seqlens needs packed inputs with B = 1, got B = {B}")
        N = len(check_offsets("", cu_seqlens, T)) - 1
    if initial_state is not None and tuple(initial_state.shape) != (N, H, K, v.shape[-1]):
        raise InputError(f"initial_state: expected shape {(N, H, K, v.shape[-1])}, got {tuple(initial_state.shape)}")
    return q, k, v, beta, g, N


def check_keep_states(where: str, keep_states) -> None:
    """An InputError naming ``where`` unless ``keep_states`` is True, False or None (chunk_gh, DeltaProductLayer)."""
    if keep_states not in (None, True, False):
        raise InputError(f"{where}: keep_states must be True, False or None, got {keep_states!r}")


def chunk_gh(q, k, v, g, beta, num_householder: int = 1, scale: float | None = None, initial_state=None,
             output_final_state: bool = False, use_qk_l2norm_in_kernel: bool = False, cu_seqlens=None,
             cu_seqlens_cpu=None, cp_context=None, *, chunk_size: int | None = None, backend: str = "chunk", validate: bool = True,
             fp32_precision: str | None = None, keep_states: bool | None = None):
    """Differentiable gated DeltaProduct (paper 001) with fla's ``chunk_gated_delta_product`` signature: the same
    positional order ``(q, k, v, g, beta, num_householder, scale, initial_state, output_final_state,
    use_qk_l2norm_in_kernel, cu_seqlens, cu_seqlens_cpu, cp_context)``, keyword names and defaults (scale
    ``K ** -0.5``, no initial or final state, no in-kernel normalization); returns ``(o, final_state or None)``.
    ``cu_seqlens_cpu``: the same boundaries as a CPU tensor (fla's way of sparing a device-to-host copy); lrnnkit's
    kernels read the boundaries on the host, so they read these (checked equal to ``cu_seqlens`` when
    ``validate``). Refused, one line each: ``cp_context`` (fla's context parallelism splits one sequence over
    several GPUs; lrnnkit's kernels run on one device), ``cu_seqlens_cpu`` without ``cu_seqlens``. Accepted beyond
    fla: float32 and float64 inputs (fla's chunk refuses float32), k, v, beta also in the (B, T, n_h, H, .) layout.

    ``o`` (B, T, H, V) in q's dtype; ``final_state`` (N, H, K, V) in float32 (float64 for float64 inputs), N = B or
    the number of packed sequences (``cu_seqlens``, B = 1). ``g`` (B, T, H) log-decays <= 0 or None (pass None
    explicitly, as in fla). ``scale`` defaults to ``K ** -0.5`` as in fla. ``use_qk_l2norm_in_kernel``
    L2-normalizes q and k inside. ``validate`` (default on) checks finite inputs, unit keys, ``beta in [0, 2]`` and
    ``g <= 0`` -- a call with g and beta swapped fails it -- at the cost of a host sync; trusted callers
    (:class:`lrnnkit.layers.DeltaProductLayer`) turn it off.
    ``backend``: "chunk" (:mod:`.wy`: Triton WY kernels with a Triton backward; CUDA tensors, or CPU tensors
    under the Triton interpreter, which is only fast enough for tests: train on CPU with "torch"), "torch" (the same
    chunk equations in torch, autograd, any device), "naive" (the sequential loop, autograd).
    ``chunk_size``: 16, 32 or 64; None picks the chunk of the table chosen ahead of time for this GPU and head
    width where it has one, else 64, or 16 for float32 inputs with 3xTF32 products
    (:func:`lrnnkit.ops.gh.wy.default_chunk`); backend "torch": None picks 16
    (:data:`lrnnkit.ops.gh.reference.TORCH_CHUNK`). ``fp32_precision`` (float32 inputs, backend "chunk"): the
    tensor-core products, "tf32x3" (default, errors ~1e-6), "tf32" (one pass on operands rounded to tf32, ~1e-3)
    or "ieee"; None takes ``lrnnkit.ops.gh.wy_config.FP32_PRECISION``. ``keep_states`` (backend "chunk"):
    True keeps the forward's chunk states S_n and U' for the backward (when one will run: an input needs a
    gradient) instead of recomputing them there -- faster for float32 (benchmarks/RESULTS.md, "kernels"), for
    K V / C + V more saved numbers per position and head in the intermediate dtype; False recomputes; None takes
    the kernel table's ``keep`` (off).
    """
    n_h = num_householder
    if isinstance(n_h, torch.Tensor) or isinstance(n_h, bool) or not isinstance(n_h, int):
        raise InputError(f"chunk_gh: num_householder must be a positive integer, got "
                         f"{type(n_h).__name__ if isinstance(n_h, torch.Tensor) else repr(n_h)} (fla's argument "
                         "order is (q, k, v, g, beta, num_householder))")
    if beta is None:
        raise InputError("chunk_gh: beta is required (fla's argument order is (q, k, v, g, beta, num_householder))")
    if scale is not None and (isinstance(scale, (bool, torch.Tensor)) or not isinstance(scale, numbers.Real)
                              or not math.isfinite(scale)):
        raise InputError(f"chunk_gh: scale must be a finite real number or None, got {type(scale).__name__} (fla's "
                         "argument order is (q, k, v, g, beta, num_householder, scale, initial_state, ...))")
    normalize_qk = bool(use_qk_l2norm_in_kernel)
    check_keep_states("chunk_gh", keep_states)
    if backend not in BACKENDS:
        raise InputError(f"chunk_gh: unknown backend {backend!r} (choose from {', '.join(BACKENDS)})")
    if cp_context is not None:
        raise InputError("chunk_gh: cp_context (fla's context parallelism over several GPUs) is not supported: "
                         "lrnnkit's kernels run on one device")
    if cu_seqlens_cpu is not None:
        if cu_seqlens is None:
            raise InputError("chunk_gh: cu_seqlens_cpu needs cu_seqlens (it is a host copy of the same boundaries)")
        if not isinstance(cu_seqlens_cpu, torch.Tensor) or cu_seqlens_cpu.device.type != "cpu" \
                or cu_seqlens_cpu.ndim != 1 or cu_seqlens_cpu.is_floating_point():
            raise InputError("chunk_gh: cu_seqlens_cpu must be a 1-D integer tensor on the CPU")
        if validate and not torch.equal(cu_seqlens_cpu.long(), cu_seqlens.detach().cpu().long()):
            raise InputError(f"chunk_gh: cu_seqlens_cpu {cu_seqlens_cpu.tolist()[:8]} differs from cu_seqlens")
        cu_seqlens = cu_seqlens_cpu      # every backend reads the boundaries on the host
    q, k, v, beta, g, N = canonical(q, k, v, beta, g, n_h, cu_seqlens, initial_state)
    K = q.shape[-1]
    scale = K ** -0.5 if scale is None else float(scale)
    if normalize_qk:   # differentiable, no host sync (fla's use_qk_l2norm_in_kernel)
        q, k = l2norm(q), l2norm(k)
    if validate:   # keys normalized here are unit up to l2norm's eps (norm <= 1, the factors stay contractions)
        check_gh(q, k, v, beta, g, initial_state, unit_keys=not normalize_qk)
    if backend == "chunk":
        from .wy import chunk_gh_triton
        o, ht = chunk_gh_triton(q, k, v, beta, g, scale, initial_state, cu_seqlens, chunk_size, fp32_precision,
                                keep_states)
    elif backend == "torch":
        from .reference import TORCH_CHUNK, chunk_gh_torch
        o, ht = chunk_gh_torch(q, k, v, beta, g, scale=scale, initial_state=initial_state, cu_seqlens=cu_seqlens,
                               chunk_size=TORCH_CHUNK if chunk_size is None else chunk_size)
    else:
        o, ht = _naive_varlen(q, k, v, beta, g, scale, initial_state, cu_seqlens)
    return o.to(q.dtype), (ht if output_final_state else None)


def _naive_varlen(q, k, v, beta, g, scale, h0, cu_seqlens):
    from .naive import delta_product_naive
    if cu_seqlens is None:
        return delta_product_naive(q, k, v, beta, g, scale=scale, initial_state=h0, output_final_state=True,
                                   validate=False)
    bounds = [int(x) for x in cu_seqlens.tolist()]
    outs, finals = [], []
    for s, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
        sl = slice(a, b)
        o, S = delta_product_naive(q[:, sl], k[:, sl], v[:, sl], beta[:, sl], None if g is None else g[:, sl],
                                   scale=scale, initial_state=None if h0 is None else h0[s:s + 1],
                                   output_final_state=True, validate=False)
        outs.append(o)
        finals.append(S)
    return torch.cat(outs, 1), torch.cat(finals, 0)
