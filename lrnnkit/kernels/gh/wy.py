"""Placeholder: the Triton WY kernels (forward and backward) land here; until then the chunk equations in torch."""
from __future__ import annotations


def chunk_gh_triton(q, k, v, beta, g, scale, h0, cu_seqlens, chunk_size):
    from .reference import chunk_gh_torch
    return chunk_gh_torch(q, k, v, beta, g, scale=scale, initial_state=h0, cu_seqlens=cu_seqlens,
                          chunk_size=chunk_size)
