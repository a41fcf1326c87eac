"""`lrnnkit export MODEL --to fla` for every GH model `compile` produces: the exported tables, run through a delta-rule
loop written here (fla's kernel semantics, independent of lrnnkit's kernels) with the wiring between layers that
the export writes down (lrnnkit.export.run_fla), give the compiled model's outputs, which the certifier ties to the
automaton.

Tolerance: none on outputs (decoded labels must be equal); the loops run in float64 as the reference executor does.
"""
from __future__ import annotations

import functools
import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import lrnnkit as L
from lrnnkit.cli import main
from lrnnkit.constructions import catalogue
from lrnnkit.errors import InputError
from lrnnkit.export import FlaExport, decode_fla_outputs, export_fla, fla_inputs, reference_kernel, run_fla
from proofs_tests._paths import REPO

torch = pytest.importorskip("torch")

# one-layer groups, the two-layer dihedral construction, two-layer modular addition, Krohn-Rhodes cascades of
# non-group automata (flip-flop: one layer with B != 0; even pairs: 2 layers, lag-1 reads; a*b and mod-arith:3:
# 4 layers, a layer that reads no input, readouts of two layers)
CASES = [("parity", None), ("parity", "parity-affine"), ("group:Z3", None), ("counter:5", None),
         ("group:S3", None), ("group:S3", "deltaproduct-symmetric"), ("group:A4", None), ("group:D4", None),
         ("group:D3", "dihedral-deltanet"), ("group:Z5", "modadd-reflections"), ("flipflop", None),
         ("even-pairs", None), ("regex:a*b", None), ("mod-arith:3", None)]
# a source for every construction of the catalogue: the first where it applies (largest first)
SOURCES = ["regex:a*b", "even-pairs", "flipflop", "group:S4", "group:D4", "group:S3", "group:Z3", "parity"]
_CACHE: dict = {}


def _model(src, construction):
    key = (src, construction)
    if key not in _CACHE:
        f = L.load_source(src)
        _CACHE[key] = (f, L.compile(f, construction))
    return _CACHE[key]


def product_loop(q, k, v, g, beta, num_householder, scale, initial_state):
    """fla's chunk_gated_delta_product, one step at a time in float64: per token S <- exp(g) S, then for
    j = 1..n_h  S <- (I - b k k^T) S + b k v^T;  o_t = scale S^T q_t."""
    n = num_householder
    q, k, v, beta, g, S = (x.double().numpy() for x in (q, k, v, beta, g, initial_state))
    Bn, T, H, _ = q.shape
    S = S.copy()
    o = np.zeros((Bn, T, H, v.shape[-1]))
    for t in range(T):
        S *= np.exp(g[:, t])[..., None, None]
        for j in range(n):
            kk, bb = k[:, t * n + j], beta[:, t * n + j]                       # (B, H, K), (B, H)
            S = S - np.einsum("bh,bhk,bhl,bhlv->bhkv", bb, kk, kk, S) + np.einsum("bh,bhk,bhv->bhkv", bb, kk,
                                                                                  v[:, t * n + j])
        o[:, t] = scale * np.einsum("bhkv,bhk->bhv", S, q[:, t])
    return torch.as_tensor(o), None


def delta_rule_loop(q, k, v, beta, scale, initial_state):
    """fla's fused_recurrent_delta_rule: S <- S + b k (v - S^T k)^T; o = scale S^T q, one step per position."""
    q, k, v, beta, S = (x.double().numpy() for x in (q, k, v, beta, initial_state))
    S = S.copy()
    Bn, T, H, _ = q.shape
    o = np.zeros((Bn, T, H, v.shape[-1]))
    for t in range(T):
        kk = k[:, t]
        u = v[:, t] - np.einsum("bhkv,bhk->bhv", S, kk)
        S += np.einsum("bh,bhk,bhv->bhkv", beta[:, t], kk, u)
        o[:, t] = scale * np.einsum("bhkv,bhk->bhv", S, q[:, t])
    return torch.as_tensor(o), None


def _check(case, w, kernel, **kw):
    fsa, model = _model(*case)
    exp = export_fla(model, verify=False)      # the export's semantics; refusing uncertified models: below
    r = run_fla(exp, w, kernel, dtype=torch.float64, **kw)
    ref = L.run_float(model, w)
    assert np.array_equal(r.outputs, ref.outputs)
    for a, b in zip(r.layer_outputs, ref.layer_outputs):
        assert np.array_equal(a, b)
    return fsa, model, exp, r


@settings(max_examples=14, deadline=None)
@given(case=st.sampled_from(CASES), seed=st.integers(0, 2**31 - 1), T=st.integers(1, 50))
def test_export_through_product_loop_reproduces_certified_outputs(case, seed, T):
    w = np.random.default_rng(seed).integers(0, len(_model(*case)[1].alphabet), size=(2, T))
    fsa, model, exp, r = _check(case, w, product_loop)
    assert len(exp.layers) == len(model.layers)
    for ly, Ly in zip(exp.layers, model.layers):          # compact readout: a head per state coordinate read
        assert ly.heads <= Ly.width and ly.K == Ly.width
    # the certified model's outputs are the automaton's
    for b in range(2):
        assert list(r.labels()[b]) == fsa.output_trace(w[b].tolist())


@settings(max_examples=8, deadline=None)
@given(case=st.sampled_from(CASES), seed=st.integers(0, 2**31 - 1), T=st.integers(1, 30))
def test_export_through_delta_rule_loop(case, seed, T):
    """The delta_rule layout (T n_h steps, the query at a token's last step) with fla's fused_recurrent_delta_rule
    semantics, with K padded to 16 (chunk kernels' tiles): the same outputs."""
    w = np.random.default_rng(seed).integers(0, len(_model(*case)[1].alphabet), size=(2, T))
    _check(case, w, delta_rule_loop, min_K=16)


def test_every_gh_construction_of_the_catalogue_exports():
    """Each construction of the catalogue whose models are GH (kinds gh / diagonal), on the first source it applies
    to: fla's semantics (lrnnkit's naive loop behind reference_kernel) reproduce the model; non-GH constructions
    are refused."""
    seen = {}
    for c in catalogue():
        for src in SOURCES:
            fsa = L.load_source(src)
            if c.reason_not_applicable(fsa) is None:
                break
        else:
            continue
        model = L.compile(fsa, c.name)
        if any(Ly.kind not in ("gh", "diagonal") for Ly in model.layers):
            with pytest.raises(InputError, match="generalized Householder"):
                export_fla(model)
            continue
        _CACHE[(src, c.name)] = (fsa, model)
        if not L.certify(model, fsa).certified:    # a construction as printed: exported only when asked
            with pytest.raises(InputError, match="is not certified"):
                export_fla(model)
        w = np.random.default_rng(7).integers(0, len(model.alphabet), size=(2, 25))
        _check((src, c.name), w, None)
        seen[c.name] = src
    assert {"krohn-rhodes": "regex:a*b", "dihedral-deltanet": "group:D4", "householder-permutation": "group:S4",
            "cyclic-rotation": "group:Z3", "rotation-3d": "group:S4", "parity-sign": "parity"}.items() <= seen.items()


def test_compact_readout_and_diagonal_layer():
    _, s5 = _model("group:S5", None)
    ly = export_fla(s5).layers[0]
    assert ly.heads == 5 and ly.n_out == 120 and ly.n_h == 4        # 5 heads, not one per decoder row
    _, d4 = _model("group:D4", None)
    exp = export_fla(d4)
    l0 = exp.layers[0]                                                # diag(-1, 1) H + e_1: G(2, e_1), value 1/2
    assert d4.layers[0].kind == "diagonal" and l0.n_h == 1
    assert sorted(l0.betas[:, 0].tolist()) == [2.0, 2.0] and sorted(np.abs(l0.values[:, 0]).tolist()) == [0.5, 0.5]
    assert [(r.source, r.lag) for r in exp.layers[1].input_map.reads] == [("input", 0), (0, 0)]


def test_layer_by_layer_helpers_and_chunk_gh():
    """fla_inputs / decode_fla_outputs step through a cascade by hand; lrnnkit's chunk_gh (keyword n_h, product
    layout) runs it through run_fla."""
    from lrnnkit.ops.gh.api import chunk_gh
    case = ("even-pairs", None)
    _, model = _model(*case)
    exp = export_fla(model)
    w = np.random.default_rng(3).integers(0, 2, size=(2, 30))
    ref = L.run_float(model, w)
    below = []
    for i in range(len(exp.layers)):
        x = fla_inputs(exp, w, layer=i, below=below, layout="product", dtype=torch.float64)
        assert x["q"].shape[1] == 30 and x["k"].shape[1] == 30 * exp.layers[i].n_h
        o, _ = product_loop(**x)
        below.append(decode_fla_outputs(exp, o, w, layer=i, below=below))
        assert np.array_equal(below[-1], ref.layer_outputs[i])
    with pytest.raises(InputError, match="below"):
        fla_inputs(exp, w, layer=1)
    _check(case, w, functools.partial(chunk_gh, backend="torch"))
    _check(("group:D4", None), w % 8, functools.partial(chunk_gh, backend="naive"))


def test_reference_kernel_matches_loop():
    """reference_kernel (lrnnkit's naive loop) against the loop written here, on random unit keys and betas."""
    g = torch.Generator().manual_seed(0)
    B, T, n, H, K, V = 2, 7, 3, 2, 4, 3
    k = torch.nn.functional.normalize(torch.randn(B, T * n, H, K, generator=g, dtype=torch.float64), dim=-1)
    x = dict(q=torch.randn(B, T, H, K, generator=g, dtype=torch.float64), k=k,
             v=torch.randn(B, T * n, H, V, generator=g, dtype=torch.float64),
             g=-torch.rand(B, T, H, generator=g, dtype=torch.float64),
             beta=2 * torch.rand(B, T * n, H, generator=g, dtype=torch.float64), num_householder=n, scale=0.7,
             initial_state=torch.randn(B, H, K, V, generator=g, dtype=torch.float64))
    # float64 throughout: differences are rounding of a few dozen operations
    assert torch.allclose(reference_kernel(**x)[0], product_loop(**x)[0], atol=1e-12)


def test_save_load_roundtrip_and_cli(tmp_path):
    _, model = _model("mod-arith:3", None)
    mp = tmp_path / "m.json"
    model.save(mp)
    assert main(["export", str(mp), "--to", "fla", "-o", str(tmp_path / "out"), "--json"]) == 0
    back = FlaExport.load(str(tmp_path / "out"))
    ref = export_fla(model)
    assert len(back.layers) == 4
    for a, b in zip(back.layers, ref.layers):
        for name in ("keys", "betas", "values", "initial_state", "decoder_W", "decoder_c", "coords"):
            assert np.array_equal(getattr(a, name), getattr(b, name))
        assert a.input_map.to_json() == b.input_map.to_json() and a.labels == b.labels
    w = np.random.default_rng(5).integers(0, len(model.alphabet), size=(2, 40))
    assert np.array_equal(run_fla(back, w, product_loop, dtype=torch.float64).outputs, L.run_float(model, w).outputs)
    doc = json.loads((tmp_path / "out" / "fla_export.json").read_text())
    assert doc["format"] == "lrnnkit.fla-export" and doc["version"] == 2 and len(doc["layers"]) == 4
    assert doc["layers"][1]["input_map"]["reads"] == [["input", 0], [0, 1]]
    # an older or altered file is refused with one line
    doc["version"] = 1
    (tmp_path / "out" / "fla_export.json").write_text(json.dumps(doc))
    with pytest.raises(InputError, match="version"):
        FlaExport.load(str(tmp_path / "out"))
    doc["version"] = 2
    doc["layers"][1]["input_map"]["reads"] = [["input", 0], [3, 1]]
    (tmp_path / "out" / "fla_export.json").write_text(json.dumps(doc))
    with pytest.raises(InputError, match="layer below"):
        FlaExport.load(str(tmp_path / "out"))
    with pytest.raises(InputError):
        FlaExport.load(str(tmp_path))


def test_cli_refuses_non_gh_models_and_bad_input(tmp_path, capsys):
    m = L.compile(L.load_source("parity"), "bilinear-onehot")
    mp = tmp_path / "m.json"
    m.save(mp)
    assert main(["export", str(mp), "--to", "fla"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "generalized Householder" in err and "'bilinear'" in err
    assert "Traceback" not in err
    assert main(["export", str(tmp_path / "missing.json"), "--to", "fla"]) == 2
    assert main(["export", str(mp), "--to", "onnx"]) == 2


def test_cli_writes_per_layer_tensors_that_reproduce_expected(tmp_path):
    """`export --random N` on a cascade: every layer's tensors in tokens.safetensors (float32, computed from the
    certified outputs of the layers below) run through the loop give that layer's outputs stored beside them."""
    from safetensors.torch import load_file
    _, model = _model("regex:a*b", None)
    mp = tmp_path / "m.json"
    model.save(mp)
    out = tmp_path / "o"
    for layout in ("product", "delta-rule"):
        assert main(["export", str(mp), "--to", "fla", "-o", str(out), "--random", "60", "--seed", "3",
                     "--layout", layout]) == 0
        t = load_file(str(out / "tokens.safetensors"))
        exp = FlaExport.load(str(out))
        ref = L.run_float(model, t["word"].numpy()[None])
        assert np.array_equal(t["expected"].numpy(), ref.outputs[0])
        for i in range(len(exp.layers)):
            x = {n: t[f"layer{i}.{n}"] for n in ("q", "k", "v", "beta", "initial_state")}
            assert x["q"].dtype == torch.float32
            if layout == "product":
                o, _ = product_loop(g=t[f"layer{i}.g"], num_householder=exp.layers[i].n_h, scale=1.0, **x)
            else:
                o, _ = delta_rule_loop(scale=1.0, **x)
            got = decode_fla_outputs(exp, o, t["word"].numpy()[None], layer=i, below=ref.layer_outputs)
            assert np.array_equal(got[0], t[f"layer{i}.expected"].numpy())
    assert main(["export", str(mp), "--to", "fla", "-o", str(out), "--random", "0"]) == 2


def test_guide_example_runs(monkeypatch, capsys):
    """examples/export_fla.py (shown in docs/export_fla.rst) runs on the CPU stand-in and checks itself."""
    import os
    import runpy
    import sys
    path = os.path.join(REPO, "examples", "export_fla.py")
    monkeypatch.setattr(sys, "argv", [path])
    runpy.run_path(path, run_name="__main__")
    out = capsys.readouterr().out
    assert "group:D4: 2 kernel calls" in out and "mod-arith:3: 4 kernel calls" in out


def test_additive_term_outside_the_steps_is_refused():
    """H <- G(2, e_1) H + e_2: the token's only delta-rule step writes along e_1, so no value gives B = e_2."""
    from fractions import Fraction

    from lrnnkit.model import Decoder, GHFactor, Layer, Model, TableMap, Transition
    t = Transition.from_factors([GHFactor.exact(2, [1, 0])], 2, B_exact=[0, 1])
    ok = Transition.from_factors([GHFactor.exact(2, [1, 0])], 2, B_exact=[1, 0])
    dec = Decoder.exact([[1, 0], [0, 1]], [0, 0], ["x", "y"])
    for trans, refused in (([t], True), ([ok], False)):
        layer = Layer("gh", 2, trans, np.zeros(2), TableMap.identity("input", 1), dec, [Fraction(0)] * 2)
        m = Model(["a"], [layer], TableMap.identity(0, 2), ["x", "y"])
        if refused:
            with pytest.raises(InputError, match="not in the span"):
                export_fla(m)
        else:
            exp = export_fla(m)
            assert exp.layers[0].values[0, 0] == 0.5          # beta * e_1 * val = e_1
            w = np.zeros((1, 5), dtype=np.int64)
            assert np.array_equal(run_fla(exp, w, product_loop, dtype=torch.float64).outputs,
                                  L.run_float(m, w).outputs)
