"""flash-linear-attention (fla) as the peer of lrnnkit's GH kernels, for the benchmarks (fla travels as a wheel)."""
from __future__ import annotations


def fla_gh():
    """``call(q, k, v, beta, g, n_h, cu_seqlens=None) -> o`` running fla's chunked kernel for the case, in
    lrnnkit's canonical shapes (k, v (B, T, n_h, H, .), beta (B, T, n_h, H), g (B, T, H) or None), scale 1:
    ``chunk_delta_rule`` (n_h = 1), ``chunk_gated_delta_rule`` (n_h = 1 with a gate), ``chunk_gated_delta_product``
    (n_h > 1, the interleaved sequence, as ours). None when fla cannot be imported."""
    try:
        from fla.ops.delta_rule import chunk_delta_rule
        from fla.ops.gated_delta_product import chunk_gated_delta_product
        from fla.ops.gated_delta_rule import chunk_gated_delta_rule
    except Exception:   # the tables say n/a
        return None

    def call(q, k, v, b, g, nh, cu_seqlens=None):
        cl = None if cu_seqlens is None else cu_seqlens.long()
        if nh == 1 and g is None:
            return chunk_delta_rule(q, k[:, :, 0], v[:, :, 0], b[:, :, 0], scale=1.0, cu_seqlens=cl)[0]
        if nh == 1:
            return chunk_gated_delta_rule(q, k[:, :, 0], v[:, :, 0], g, b[:, :, 0], scale=1.0, cu_seqlens=cl)[0]
        return chunk_gated_delta_product(q, k.flatten(1, 2), v.flatten(1, 2), g, b.flatten(1, 2), nh, scale=1.0,
                                         cu_seqlens=cl)[0]
    return call
