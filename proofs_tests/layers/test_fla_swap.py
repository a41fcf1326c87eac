"""lrnnkit's DeltaProductLayer inside models built by fla (lrnnkit.layers.fla_swap): every GatedDeltaProduct
replaced in place holding the same Parameter objects, and back.

Two parts. Without fla: a stand-in with fla 0.6.0's parameter layout (test_delta_product.FlaLayout) under fla's
class and module name, nested in a small model: the mechanics (what is found, Parameter identity, the round trip)
and the swapped layer's function against the float64 loop of fla's conventions (1e-10, as in test_delta_product).
With fla (``fla.models`` importable: fla 0.6.0 with transformers; skipped otherwise, as on a machine without them):
a ``GatedDeltaProductForCausalLM`` from a tiny config. fla's models import on CPU, but their MLP's ``swiglu`` is a
Triton kernel that needs a GPU driver; the test replaces it by fla's own formula ``silu(gate) * up`` in torch
(the swapped layer runs lrnnkit's torch mode). Checked: Parameter identity and the round trip to fla's class;
``generate()`` through fla's ``Cache`` gives the greedy tokens of the full forward run without a cache, for a
left-padded batch too (each row as generated alone); fla's cache holds fla's entries; a few training steps run
and lower the loss.
"""
from __future__ import annotations

import pytest
import torch

from lrnnkit.errors import InputError
from lrnnkit.layers.delta_product import DeltaProductLayer
from lrnnkit.layers.fla_swap import layer_keywords, swap_in, swap_out

from .test_delta_product import BASE, F64, FlaLayout, cfg_of, err, reference


class GatedDeltaProduct(FlaLayout):
    """fla's parameter layout and the attributes fla's layer keeps, under fla's class and module name."""

    def __init__(self, mode="chunk", layer_idx=None, **kw):
        super().__init__(**kw)
        self.mode, self.layer_idx = mode, layer_idx
        for name in ("hidden_size", "expand_v", "head_dim", "num_heads", "use_output_gate", "use_short_conv",
                     "conv_size", "conv_bias", "use_forget_gate", "allow_neg_eigval", "num_householder"):
            setattr(self, name, kw.get(name, BASE.get(name)))
        self.num_v_heads = kw.get("num_v_heads") or self.num_heads
        self.o_norm.eps = kw.get("norm_eps", 1e-5)


GatedDeltaProduct.__module__ = "fla.layers.gated_deltaproduct"


def _tree(kw):
    torch.manual_seed(0)
    blocks = torch.nn.ModuleList()
    for i in range(2):
        block = torch.nn.Module()
        block.attn = GatedDeltaProduct(layer_idx=i, **kw)
        block.mlp = torch.nn.Linear(kw["hidden_size"], kw["hidden_size"])
        blocks.append(block)
    root = torch.nn.Module()
    root.layers = blocks
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, p in root.named_parameters():
            p.copy_(-torch.rand(p.shape, generator=gen) if name.endswith("A_log") else
                    torch.randn(p.shape, generator=gen) / max(1, p.shape[-1]) ** 0.5)
    return root.double()


@pytest.mark.parametrize("kw", [dict(BASE), dict(BASE, num_v_heads=4, use_output_gate=False, conv_bias=True)])
def test_swap_keeps_the_parameters_and_computes_flas_function(kw):
    root = _tree(kw)
    before = {name: p for name, p in root.named_parameters()}
    sd = root.layers[1].attn.state_dict()
    assert swap_in(root, mode="torch") == 2
    layer = root.layers[1].attn
    assert isinstance(layer, DeltaProductLayer) and layer.layer_idx == 1 and layer.mode == "torch"
    assert all(p is before[name] for name, p in root.named_parameters()) and len(before) == len(list(root.parameters()))
    x = torch.randn(1, 9, 8, dtype=F64, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        assert err(layer(x)[0][0], reference(sd, cfg_of(**{k: v for k, v in kw.items()}), x[0])) <= 1e-10
    assert swap_out(root, cls=GatedDeltaProduct) == 2
    assert type(root.layers[0].attn) is GatedDeltaProduct and root.layers[0].attn.layer_idx == 0
    assert layer_keywords(root.layers[1].attn) == {**layer_keywords(layer), "mode": "chunk"}
    assert all(p is before[name] for name, p in root.named_parameters())
    assert swap_in(torch.nn.Linear(2, 2)) == 0


def test_swap_refusals():
    root = _tree(dict(BASE))
    with pytest.raises(InputError, match="not a layer itself"):
        swap_in(root.layers[0].attn)
    with pytest.raises(InputError, match="unknown keyword 'hidden_size'"):
        swap_in(root, hidden_size=4)


# ------------------------------------------------------------------------------------------ with fla's models
def _fla_model(gate: bool):
    try:
        from fla.models import GatedDeltaProductConfig, GatedDeltaProductForCausalLM
    except Exception as e:     # fla or transformers absent, or unusable here
        pytest.skip(f"fla.models not importable: {type(e).__name__}: {e}")
    cfg = GatedDeltaProductConfig(hidden_size=32, num_hidden_layers=2, vocab_size=40, head_dim=8, num_heads=2,
                                  expand_v=1, num_householder=2, use_forget_gate=gate, fuse_norm=False,
                                  fuse_swiglu=False, fuse_cross_entropy=False, eos_token_id=None, pad_token_id=0)
    torch.manual_seed(0)
    return GatedDeltaProductForCausalLM(cfg).double()


@pytest.fixture
def torch_swiglu(monkeypatch):
    mlp = pytest.importorskip("fla.modules.mlp")
    monkeypatch.setattr(mlp, "swiglu", lambda gate, up: torch.nn.functional.silu(gate) * up)


def _skip_if_generate_drops_the_cache(model, ids):
    """transformers releases after fla 0.6.0's pass the decoding cache to the model as ``cache=`` (5.24, say), a
    keyword fla's models do not read: they build an empty cache at every step, for fla's own layer too, so
    generation forgets the prompt. Skipped there (5.6.2, fla's lower bound, passes ``past_key_values``)."""
    seen = []
    orig = model.forward

    def spy(*args, **kwargs):
        seen.append(set(kwargs))
        return orig(*args, **kwargs)
    model.forward = spy
    try:
        model.generate(ids, max_new_tokens=2, do_sample=False, attention_mask=torch.ones_like(ids))
    finally:
        del model.forward
    if "cache" in seen[-1] and "past_key_values" not in seen[-1]:
        import transformers
        pytest.skip(f"transformers {transformers.__version__} passes the cache as `cache=`, which fla 0.6.0's "
                    "models ignore (generation restarts from an empty state every step)")


def _greedy(model, ids, steps):
    """Greedy continuation by full forwards without a cache (the definition generate() must meet)."""
    with torch.no_grad():
        for _ in range(steps):
            nxt = model(ids, use_cache=False).logits[:, -1].argmax(-1, keepdim=True)
            ids = torch.cat([ids, nxt], 1)
    return ids


@pytest.mark.parametrize("gate", [True, False])
def test_fla_model_generates_through_flas_cache(gate, torch_swiglu):
    model = _fla_model(gate)
    from fla.layers.gated_deltaproduct import GatedDeltaProduct as FlaLayer
    from fla.models.utils import Cache
    params = {name: p for name, p in model.named_parameters()}
    assert swap_in(model, mode="torch") == 2
    ids = torch.randint(1, 40, (2, 6), generator=torch.Generator().manual_seed(3))
    _skip_if_generate_drops_the_cache(model, ids)
    out = model.generate(ids, max_new_tokens=6, do_sample=False, attention_mask=torch.ones_like(ids))
    assert torch.equal(out, _greedy(model, ids, 6))
    # a left-padded batch: each row continues as it would alone
    mask = torch.ones_like(ids)
    mask[1, :3] = 0
    padded = model.generate(ids, attention_mask=mask, max_new_tokens=4, do_sample=False)
    alone = model.generate(ids[1:, 3:], attention_mask=mask[1:, 3:], max_new_tokens=4, do_sample=False)
    assert torch.equal(padded[1, 6:], alone[0, 3:]) and torch.equal(padded[0], out[0, :10])
    # fla's cache, our entries in fla's layout
    with torch.no_grad():
        cache = model(ids, use_cache=True).past_key_values
    assert isinstance(cache, Cache) and len(cache) == 2 and cache.get_seq_length(0) == 6
    st = cache[1]
    assert set(st) == {"recurrent_state", "attn_state", "conv_state", "ffn_state"}
    assert st["recurrent_state"].shape == (2, 2, 8, 8) and [c.shape for c in st["conv_state"]] == \
        [(2, 16, 4), (2, 32, 4), (2, 32, 4)]
    # back to fla's class, same Parameter objects; swapped in again, the same logits
    with torch.no_grad():
        logits = model(ids, use_cache=False).logits
    assert swap_out(model) == 2 and all(type(b.attn) is FlaLayer for b in model.model.layers)
    assert all(p is params[name] for name, p in model.named_parameters())
    swap_in(model, mode="torch")
    with torch.no_grad():
        assert torch.equal(model(ids, use_cache=False).logits, logits)


def test_swapped_fla_model_trains(torch_swiglu):
    """The gated model (fla's default forget gate) trains with lrnnkit's layer: 30 AdamW steps on a fixed batch
    of a copy task lower the loss by half (CPU, torch mode: the check is that gradients reach every weight and
    descend, not a speed)."""
    model = _fla_model(True).float()
    swap_in(model, mode="torch")
    model.train()
    gen = torch.Generator().manual_seed(4)
    ids = torch.randint(1, 40, (8, 16), generator=gen)
    ids[:, 8:] = ids[:, :8]                                          # the second half repeats the first
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(30):
        logits = model(ids, use_cache=False).logits[:, 7:-1]
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 40), ids[:, 8:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        assert all(p.grad is not None for p in model.model.layers[0].attn.parameters())
        opt.step()
        losses.append(float(loss.detach()))
    assert losses[-1] < 0.5 * losses[0]
