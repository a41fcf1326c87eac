"""Incremental decoding of DeltaProductLayer in fla 0.6.0's cache contract (lrnnkit.layers.decode_cache): a prompt
run with ``use_cache=True`` and then one token at a time computes the full forward's outputs, for padded and packed
batches, and leaves in the cache fla's ``GatedDeltaProduct`` entries (keys, layouts, dtypes, contents).

Tolerances. float64: 1e-12 on O(1) outputs -- prefill + steps and the full forward are the same float64 arithmetic
in another order (chunks vs single steps) on a recurrence of contractions (unit keys, beta in [0, 2], exp(g) <= 1),
so rounding stays ~ T n K 2^-53 ~ 1e-13. float32 / bfloat16 layers (every weight and activation in that dtype, the
recurrent state float32 as in fla): relative Frobenius error between the two at most 2^-20 (float32: ~16 unit
roundoffs 2^-24 for the projections, norm and conv computed in another order; measured <= 2e-7) and 2^-6 (bfloat16:
4 unit roundoffs 2^-8; measured <= 6e-3), and the incremental outputs no further from the float64 computation of the
same weights than 1.5x the full forward's own error (measured <= 1.1x).
"""
from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings, strategies as st

from lrnnkit.errors import InputError
from lrnnkit.ops import short_conv
from lrnnkit.ops._triton import INTERPRET
from lrnnkit.layers.decode_cache import KEYS, RecurrentCache
from lrnnkit.ops.gh.naive import delta_product_naive

from .test_delta_product import F64, cfg_of, err, make_layer, reference

DEV = "cpu" if INTERPRET else "cuda"
TOL = 1e-12

CASES = [
    dict(),                                                        # fla's defaults, small
    dict(num_householder=3, use_forget_gate=False),
    dict(use_short_conv=False),
    dict(num_v_heads=4, conv_bias=True, expand_v=2),               # grouped value heads
    dict(conv_size=2, use_output_gate=False, allow_neg_eigval=False),
]


def decode(layer, x, cut: int, cache=None, mask=None):
    """Outputs of a prompt x[:, :cut] with the cache, then of every later token alone (masks widened as
    ``generate`` passes them: the whole history, ones appended)."""
    cache = RecurrentCache() if cache is None else cache
    outs = [layer(x[:, :cut], attention_mask=None if mask is None else mask[:, :cut], past_key_values=cache,
                  use_cache=True)[0]]
    for t in range(cut, x.shape[1]):
        outs.append(layer(x[:, t:t + 1], attention_mask=None if mask is None else mask[:, :t + 1],
                          past_key_values=cache, use_cache=True)[0])
    return torch.cat(outs, 1), cache


@pytest.mark.parametrize("mode", ["naive", "torch"])
@pytest.mark.parametrize("kw", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_prefill_then_steps_is_the_full_forward(kw, mode):
    layer = make_layer(3, mode, layer_idx=0, **kw)
    x = torch.randn(2, 11, 8, dtype=F64, generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        full = layer(x)[0]
        for cut in (2, 7):                                          # prompts shorter and longer than the conv
            inc, cache = decode(layer, x, cut)
            assert err(inc, full) <= TOL, cut
            assert cache.get_seq_length(0) == 11


@settings(max_examples=5, deadline=None)
@given(st.integers(1, 9), st.integers(0, 5), st.integers(0, 2 ** 31 - 1))
def test_prompt_chunks_then_steps(cut, more, seed):
    """A prompt in two pieces (the second starts from the cached state, its conv taps reading the cached window),
    then single steps: the full forward's outputs."""
    layer = make_layer(seed % 97, "torch", layer_idx=1, conv_bias=True)
    x = torch.randn(2, 15, 8, dtype=F64, generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        full = layer(x)[0]
        cache = RecurrentCache()
        cache.update(layer_idx=0, offset=0)                          # another layer's entry: layer 1 reads its own
        first = layer(x[:, :cut], past_key_values=cache, use_cache=True)[0]
        rest, _ = decode(layer, x[:, cut:], min(more, 15 - cut) or 1, cache)
        assert err(torch.cat([first, rest], 1), full) <= TOL
        assert cache.get_seq_length(1) == 15 and cache.get_seq_length(0) == 0


def _rel(a, b) -> float:
    a, b = a.double(), b.double()
    return float((a - b).norm() / b.norm())


@pytest.mark.parametrize("dtype,bound", [(torch.float32, 2.0 ** -20), (torch.bfloat16, 2.0 ** -6)])
def test_low_precision_decoding(dtype, bound):
    for seed in range(3):
        layer = make_layer(seed, "torch", layer_idx=0, hidden_size=16, head_dim=8, expand_v=2, num_v_heads=4)
        layer.to(dtype)
        x = torch.randn(3, 48, 16, generator=torch.Generator().manual_seed(seed)).to(dtype)
        with torch.no_grad():
            full = layer(x)[0]
            inc, cache = decode(layer, x, 21)
            exact = layer.double()(x.double())[0]
        assert inc.dtype == dtype and cache[0]["recurrent_state"].dtype == torch.float32      # fla's state dtype
        assert cache[0]["conv_state"][0].dtype == dtype
        assert _rel(inc, full) <= bound
        assert _rel(inc, exact) <= 1.5 * _rel(full, exact)


def test_padded_batch_decodes_each_row_alone():
    """fla's padding: a left-padded prompt (and a row with no prompt at all) prefilled under the mask, then steps
    with the mask of the whole history (as ``generate`` passes it): each row's outputs are those of its own
    tokens run alone; padding positions give 0."""
    layer = make_layer(5, "torch", layer_idx=0)
    T, cut = 12, 6
    mask = torch.ones(3, T, dtype=torch.long)
    mask[1, :4] = 0                                                 # left padding
    mask[2, :cut] = 0                                               # no prompt: starts from the empty state
    x = torch.randn(3, T, 8, dtype=F64, generator=torch.Generator().manual_seed(6))
    with torch.no_grad():
        inc, cache = decode(layer, x, cut, mask=mask)
        for b in range(3):
            keep = mask[b].bool()
            assert err(inc[b, keep], layer(x[b, keep][None])[0][0]) <= TOL
            assert torch.equal(inc[b, ~keep], torch.zeros_like(inc[b, ~keep]))
    assert cache[0]["recurrent_state"].shape[0] == 3                  # one state per batch row, as fla


def test_packed_prompts_then_batched_steps():
    """cu_seqlens prompts (N = 4 sequences, one empty) with the cache, then steps as an (N, 1, D) batch and as
    packed single tokens: each sequence continues from its own state."""
    layer = make_layer(7, "torch", layer_idx=0, num_v_heads=4)
    cu = [0, 5, 5, 8, 14]
    x = torch.randn(1, 14, 8, dtype=F64, generator=torch.Generator().manual_seed(8))
    steps = torch.randn(4, 3, 8, dtype=F64, generator=torch.Generator().manual_seed(9))
    with torch.no_grad():
        for packed_steps in (False, True):
            cache = RecurrentCache()
            layer(x, past_key_values=cache, use_cache=True, cu_seqlens=torch.tensor(cu))
            outs = []
            for t in range(3):
                if packed_steps:
                    o = layer(steps[:, t][None], past_key_values=cache, use_cache=True,
                              cu_seqlens=torch.arange(5))[0][0]
                else:
                    o = layer(steps[:, t:t + 1], past_key_values=cache, use_cache=True)[0][:, 0]
                outs.append(o)
            for n, (a, b) in enumerate(zip(cu[:-1], cu[1:])):
                alone = layer(torch.cat([x[0, a:b], steps[n]])[None])[0][0, -3:]
                assert err(torch.stack([o[n] for o in outs]), alone) <= TOL, (packed_steps, n)


@pytest.mark.parametrize("kw", [dict(), dict(use_short_conv=False), dict(num_v_heads=4, expand_v=2)])
def test_cache_entries_are_flas(kw):
    """fla's GatedDeltaProduct entries: the four FLALayer keys; recurrent_state (N, H_v, K, V), the state S the
    recurrence reaches (o_t = S^T q_t / sqrt(K)); conv_state the (q, k, v) windows (N, C, W) of the last W inputs
    before the convolution, newest last, zeros before the start; offset = T per call."""
    layer = make_layer(9, "torch", layer_idx=2, **kw)
    x = torch.randn(2, 6, 8, dtype=F64, generator=torch.Generator().manual_seed(10))
    cache = RecurrentCache()
    with torch.no_grad():
        layer(x, past_key_values=cache, use_cache=True)
        q, k, v, beta, g = layer.gh_inputs(x)
        _, S = delta_product_naive(q, k, v, beta, g, initial_state=None, output_final_state=True, validate=False)
    assert len(cache) == 3 and cache[0] == dict.fromkeys(KEYS) and tuple(cache[2]) == KEYS
    st = cache[2]
    Hv, K, V = layer.num_v_heads, layer.head_k_dim, layer.head_v_dim
    assert st["recurrent_state"].shape == (2, Hv, K, V) and err(st["recurrent_state"], S) <= TOL
    assert st["attn_state"] is None and st["ffn_state"] is None and cache.get_seq_length(2) == 6
    if not layer.use_short_conv:
        assert st["conv_state"] is None
        return
    W = layer.conv_size
    for conv, proj in zip(st["conv_state"], (layer.q_proj, layer.k_proj, layer.v_proj)):
        assert conv.shape == (2, proj.out_features, W) and conv.dtype == x.dtype
        assert torch.equal(conv, proj(x)[:, -W:].transpose(1, 2).detach())
    short = RecurrentCache()                                        # a prompt shorter than the window: zeros first
    with torch.no_grad():
        layer(x[:, :2], past_key_values=short, use_cache=True)
    qc = short[2]["conv_state"][0]
    assert torch.equal(qc[..., :W - 2], torch.zeros_like(qc[..., :W - 2]))
    assert torch.equal(qc[..., W - 2:], layer.q_proj(x[:, :2]).transpose(1, 2).detach())


def test_cache_object():
    """RecurrentCache keeps fla's update rules: None entries keep the stored one; offsets count per layer; rows
    reorder (beam search) in every tensor, tuples included; a missing layer is a KeyError as in fla."""
    c = RecurrentCache()
    s, w = torch.arange(6.).reshape(3, 2), (torch.arange(3.), torch.arange(3.) + 10)
    c.update(recurrent_state=s, conv_state=w, layer_idx=1, offset=4)
    c.update(recurrent_state=None, conv_state=None, layer_idx=1, offset=1)
    assert len(c) == 2 and c[1]["recurrent_state"] is s and c[1]["conv_state"] is w and c.get_seq_length(1) == 5
    assert c.get_seq_length(0) == 0 and c.get_seq_length(7) == 0
    c.reorder_cache(torch.tensor([2, 0]))
    assert c[1]["recurrent_state"].tolist() == [[4., 5.], [0., 1.]] and c[1]["conv_state"][1].tolist() == [12., 10.]
    with pytest.raises(KeyError):
        c[2]


def test_use_cache_without_a_cache_and_refusals():
    layer = make_layer(11, "torch")                                 # no layer_idx
    x = torch.randn(2, 5, 8, dtype=F64)
    with torch.no_grad():
        o, _, cache = layer(x, use_cache=True)                       # fla: computed, nowhere to store
        assert cache is None and torch.equal(o, layer(x)[0])
    with pytest.raises(InputError) as e:
        layer(x, past_key_values=RecurrentCache(), use_cache=True)
    assert "layer_idx" in str(e.value) and "\n" not in str(e.value)


@pytest.mark.triton
@pytest.mark.parametrize("kw", [dict(conv_bias=True), dict(allow_neg_eigval=False, use_forget_gate=False,
                                                          num_v_heads=4)])
def test_triton_prefill_and_steps(kw, monkeypatch):
    """The CUDA paths, forced here in the Triton interpreter: the prompt through the chunked WY kernels with the
    final state out, every step through the fused recurrent kernel (one launch per step for the batch) from the
    cached state and the Triton convolution step rolling the cached windows in place; float64, the reference's
    numbers. The steps take q, k, beta and the gate raw: l2norm, sigmoid (x2) and -exp(A_log) softplus(a + dt_bias)
    run inside the fused kernel."""
    layer = make_layer(13, "chunk", layer_idx=0, **kw)
    x = torch.randn(2, 9, 8, dtype=F64, generator=torch.Generator().manual_seed(14))
    sd, cfg = layer.state_dict(), cfg_of(**kw)
    layer.to(DEV)
    monkeypatch.setattr(layer, "_mode", lambda h: "chunk" if h.shape[1] > 1 else "fused_recurrent")
    monkeypatch.setattr(short_conv, "conv_step", short_conv.conv_step_triton)   # CUDA's step: Triton, in place
    with torch.no_grad():
        inc, cache = decode(layer, x.to(DEV), 5)
    for b in range(2):
        assert err(inc[b].cpu(), reference(sd, cfg, x[b])) <= 1e-10
