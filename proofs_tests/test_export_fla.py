"""`lrnnkit export MODEL --to fla`: a naive delta-rule loop (written here, independent of lrnnkit's kernels) over
the exported per-token tensors reproduces the compiled model's outputs, which the certifier ties to the automaton.

Tolerance: none on outputs (decoded labels must be equal); the loop runs in float64 as the reference executor does.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import lrnnkit as L
from lrnnkit.cli import main
from lrnnkit.errors import InputError
from lrnnkit.export import FlaExport, decode_fla_outputs, export_fla, fla_inputs

torch = pytest.importorskip("torch")

CASES = [("parity", None), ("parity", "parity-affine"), ("group:Z3", None), ("counter:5", None),
         ("group:S3", None), ("group:S3", "deltaproduct-symmetric"), ("group:A4", None)]
_CACHE: dict = {}


def _model(src, construction):
    key = (src, construction)
    if key not in _CACHE:
        f = L.load_source(src)
        _CACHE[key] = (f, L.compile(f, construction))
    return _CACHE[key]


def naive_delta_rule(q, k, v, beta, h0, scale):
    """S <- S + beta k (v - S^T k)^T ; o = scale S^T q  (fla's fused_recurrent_delta_rule, one step at a time)."""
    q, k, v, beta, S = (x.double().numpy() for x in (q, k, v, beta, h0))
    S = S.copy()
    Bn, T, H, _ = q.shape
    o = np.zeros((Bn, T, H, v.shape[-1]))
    for t in range(T):
        kk = k[:, t]                                                  # (B, H, K)
        u = v[:, t] - np.einsum("bhkv,bhk->bhv", S, kk)
        S += np.einsum("bh,bhk,bhv->bhkv", beta[:, t], kk, u)
        o[:, t] = scale * np.einsum("bhkv,bhk->bhv", S, q[:, t])
    return o


@settings(max_examples=10, deadline=None)
@given(case=st.sampled_from(CASES), seed=st.integers(0, 2**31 - 1), T=st.integers(1, 60))
def test_naive_loop_over_export_reproduces_model(case, seed, T):
    fsa, model = _model(*case)
    exp = export_fla(model)
    w = np.random.default_rng(seed).integers(0, len(model.alphabet), size=(2, T))
    x = fla_inputs(exp, w, dtype=torch.float64)
    assert x["k"].shape == (2, T * exp.n_h, exp.heads, exp.K) and x["v"].shape[-1] == 1
    # unit keys, as fla expects
    assert torch.allclose(x["k"].norm(dim=-1), torch.ones((), dtype=torch.float64), atol=1e-12)
    assert float(x["beta"].min()) >= 0 and float(x["beta"].max()) <= 2
    o = naive_delta_rule(x["q"], x["k"], x["v"], x["beta"], x["initial_state"], x["scale"])
    got = decode_fla_outputs(exp, o, w)
    ref = L.run_float(model, w).outputs
    assert np.array_equal(got, ref)
    # and the certified model's outputs are the automaton's
    labels = np.asarray(model.output_labels, dtype=object)[got]
    for b in range(2):
        assert list(labels[b]) == fsa.output_trace(w[b].tolist())


def test_padding_and_layout():
    """Z3 letters have 0 (identity) or 2 factors: the identity token is padded with beta = 0 (no change)."""
    _, model = _model("group:Z3", None)
    exp = export_fla(model)
    assert exp.n_h == 2 and exp.heads == 3 and exp.K == 2
    ident = model.alphabet.index("0")
    assert np.all(exp.betas[ident] == 0)
    x = fla_inputs(exp, [[ident, 1]], dtype=torch.float64)
    q = x["q"][0]
    assert torch.all(q[0] == 0) and torch.all(q[2] == 0)          # queries only at a token's last sub-step
    assert torch.equal(q[1], torch.as_tensor(exp.queries[ident]))


def test_save_load_roundtrip_and_cli(tmp_path):
    _, model = _model("group:S3", None)
    mp = tmp_path / "s3.json"
    model.save(mp)
    assert main(["export", str(mp), "--to", "fla", "-o", str(tmp_path / "out"), "--json"]) == 0
    back = FlaExport.load(str(tmp_path / "out"))
    ref = export_fla(model)
    for name in ("keys", "betas", "values", "queries", "bias", "initial_state"):
        assert np.array_equal(getattr(back, name), getattr(ref, name))
    assert list(back.head_labels) == list(ref.head_labels) and back.alphabet == ref.alphabet
    doc = json.loads((tmp_path / "out" / "fla_export.json").read_text())
    assert doc["format"] == "lrnnkit.fla-export" and doc["n_h"] == 2 and doc["V"] == 1


def test_cli_refuses_multilayer_and_bad_input(tmp_path, capsys):
    f = L.load_source("mod-arith:3")
    m = L.compile(f)
    assert len(m.layers) > 1
    mp = tmp_path / "m.json"
    m.save(mp)
    assert main(["export", str(mp), "--to", "fla"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "one-layer" in err and "Traceback" not in err
    assert main(["export", str(tmp_path / "missing.json"), "--to", "fla"]) == 2
    assert main(["export", str(mp), "--to", "onnx"]) == 2
    with pytest.raises(InputError):
        FlaExport.load(str(tmp_path))


def test_cli_writes_per_token_tensors_that_reproduce_expected(tmp_path):
    """`export --random N`: tokens.safetensors (fla layout, float32) run through the naive loop give back the
    certified outputs stored beside them."""
    from safetensors.torch import load_file
    _, model = _model("group:S3", "deltaproduct-symmetric")
    mp = tmp_path / "m.json"
    model.save(mp)
    out = tmp_path / "o"
    assert main(["export", str(mp), "--to", "fla", "-o", str(out), "--random", "80", "--seed", "3"]) == 0
    t = load_file(str(out / "tokens.safetensors"))
    assert t["q"].dtype == torch.float32 and t["k"].shape == (1, 160, 6, 3)
    o = naive_delta_rule(t["q"], t["k"], t["v"], t["beta"], t["initial_state"], 1.0)
    scores = o[0, 1::2, :, 0] + t["bias"].double().numpy()
    got = t["head_labels"].numpy()[np.argmax(scores, axis=-1)]
    assert np.array_equal(got, t["expected"].numpy())
    assert np.array_equal(t["expected"].numpy(), L.run_float(model, t["word"].numpy()[None]).outputs[0])
    assert main(["export", str(mp), "--to", "fla", "-o", str(out), "--random", "0"]) == 2
