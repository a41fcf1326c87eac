"""DeltaProductLayer, the one trainable DeltaNet / DeltaProduct layer (paper 001), as a drop-in for
flash-linear-attention 0.6.0's ``GatedDeltaProduct``; and the traps of the functional entry point ``chunk_gh``.

* The layer's math against :func:`reference`, an independent float64 loop written here from fla's conventions
  (projections -> short convolution -> SiLU -> unit q, k -> beta (x2 with negative eigenvalues) -> forget gate ->
  per token ``S <- exp(g) S``, then ``S <- (I - b k k^T) S + b k v^T`` per Householder factor -> ``o = S^T q /
  sqrt(K)`` -> RMSNorm (gated) -> o_proj), for every option, packed (``cu_seqlens``) and padded (``attention_mask``)
  batches. Tolerance 1e-10 on O(1) outputs: both sides compute in float64 and the state recurrence only applies
  contractions (unit keys, beta in [0, 2], exp(g) <= 1), so rounding stays ~ T n K 2^-53 ~ 1e-13 on the state; the
  RMSNorm divides by at least sqrt(eps) = 3e-3, which leaves the error far below 1e-10.
* fla's state_dict (keys, shapes, values) both ways, without fla: :class:`FlaLayout` rebuilds fla 0.6.0's parameter
  layout from the rules of its constructor (fla/layers/gated_deltaproduct.py).
* One-line refusals; the K^-1/2 default scale of every GH backend; float64 gradcheck; a tiny parity run that the
  layer with eigenvalues in [-1, 1] learns and the [0, 1] layer does not (000, Theorem 1).
"""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings, strategies as st

from lrnnkit.errors import InputError
from lrnnkit.layers.decode_cache import RecurrentCache
from lrnnkit.layers.delta_product import DeltaProductLayer
from lrnnkit.ops.gh.api import chunk_gh
from lrnnkit.ops._triton import INTERPRET
from lrnnkit.ops.gh.naive import delta_product_naive

F64 = torch.float64
DEV = "cpu" if INTERPRET else "cuda"
TOL = 1e-10

# fla's keywords with small sizes; every test names what it changes
BASE = dict(hidden_size=8, expand_v=1, head_dim=4, num_heads=2, num_v_heads=None, use_output_gate=True,
            use_short_conv=True, conv_size=4, conv_bias=False, norm_eps=1e-5, use_forget_gate=True,
            allow_neg_eigval=True, num_householder=2)


def make_layer(seed=0, mode="naive", **kw) -> DeltaProductLayer:
    """A float64 layer whose every parameter is random (a parameter left at its initial value -- ones in a norm,
    zeros in a bias -- would hide a missing use of it)."""
    torch.manual_seed(seed)
    layer = DeltaProductLayer(**{**BASE, **kw, "mode": mode}).double()
    gen = torch.Generator().manual_seed(seed + 1000)
    with torch.no_grad():
        for name, p in layer.named_parameters():
            r = torch.randn(p.shape, dtype=F64, generator=gen)
            if name == "A_log":               # decay rates exp(A_log) in [e^-2, 1]: the gate neither vanishes
                p.copy_(-2 * torch.rand(p.shape, dtype=F64, generator=gen))   # nor wipes the state
            elif name.endswith("norm.weight"):
                p.copy_(1 + 0.5 * r)
            elif p.ndim == 2:                 # projections: O(1) outputs for O(1) inputs
                p.copy_(r / math.sqrt(p.shape[1]))
            else:                             # conv taps and bias, dt_bias
                p.copy_(0.5 * r)
    return layer


def reference(sd: dict, cfg: dict, x: torch.Tensor, mutate: frozenset = frozenset()) -> torch.Tensor:
    """fla's GatedDeltaProduct on one sequence x (T, hidden_size), float64, plain loops, from its state dict
    ``sd`` (fla's key names) and keywords ``cfg``. ``mutate`` breaks one convention on purpose (the tests show
    that each of them would be caught)."""
    sd = {k: v.double() for k, v in sd.items()}
    T = x.shape[0]
    H, K, n = cfg["num_heads"], cfg["head_dim"], cfg["num_householder"]
    Hv = cfg["num_v_heads"] or H
    V = int(K * cfg["expand_v"])
    G = Hv // H

    def conv(name, u):                        # causal depthwise, x = 0 before the start, then SiLU
        if not cfg["use_short_conv"]:
            return F.silu(u)
        w = sd[f"{name}.weight"][:, 0]        # (C, W): the last tap multiplies the current token
        W = w.shape[1]
        y = torch.zeros_like(u)
        for t in range(T):
            for s in range(min(W, t + 1)):
                y[t] += (w[:, s] if "taps" in mutate else w[:, W - 1 - s]) * u[t - s]
        if cfg["conv_bias"]:
            y = y + sd[f"{name}.bias"]
        return F.silu(y)

    q = conv("q_conv1d", x @ sd["q_proj.weight"].T).reshape(T, H, K)
    k = conv("k_conv1d", x @ sd["k_proj.weight"].T)
    k = k.reshape(T, H, n, K).transpose(1, 2) if "n-inner" in mutate else k.reshape(T, n, H, K)   # fla: (n h d)
    v = conv("v_conv1d", x @ sd["v_proj.weight"].T).reshape(T, n, Hv, V)
    q = q / torch.sqrt(q.square().sum(-1, keepdim=True) + 1e-6)      # fla's l2norm, eps 1e-6
    k = k / torch.sqrt(k.square().sum(-1, keepdim=True) + 1e-6)
    beta = torch.sigmoid(x @ sd["b_proj.weight"].T).reshape(T, n, Hv)
    if cfg["allow_neg_eigval"] and "beta" not in mutate:
        beta = 2 * beta
    g = torch.zeros(T, Hv, dtype=F64)
    if cfg["use_forget_gate"]:
        g = -sd["A_log"].exp() * F.softplus(x @ sd["a_proj.weight"].T + sd["dt_bias"])
    scale = 1.0 if "scale" in mutate else K ** -0.5
    S = torch.zeros(Hv, K, V, dtype=F64)
    o = torch.zeros(T, Hv, V, dtype=F64)
    for t in range(T):
        for h in range(Hv):
            kh = h % H if "heads" in mutate else h // G    # fla's repeat '... h d -> ... (h g) d'
            S[h] = torch.exp(g[t, h]) * S[h]
            for j in range(n):
                kj = k[t, j, kh]
                S[h] = S[h] - beta[t, j, h] * torch.outer(kj, kj @ S[h]) + beta[t, j, h] * torch.outer(kj, v[t, j, h])
            o[t, h] = scale * (S[h].T @ q[t, kh])
    o = o / torch.sqrt(o.square().mean(-1, keepdim=True) + cfg["norm_eps"]) * sd["o_norm.weight"]
    if cfg["use_output_gate"]:
        o = o * F.silu((x @ sd["g_proj.weight"].T).reshape(T, Hv, V))
    return o.reshape(T, Hv * V) @ sd["o_proj.weight"].T


def cfg_of(**kw) -> dict:
    return {**BASE, **kw}


def err(a, b) -> float:
    return float((a - b).detach().abs().max())


# ------------------------------------------------------------------------------------------ the math, every option
CASES = [
    dict(),                                                        # fla's defaults, small
    dict(num_householder=1),
    dict(num_householder=3),
    dict(allow_neg_eigval=False),
    dict(use_forget_gate=False),
    dict(use_output_gate=False),
    dict(use_short_conv=False),
    dict(conv_bias=True, conv_size=3),
    dict(expand_v=2),
    dict(num_v_heads=4),                                           # grouped value heads: 2 per key head
    dict(num_heads=1, num_v_heads=3, expand_v=2, num_householder=3, allow_neg_eigval=False),
    dict(num_householder=1, use_forget_gate=False, use_output_gate=False, use_short_conv=False),
    dict(expand_v=0.5, conv_bias=True, use_output_gate=False),
]


@pytest.mark.parametrize("mode", ["naive", "torch"])
@pytest.mark.parametrize("kw", CASES, ids=[",".join(f"{k}={v}" for k, v in c.items()) or "defaults" for c in CASES])
def test_layer_equals_reference_loop(kw, mode):
    """B = 2 sequences of T = 37 tokens: with n = 2 the torch chunk equations run over 74 > 64 positions, two
    chunks."""
    layer = make_layer(7, mode, **kw)
    x = torch.randn(2, 37, 8, dtype=F64, generator=torch.Generator().manual_seed(8))
    with torch.no_grad():
        o, attn, cache = layer(x)
    assert attn is None and cache is None and o.shape == x.shape and o.dtype == F64
    sd, cfg = layer.state_dict(), cfg_of(**kw)
    for b in range(2):
        r = reference(sd, cfg, x[b])
        assert float(r.abs().max()) > 0.1          # O(1) outputs: the absolute tolerance means something
        assert err(o[b], r) <= TOL


@settings(max_examples=6, deadline=None)
@given(n=st.integers(1, 3), neg=st.booleans(), gate=st.booleans(), ogate=st.booleans(), conv=st.booleans(),
       bias=st.booleans(), ev=st.sampled_from([1, 2]), group=st.sampled_from([1, 2]), seed=st.integers(0, 999))
def test_layer_equals_reference_loop_any_combination(n, neg, gate, ogate, conv, bias, ev, group, seed):
    kw = dict(num_householder=n, allow_neg_eigval=neg, use_forget_gate=gate, use_output_gate=ogate,
              use_short_conv=conv, conv_bias=bias, expand_v=ev, num_v_heads=2 * group)
    layer = make_layer(seed, "torch", **kw)
    x = torch.randn(1, 11, 8, dtype=F64, generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        o = layer(x)[0]
    assert err(o[0], reference(layer.state_dict(), cfg_of(**kw), x[0])) <= TOL


@pytest.mark.parametrize("mutation", ["taps", "n-inner", "beta", "scale", "heads"])
def test_reference_tells_each_convention_apart(mutation):
    """The comparison above can fail: breaking any one convention in the reference (conv tap order, the
    (n, h, d) order of the k projection, beta's factor 2, the K^-1/2 scale, which key head a value head reads)
    moves it away from the layer by far more than the tolerance. The scale shows only through the norm's eps
    (RMSNorm is scale-invariant up to it), ~1e-6 here."""
    kw = dict(num_v_heads=4)
    layer = make_layer(3, "naive", **kw)
    x = torch.randn(1, 9, 8, dtype=F64, generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        o = layer(x)[0][0]
    sd, cfg = layer.state_dict(), cfg_of(**kw)
    assert err(o, reference(sd, cfg, x[0])) <= TOL
    assert err(o, reference(sd, cfg, x[0], frozenset([mutation]))) > 1e3 * TOL


@pytest.mark.parametrize("neg", [True, False])
def test_analysis_accessors(neg):
    """betas in [0, 2] (allow_neg_eigval) or [0, 1], unit keys, and per-token transitions exp(g) G_n ... G_1 that
    are contractions (spectral norm <= 1: products of generalized Householder factors, 001) with an eigenvalue
    below 0 only when allowed (with n = 2 and beta in [0, 1] the eigenvalues of a product of two positive
    semi-definite factors are >= 0); grouped value heads give (B, T, n, H_v, .)."""
    layer = make_layer(31, "naive", num_v_heads=4, allow_neg_eigval=neg)
    x = torch.randn(2, 7, 8, dtype=F64, generator=torch.Generator().manual_seed(32))
    b, k, A = layer.betas(x), layer.keys(x), layer.transitions(x)
    assert b.shape == (2, 7, 2, 4) and k.shape == (2, 7, 2, 4, 4) and A.shape == (2, 7, 4, 4, 4)
    assert float(b.min()) >= 0 and float(b.max()) <= (2 if neg else 1) and float(b.max()) > (1 if neg else 0.5)
    # fla's l2norm k / sqrt(||k||^2 + 1e-6): ||k_out||^2 = r / (r + 1e-6) with r = ||k_in||^2, just below 1
    u = layer.k_proj(x)
    u = layer.k_conv1d(u) if layer.use_short_conv else torch.nn.functional.silu(u)
    r = u.reshape(2, 7, 2, 2, 4).square().sum(-1).repeat_interleave(2, dim=-1)     # key heads -> value heads
    assert err(k.norm(dim=-1).square(), r / (r + 1e-6)) <= 1e-12 and float(k.norm(dim=-1).max()) < 1
    assert float(torch.linalg.matrix_norm(A, ord=2).max()) <= 1 + 1e-12
    ev = torch.linalg.eigvals(A)
    assert (float(ev.real.min()) < -0.1) == neg


def test_chunk_mode_on_cpu_is_the_torch_mode():
    """mode "chunk" (fla's default) runs the chunk equations in torch on CPU tensors: the same numbers."""
    a, b = make_layer(2, "chunk"), make_layer(2, "torch")
    x = torch.randn(2, 13, 8, dtype=F64, generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        assert torch.equal(a(x)[0], b(x)[0])


@pytest.mark.triton
@pytest.mark.parametrize("path", ["chunk", "fused_recurrent"])
def test_layer_triton_paths(path, monkeypatch):
    """The two paths a CUDA layer takes -- the Triton chunk kernels (training) and the fused recurrent kernel (short
    inference inputs) -- here in the Triton interpreter on CPU (the layer itself picks "torch" for CPU tensors, so
    the choice is forced, for the output norm too): the reference's numbers, with packed sequences and a forget
    gate, float64."""
    layer = make_layer(17, "chunk", num_v_heads=4, conv_bias=True)
    sd, cfg = layer.state_dict(), cfg_of(num_v_heads=4, conv_bias=True)
    layer.to(DEV)
    monkeypatch.setattr(layer, "_mode", lambda x: path)
    layer.o_norm.backend = "triton"
    cu = [0, 6, 19]
    x = torch.randn(1, 19, 8, dtype=F64, generator=torch.Generator().manual_seed(18))
    with torch.no_grad():
        o = layer(x.to(DEV), cu_seqlens=torch.tensor(cu, device=DEV))[0][0].cpu()
    for a, b in zip(cu[:-1], cu[1:]):
        assert err(o[a:b], reference(sd, cfg, x[0, a:b])) <= TOL


@pytest.mark.triton
@pytest.mark.parametrize("ogate", [True, False])
def test_layer_triton_norm_gradients(ogate):
    """The output norm's Triton pass inside the layer (forced: float64 CPU tensors would take the torch one): the
    output and the gradients of the input and every parameter are the torch norm's. Both compute in float64 (the
    kernels keep float64 arithmetic), so they agree to float64 rounding: 1e-12 relative."""
    layers = [make_layer(23, "torch", use_output_gate=ogate, expand_v=1.5).to(DEV) for _ in range(2)]   # head_v_dim 6
    layers[1].o_norm.backend = "triton"
    x = torch.randn(2, 9, 8, dtype=F64, generator=torch.Generator().manual_seed(24))
    dy = torch.randn(2, 9, 8, dtype=F64, generator=torch.Generator().manual_seed(25))
    got = []
    for layer in layers:
        xi = x.to(DEV).requires_grad_(True)
        o = layer(xi)[0]
        got.append([o.detach(), *torch.autograd.grad(o, [xi, *layer.parameters()], dy.to(DEV))])
    for name, a, b in zip(["output", "input", *(n for n, _ in layers[0].named_parameters())], *got):
        assert float((a - b).norm()) <= 1e-12 * float(b.norm()), name
        assert float(b.norm()) > 0, name


@pytest.mark.parametrize("mode", ["naive", "torch"])
def test_packed_sequences_are_independent(mode):
    """cu_seqlens (B = 1): the output of each packed sequence is the reference on that sequence alone -- no conv
    tap reads across a boundary and the state starts from zero -- including an empty sequence."""
    layer = make_layer(11, mode, conv_bias=True)
    cu = [0, 5, 5, 17, 30]
    x = torch.randn(1, 30, 8, dtype=F64, generator=torch.Generator().manual_seed(12))
    with torch.no_grad():
        o = layer(x, cu_seqlens=torch.tensor(cu))[0][0]
        whole = layer(x)[0][0]
    sd, cfg = layer.state_dict(), cfg_of(conv_bias=True)
    for a, b in zip(cu[:-1], cu[1:]):
        if b > a:
            assert err(o[a:b], reference(sd, cfg, x[0, a:b])) <= TOL
    assert err(o[:5], whole[:5]) <= TOL            # the first sequence sees no boundary ...
    assert err(o[5:6], whole[5:6]) > 1e-3          # ... the second's first token would see the first's taps


@pytest.mark.parametrize("mode", ["naive", "torch"])
def test_attention_mask_padding(mode):
    """attention_mask (B, T) of 0/1 (fla's padding mask, left or right): kept positions equal the unpadded
    sequence run alone, whatever the padded positions hold; padded positions give 0 (fla's repad)."""
    layer = make_layer(13, mode)
    gen = torch.Generator().manual_seed(14)
    T = 12
    mask = torch.ones(3, T, dtype=torch.long)
    mask[1, :4] = 0                                # left padding
    mask[2, 7:] = 0                                # right padding
    x = torch.randn(3, T, 8, dtype=F64, generator=gen)
    junk = x.clone()
    junk[mask == 0] = 100 * torch.randn(int((mask == 0).sum()), 8, dtype=F64, generator=gen)
    with torch.no_grad():
        o = layer(x, attention_mask=mask)[0]
        oj = layer(junk, attention_mask=mask)[0]
        for b in range(3):
            keep = mask[b].bool()
            alone = layer(x[b, keep][None])[0][0]
            assert err(o[b, keep], alone) <= 1e-12
            assert err(o[b, keep], reference(layer.state_dict(), cfg_of(), x[b, keep])) <= TOL
            assert torch.equal(o[b, keep], oj[b, keep])
            assert torch.equal(o[b, ~keep], torch.zeros_like(o[b, ~keep]))
    assert err(o[0], layer(x[:1])[0][0]) <= 1e-12  # an all-ones row is the unmasked run


# ------------------------------------------------------------------------------------------ fla's state_dict
class _Weight(torch.nn.Module):
    def __init__(self, n: int):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(n))


class FlaLayout(torch.nn.Module):
    """The parameters of fla 0.6.0's ``GatedDeltaProduct`` (names and shapes, nothing else), from its constructor:
    head_v_dim = int(head_dim * expand_v), key_dim = num_heads * head_dim, value_dim = num_v_heads * head_v_dim;
    q/k/v/b projections without bias, k/v/b times num_householder; a_proj, A_log, dt_bias with the forget gate;
    q/k/v_conv1d (ShortConvolution: an nn.Conv1d with groups = channels, weight (C, 1, conv_size), bias (C) if
    conv_bias); g_proj and o_norm = FusedRMSNormGated(head_v_dim) (weight only) with the output gate, else
    o_norm = RMSNorm(head_v_dim) (weight only, float32); o_proj without bias."""

    def __init__(self, hidden_size, expand_v, head_dim, num_heads, num_v_heads=None, use_output_gate=True,
                 use_short_conv=True, conv_size=4, conv_bias=False, norm_eps=1e-5, use_forget_gate=True,
                 allow_neg_eigval=True, num_householder=2):
        super().__init__()
        Lin = torch.nn.Linear
        Hv = num_v_heads if num_v_heads is not None else num_heads
        head_v = int(head_dim * expand_v)
        key_dim, value_dim, n = num_heads * head_dim, Hv * head_v, num_householder
        self.q_proj = Lin(hidden_size, key_dim, bias=False)
        self.k_proj = Lin(hidden_size, key_dim * n, bias=False)
        self.v_proj = Lin(hidden_size, value_dim * n, bias=False)
        self.b_proj = Lin(hidden_size, Hv * n, bias=False)
        if use_forget_gate:
            self.a_proj = Lin(hidden_size, Hv, bias=False)
            self.A_log = torch.nn.Parameter(torch.empty(Hv))
            self.dt_bias = torch.nn.Parameter(torch.empty(Hv))
        if use_short_conv:
            for name, c in (("q_conv1d", key_dim), ("k_conv1d", key_dim * n), ("v_conv1d", value_dim * n)):
                setattr(self, name, torch.nn.Conv1d(c, c, conv_size, groups=c, padding=conv_size - 1,
                                                    bias=conv_bias))
        if use_output_gate:
            self.g_proj = Lin(hidden_size, value_dim, bias=False)
        self.o_norm = _Weight(head_v)
        self.o_proj = Lin(value_dim, hidden_size, bias=False)


LAYOUTS = [
    dict(hidden_size=16, expand_v=2, head_dim=4, num_heads=2, num_householder=2),     # fla's defaults otherwise
    dict(hidden_size=16, expand_v=1, head_dim=4, num_heads=2, num_householder=2, use_forget_gate=False,
         use_output_gate=False),
    dict(hidden_size=8, expand_v=1, head_dim=4, num_heads=2, num_householder=1, use_short_conv=False),
    dict(hidden_size=8, expand_v=2, head_dim=4, num_heads=2, num_householder=3, conv_bias=True, conv_size=3),
    dict(hidden_size=8, expand_v=1, head_dim=4, num_heads=2, num_v_heads=4, num_householder=2),
    dict(hidden_size=12, expand_v=0.5, head_dim=4, num_heads=3, num_v_heads=6, num_householder=2,
         use_output_gate=False, conv_bias=True),
]


@pytest.mark.parametrize("kw", LAYOUTS, ids=[f"layout{i}" for i in range(len(LAYOUTS))])
def test_fla_state_dict_both_ways(kw):
    fla = FlaLayout(**kw)
    ours = DeltaProductLayer(**kw, mode="naive")
    want = {k: tuple(v.shape) for k, v in fla.state_dict().items()}
    got = {k: tuple(v.shape) for k, v in ours.state_dict().items()}
    assert got == want
    assert all(v.dtype == torch.float32 for v in ours.state_dict().values())
    if kw.get("use_forget_gate", True):    # fla keeps A_log and dt_bias out of weight decay
        assert ours.A_log._no_weight_decay and ours.dt_bias._no_weight_decay
    gen = torch.Generator().manual_seed(len(want))
    with torch.no_grad():
        for name, p in fla.named_parameters():
            p.copy_(-torch.rand(p.shape, generator=gen) if name == "A_log" else torch.randn(p.shape, generator=gen))
    ours.load_state_dict(fla.state_dict(), strict=True)                       # fla -> ours
    for k, v in fla.state_dict().items():
        assert torch.equal(ours.state_dict()[k], v), k
    # ... and the loaded layer computes fla's function of those weights (the reference reads fla's names)
    cfg = {**BASE, **kw}
    x = torch.randn(1, 9, kw["hidden_size"], dtype=F64, generator=gen)
    ours.double()
    with torch.no_grad():
        assert err(ours(x)[0][0], reference(fla.state_dict(), cfg, x[0])) <= TOL
    back = DeltaProductLayer(**kw)                                            # ours -> fla
    with torch.no_grad():
        for p in back.parameters():
            p.copy_(torch.randn(p.shape, generator=gen))
    fla.load_state_dict(back.state_dict(), strict=True)
    for k, v in back.state_dict().items():
        assert torch.equal(fla.state_dict()[k], v), k


# ------------------------------------------------------------------------------------------ refusals
def _one_line(exc) -> str:
    msg = str(exc.value)
    assert msg and "\n" not in msg
    return msg


@pytest.mark.parametrize("kw,needle", [
    (dict(BASE, use_gate=True), "use_gate"),
    (dict(BASE, d_model=8), "d_model"),
    (dict(BASE, mode="fast"), "mode"),
    (dict(BASE, num_heads=2, num_v_heads=3), "num_v_heads"),
    (dict(BASE, head_dim=4, expand_v=0.3), "expand_v"),
    (dict(BASE, num_householder=0), "num_householder"),
    (dict(BASE, fp32_precision="bf16x3"), "fp32_precision"),
    (dict(BASE, keep_states="yes"), "keep_states"),
])
def test_layer_refuses_bad_construction(kw, needle):
    with pytest.raises(InputError) as exc:
        DeltaProductLayer(**kw)
    assert needle in _one_line(exc)


def test_layer_refuses_bad_forward():
    layer = make_layer(0, "torch")
    x = torch.randn(2, 5, 8, dtype=F64)
    for call, needle in (
            (lambda: layer(x, past_key_values=RecurrentCache()), "layer_idx"),      # fla refuses it too
            (lambda: layer(x, attention_mask=torch.ones(2, 4)), "attention_mask"),  # wider: fla's history mask
            (lambda: layer(x, attention_mask=torch.ones(2, 5, 5)), "attention_mask"),
            (lambda: layer(x, cu_seqlens=torch.tensor([0, 2, 5])), "cu_seqlens"),
            (lambda: layer(x[:1], attention_mask=torch.ones(1, 5), cu_seqlens=torch.tensor([0, 5])), "not both"),
            (lambda: layer(x, attention_mask=torch.full((2, 5), 2)), "only 0"),
            (lambda: layer(x[..., :7]), "hidden_states")):
        with pytest.raises(InputError) as exc:
            call()
        assert needle in _one_line(exc)
    # other forward keywords are ignored, as fla's layers do (fla's model blocks pass extra ones)
    assert torch.equal(layer(x, position_ids=None)[0], layer(x)[0])


def _gh_inputs(n=1, T=6, H=2, K=8, V=3, seed=0):
    """fla's layout: q (1, T, H, K); k, v (1, T*n, H, .) interleaved; beta (1, T*n, H) in [0, 2]; g (1, T, H) < 0."""
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(1, T, H, K, dtype=F64, generator=gen)
    k = F.normalize(torch.randn(1, T * n, H, K, dtype=F64, generator=gen), dim=-1)
    v = torch.randn(1, T * n, H, V, dtype=F64, generator=gen)
    beta = 2 * torch.rand(1, T * n, H, dtype=F64, generator=gen)
    g = -0.1 - torch.rand(1, T, H, dtype=F64, generator=gen)
    return tuple(x.to(DEV) for x in (q, k, v, g, beta))


@pytest.mark.parametrize("backend", ["naive", "torch", "chunk"])
def test_chunk_gh_refuses_the_old_argument_order(backend):
    """The old call ``chunk_gh(q, k, v, beta, g, n_h, cu_seqlens, initial_state, output_final_state)`` in fla's
    order (q, k, v, g, beta, num_householder, scale, ...): at n = 1 the shapes fit, but beta > 0 fails g <= 0 and
    g < 0 fails beta in [0, 2]; with n = 2 beta's shape is not g's; cu_seqlens lands in ``scale``; with no gate,
    beta is None. Each is one line, never a result."""
    q, k, v, g, beta = _gh_inputs(1)
    cases = [((q, k, v, beta, g, 1), "beta|g"),
             ((q, k, v, beta, None, 1), "beta is required"),
             ((q, k, v, g, beta, torch.tensor(1)), "num_householder"),
             ((q, k, v, beta, g, 1, torch.tensor([0, 2, 6]), torch.zeros(2, 2, 8, 3, dtype=F64, device=DEV), True),
              "scale"),
             ((q, k, v, g, beta, 1, torch.tensor(0.5)), "scale")]
    q2, k2, v2, g2, beta2 = _gh_inputs(2)
    cases.append(((q2, k2, v2, beta2, g2, 2), "g"))
    for args, needle in cases:
        with pytest.raises(InputError, match=needle) as exc:
            chunk_gh(*args, backend=backend)
        _one_line(exc)


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("gate", [False, True])
def test_chunk_gh_torch_equals_naive_with_varlen(n, gate):
    """chunk_gh's chunk equations in torch against its sequential loop (float64, 1e-10 as above), packed sequences
    with an empty one, initial and final states; fla's interleaved layout (B, T*n, H, .) and the per-token layout
    (B, T, n, H, .) give the same result."""
    q, k, v, g, beta = _gh_inputs(n, T=29, H=2, K=8, V=5, seed=10 * n + gate)
    g = g if gate else None
    cu = torch.tensor([0, 4, 4, 21, 29], device=DEV)
    h0 = torch.randn(4, 2, 8, 5, dtype=F64, generator=torch.Generator().manual_seed(n)).to(DEV)
    o1, s1 = chunk_gh(q, k, v, g, beta, n, initial_state=h0, output_final_state=True, cu_seqlens=cu,
                      backend="torch", chunk_size=16)
    o2, s2 = chunk_gh(q, k, v, g, beta, n, initial_state=h0, output_final_state=True, cu_seqlens=cu,
                      backend="naive")
    assert err(o1, o2) <= TOL and err(s1, s2) <= TOL
    o3, _ = chunk_gh(q, k.unflatten(1, (-1, n)), v.unflatten(1, (-1, n)), g, beta.unflatten(1, (-1, n)), n,
                     initial_state=h0, cu_seqlens=cu, backend="torch", chunk_size=16)
    assert torch.equal(o1, o3)


@pytest.mark.parametrize("backend", ["naive", "torch", pytest.param("chunk", marks=pytest.mark.triton)])
def test_chunk_gh_takes_flas_remaining_arguments(backend):
    """fla's full positional signature (q, k, v, g, beta, num_householder, scale, initial_state, output_final_state,
    use_qk_l2norm_in_kernel, cu_seqlens, cu_seqlens_cpu, cp_context): cu_seqlens_cpu (the host copy of the
    boundaries) gives the same numbers as cu_seqlens alone; a copy that disagrees, one without cu_seqlens, and
    cp_context (context parallelism over GPUs) are refused in one line."""
    n = 2
    q, k, v, g, beta = _gh_inputs(n, T=6)
    cu = torch.tensor([0, 2, 6], device=DEV)
    h0 = torch.randn(2, 2, 8, 3, dtype=F64, generator=torch.Generator().manual_seed(1)).to(DEV)
    want = chunk_gh(q, k, v, g, beta, n, None, h0, True, False, cu, backend=backend)
    got = chunk_gh(q, k, v, g, beta, n, None, h0, True, False, cu, torch.tensor([0, 2, 6]), None, backend=backend)
    assert err(got[0], want[0]) == 0 and err(got[1], want[1]) == 0
    for args, needle in (((cu, torch.tensor([0, 3, 6])), "differs"), ((None, torch.tensor([0, 2, 6])), "needs"),
                         ((cu, cu.float().cpu()), "integer"), ((cu, None, object()), "cp_context")):
        with pytest.raises(InputError, match=needle) as exc:
            chunk_gh(q, k, v, g, beta, n, None, h0, True, False, *args, backend=backend)
        _one_line(exc)


@pytest.mark.triton
def test_every_backend_defaults_to_k_to_the_minus_half():
    """Without ``scale``, every GH entry point scales by K^-1/2 (fla's default): each equals the sequential loop
    with scale=1 times 8^-1/2 (float64, tiny input: 1e-12), and not the unscaled output."""
    n = 2
    q, k, v, g, beta = _gh_inputs(n, T=5, K=8)
    unscaled, _ = delta_product_naive(q, k.unflatten(1, (-1, n)), v.unflatten(1, (-1, n)), beta.unflatten(1, (-1, n)),
                                      g, scale=1.0)
    want = unscaled * 8 ** -0.5
    outs = {b: chunk_gh(q, k, v, g, beta, n, backend=b)[0] for b in ("naive", "torch", "chunk")}
    outs["delta_product_naive"] = delta_product_naive(q, k.unflatten(1, (-1, n)), v.unflatten(1, (-1, n)),
                                                      beta.unflatten(1, (-1, n)), g)[0]
    from lrnnkit.ops.gh.fused_recurrent import fused_recurrent_delta_product
    outs["fused_recurrent"] = fused_recurrent_delta_product(q, k.unflatten(1, (-1, n)), v.unflatten(1, (-1, n)),
                                                            beta.unflatten(1, (-1, n)), g)[0]
    assert float(unscaled.abs().max()) > 0.5
    for name, o in outs.items():
        assert err(o.cpu(), want.cpu()) <= 1e-12, name


# ------------------------------------------------------------------------------------------ gradients
@pytest.mark.parametrize("mode,fast", [("naive", True), ("torch", True),
                                       pytest.param("naive", False, marks=pytest.mark.slow),
                                       pytest.param("torch", False, marks=pytest.mark.slow)])
def test_layer_gradcheck(mode, fast):
    """float64 gradcheck (finite differences, eps 1e-6, gradcheck's default atol 1e-5 / rtol 1e-3) of the output
    with respect to the input and every parameter: B = 1, T = 5, hidden 8, 2 heads x 4, n = 2, forget and output
    gate, conv with bias, negative eigenvalues. ``fast``: gradcheck's fast mode (the Jacobian projected on random
    vectors, every input and parameter at once: a wrong gradient anywhere shows with probability 1); the full
    Jacobian (~750 columns) takes minutes on 2 cores and runs in the slow suite."""
    from torch.func import functional_call
    layer = make_layer(21, mode, conv_bias=True)
    names = [n for n, _ in layer.named_parameters()]
    params = [p.detach().clone().requires_grad_(True) for _, p in layer.named_parameters()]
    x = torch.randn(1, 5, 8, dtype=F64, generator=torch.Generator().manual_seed(22), requires_grad=True)

    def f(x, *ps):
        return functional_call(layer, dict(zip(names, ps)), (x,))[0]
    assert len(names) == 16   # q, k, v, b, a, g, o projections, A_log, dt_bias, 3 x conv weight and bias, o_norm
    assert torch.autograd.gradcheck(f, (x, *params), fast_mode=fast)


# ------------------------------------------------------------------------------------------ learning
def test_negative_eigenvalues_learn_parity_and_positive_do_not():
    """000, Theorem 1 / 001 at tiny scale on CPU: a DeltaNet (the layer with num_householder = 1) SequenceModel
    with eigenvalues in [-1, 1] learns parity from lengths 3-40 and is right at length 128 (token accuracy >= 0.99:
    seeds 0-11 all reach >= 0.995 with these settings, the last token alone >= 0.97); the same model with [0, 1]
    stays at chance (token accuracy <= 0.511, last token <= 0.532 over seeds 0-11)."""
    from lrnnkit.learn.train import TrainConfig, train
    torch.set_num_threads(1)

    def run(eig):
        return train(TrainConfig(task="parity", layer="deltanet", eig_range=eig, width=16, heads=1, steps=150,
                                 batch=32, lr=1e-2, train_len=(3, 40), test_len=(128,), eval_n=128,
                                 short_conv=False, device="cpu", seed=0))
    good, bad = run((-1, 1)), run((0, 1))
    assert good["test_accuracy"]["128"] >= 0.99 and good["final_accuracy"]["128"] >= 0.95
    assert bad["test_accuracy"]["128"] <= 0.6 and bad["final_accuracy"]["128"] <= 0.7
