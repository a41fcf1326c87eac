"""What did it learn? (lrnnkit.learn.analysis): spectra, betas, key PCA, each against an independent oracle.

* permutation letter matrices: the eigenvalues are the roots of unity of the cycle type (a cycle of length l
  contributes the l-th roots of unity), counted here by walking the cycles, not by LAPACK;
* S_n by transposition reflections: the keys e_i - e_j span the (n-1)-dimensional sum-zero hyperplane;
* DeltaNet (n_h = 1): ``I - beta k k^T`` has eigenvalues 1 (K - 1 times) and ``1 - beta``;
* two GH factors with beta in [0, 1] (two positive semi-definite matrices): ``G_2 G_1`` is similar to
  ``G_1^{1/2} G_2 G_1^{1/2}`` (positive semi-definite), so its eigenvalues are real and >= 0 (001, Section 3: the
  [0, 1] range cannot produce negative eigenvalues with n_h <= 2).
Tolerances: 1e-5 where a float32 model's matrices are compared with float64 eigenvalues (fp32 round-off of the
entries, ~1e-7 relative, moves an eigenvalue of these well-conditioned symmetric / orthogonal-like matrices by
less than that).
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import lrnnkit as L
from lrnnkit.errors import InputError
from lrnnkit.learn.analysis import analyze, analyze_compiled, beta_summary, key_pca, spectrum_summary
from lrnnkit.learn.models import SequenceModel


def _cycle_minus_one_count(P: np.ndarray) -> int:
    """Eigenvalue -1 multiplicity of a permutation matrix = number of cycles of even length."""
    n = P.shape[0]
    img = [int(np.argmax(P[:, j])) for j in range(n)]
    seen, even = set(), 0
    for s in range(n):
        if s in seen:
            continue
        length, q = 0, s
        while q not in seen:
            seen.add(q)
            q = img[q]
            length += 1
        even += length % 2 == 0
    return even


@pytest.mark.parametrize("src,n", [("group:S3", 3), ("group:S4", 4)])
def test_compiled_permutation_model(src, n):
    m = L.compile(L.load_source(src), "householder-permutation")
    r = analyze_compiled(m)["layers"][0]
    Ls = m.layers[0]
    for s, name in enumerate(Ls.symbol_names or range(Ls.n_symbols)):
        P = Ls.transitions[s].A
        want = _cycle_minus_one_count(P)
        got = r["per_letter"][str(name)]
        assert round(got["fraction_near_minus_one"] * n) == want
    assert r["eigenvalues"]["min_real"] == pytest.approx(-1.0, abs=1e-12)
    assert r["betas"]["reflection_heads"] == [0] and r["betas"]["fraction_near_2"] == 1.0
    assert r["key_pca"]["heads"][0]["components_99"] == n - 1      # keys span the sum-zero hyperplane


def test_compiled_parity_and_rotations():
    r = analyze_compiled(L.compile(L.load_source("parity")))["layers"][0]
    assert r["eigenvalues"]["fraction_negative"] == 0.5 and r["eigenvalues"]["min_real"] == -1.0
    # S_4 as rotations of R^3 (001, Section 5.1): keys use all three dimensions, every letter matrix is orthogonal
    r = analyze_compiled(L.compile(L.load_source("group:S4"), "rotation-3d"))["layers"][0]
    assert r["key_pca"]["heads"][0]["components_95"] == 3
    assert r["eigenvalues"]["max_abs"] == pytest.approx(1.0, abs=1e-9)


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 10_000), eig=st.sampled_from(["-1,1", "0,1"]))
def test_deltanet_spectrum_is_one_minus_beta(seed, eig):
    torch.manual_seed(seed)
    K = 4
    model = SequenceModel(3, 2, layer="deltanet", width=8, heads=2, head_dim=K, eig_range=eig)
    w = torch.as_tensor(np.random.default_rng(seed).integers(0, 3, size=(3, 12)))
    r = analyze(model, w, letters=["0", "1", "<pad>"], pad_id=2)["layers"][0]
    beta = model.betas(w)[0][w != 2].double()
    # the factor I - beta k k^T has eigenvalue 1 - beta ||k||^2 on k (and 1 elsewhere); ||k|| is 1 up to fla's
    # l2norm eps (k / sqrt(||k||^2 + 1e-6)); float32 keys: 1e-5
    kk = model.keys(w)[0][w != 2].double().square().sum(-1)
    assert r["eigenvalues"]["min_real"] == pytest.approx(float((1 - beta * kk).min()), abs=1e-5)
    assert r["eigenvalues"]["fraction_negative"] * K == pytest.approx(r["betas"]["fraction_above_1"], abs=1e-12)
    if eig == "0,1":
        assert r["eigenvalues"]["fraction_negative"] == 0.0 and r["betas"]["fraction_near_2"] == 0.0
    assert set(r["per_letter"]) <= {"0", "1"}


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_two_factors_in_unit_range_have_nonnegative_spectrum(seed):
    torch.manual_seed(seed)
    model = SequenceModel(4, 3, layer="deltaproduct", n_h=2, width=8, heads=2, head_dim=4, eig_range="0,1")
    w = torch.as_tensor(np.random.default_rng(seed).integers(0, 4, size=(2, 16)))
    r = analyze(model, w)["layers"][0]["eigenvalues"]
    assert r["min_real"] >= -1e-5 and r["fraction_negative"] == 0.0


def test_key_pca_recovers_subspace_dimension():
    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.normal(size=(8, 8)))
    k = rng.normal(size=(500, 3)) @ Q[:3]                  # keys in a 3-dimensional subspace of R^8
    k /= np.linalg.norm(k, axis=1, keepdims=True)
    r = key_pca(k.reshape(500, 1, 1, 8))["heads"][0]
    assert r["components_99"] == 3 and sum(r["explained_variance_ratio"]) == pytest.approx(1.0)
    assert r["explained_variance_ratio"][3] < 1e-20


def test_beta_summary_and_errors():
    b = np.array([2.0, 2.0, 1.99, 0.5]).reshape(4, 1, 1)
    r = beta_summary(b)
    assert r["heads"][0]["median"] == pytest.approx(1.995) and r["reflection_heads"] == [0]
    assert r["fraction_near_2"] == 0.75 and r["fraction_above_1"] == 0.75
    with pytest.raises(InputError):
        spectrum_summary(np.zeros((2, 3)))
    with pytest.raises(InputError):
        analyze_compiled("not a model")


def test_diagonal_model_range_switch():
    torch.manual_seed(0)
    w = torch.randint(0, 2, (2, 10))
    for eig, lo in (("0,1", 0.0), ("-1,1", -1.0)):
        m = SequenceModel(3, 2, layer="diagonal", width=8, eig_range=eig)
        r = analyze(m, w)["layers"][0]["eigenvalues"]
        assert r["min_real"] >= lo and r["max_abs"] <= 1.0
    m = SequenceModel(3, 2, layer="diagonal", width=8, eig_range="0,1")
    assert analyze(m, w)["layers"][0]["betas"] is None


# --------------------------------------------------------------------------- construction as initialisation
from lrnnkit.learn.init_from_model import ConstructionLRNN, finetune_from_construction  # noqa: E402


@pytest.mark.parametrize("src", ["parity", "group:Z3", "group:S3"])
def test_construction_init_reproduces_compiled_model(src):
    fsa = L.load_source(src)
    m = L.compile(fsa)
    net = ConstructionLRNN.from_model(m, dtype=torch.float64)
    w = np.random.default_rng(1).integers(0, len(m.alphabet), size=(3, 150))
    got = net(torch.as_tensor(w)).argmax(-1).numpy()
    assert np.array_equal(got, L.run_float(m, w).outputs)
    # the appended letter (a task's <pad>) is the identity: padding never changes the state
    pad = len(m.alphabet)
    wp = np.concatenate([w, np.full((3, 5), pad)], 1)
    H = net.states(torch.as_tensor(wp))
    assert torch.allclose(H[:, -1], H[:, 149], atol=0)
    # the same analysis reads it: at initialisation its spectrum is the construction's
    r = analyze(net, torch.as_tensor(w))["layers"][0]
    want = analyze_compiled(m)["layers"][0]
    assert r["eigenvalues"]["min_real"] == pytest.approx(want["eigenvalues"]["min_real"], abs=1e-12)


def test_construction_init_unit_range_clips_betas_and_finetune_smoke():
    m = L.compile(L.load_source("parity"))
    net = ConstructionLRNN.from_model(m, eig_range=(0.0, 1.0))
    assert float(net.betas(torch.arange(3)[None])[0].max()) <= 1.0
    r = finetune_from_construction("parity", steps=2, batch=4, long_length=200, short_length=20, n_eval=2,
                                   controls=False)
    run = r["runs"][0]
    assert run["before"] == {"short": 1.0, "long": 1.0} and r["construction"] == "parity-sign"
    with pytest.raises(InputError):
        ConstructionLRNN.from_model(L.compile(L.load_source("mod-arith:3")))


def test_empirical_init_verdict_logic():
    """The registry entry lrnnkit:construction-init: falsified iff some construction run drops below 0.99 at
    the long length after fine-tuning; the counterexample is the run with the smallest learning rate."""
    from lrnnkit.theorems.empirical import _init_verdict

    def res(src, lr, before, after):
        return {"source": src, "construction": "c", "lr": lr, "steps": 5, "batch": 2, "train_len": [3, 40],
                "long_length": 100, "runs": [{"init": "construction", "before": {"long": before},
                                              "after": {"long": after}},
                                             {"init": "random", "before": {"long": 0.5}, "after": {"long": 0.1}}]}
    v, _, cex = _init_verdict({"results": [res("parity", 0.01, 1.0, 1.0), res("group:Z3", 0.01, 1.0, 0.995)]})
    assert v == "holds" and cex is None
    v, _, cex = _init_verdict({"results": [res("group:S3", 0.01, 1.0, 0.4), res("group:Z3", 0.001, 1.0, 0.3),
                                           res("parity", 0.001, 1.0, 1.0)]})
    assert v == "falsified" and cex["source"] == "group:Z3" and cex["lr"] == 0.001
    assert _init_verdict({"results": []})[0] == "open"
