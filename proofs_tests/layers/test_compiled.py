"""Compiled models on the kernels: ``lrnnkit.layers.run_model`` / ``load`` must give the reference executor's
outputs (``lrnnkit.executor.run_float``), exactly (they are integer label indices).

Models: (1) random multi-layer models mixing every layer kind (diagonal, block_diagonal, dense, bilinear, gh),
lagged table-map reads, per-symbol decoders and a readout over several layers, with small-integer / dyadic
weights on short words, so float32 and float64 compute every dense/diagonal state exactly, and decoder offsets
that keep every exact score gap >= 1/8 (GH letters applied factor by factor in float carry rounding errors far
below that); (2) the S_n word problem in reflections (paper 000, Theorem 3),
checked also against exact permutation composition; (3) whatever the constructions registry compiles for small
automata, when it is present.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from lrnnkit.errors import InputError
from lrnnkit.ops._triton import INTERPRET
from lrnnkit.executor import run_float
from lrnnkit.layers.compiled import load, run_model
from lrnnkit.testing.examples import group_truth, permutation_group_model, reflection_factors
from lrnnkit.model import Decoder, Layer, Model, Read, TableMap, Transition


DEV = "cpu" if INTERPRET else "cuda"   # Triton interpreter on CPU tensors, else compiled on CUDA


def _ints(rng, shape, lo=-1, hi=1):
    return rng.integers(lo, hi + 1, size=shape)


def random_model(seed: int) -> Model:
    rng = np.random.default_rng(seed)
    n_in = int(rng.integers(2, 4))
    layers: list = []
    sizes_out: list = []
    kinds = ["diagonal", "block_diagonal", "gh", "dense", "bilinear"]
    rng.shuffle(kinds)
    for li, kind in enumerate(kinds[: int(rng.integers(2, 4))]):
        # input map: the model input at lag 0 and, if any, one lower layer at a random lag (BOS pad = size - 1)
        reads, sizes = [Read("input", 0)], [n_in]
        if li > 0:
            src = int(rng.integers(0, li))
            lag = int(rng.integers(0, 3))
            reads.append(Read(src, lag))
            sizes.append(sizes_out[src] + (1 if lag else 0))
        S = int(rng.integers(2, 5))
        tmap = TableMap(reads, sizes, rng.integers(0, S, size=int(np.prod(sizes))), S)
        if kind == "gh":
            d = 3
            perms = [tuple(rng.permutation(d)) for _ in range(S)]
            trans = [Transition.from_factors(reflection_factors(p), d, B_exact=[Fraction(int(x)) for x in
                                                                                _ints(rng, d)]) for p in perms]
        elif kind == "diagonal":
            d = int(rng.integers(1, 4))
            trans = []
            for _ in range(S):
                a = [Fraction(int(x)) for x in rng.integers(-1, 2, size=d)]   # eigenvalues -1, 0, 1
                t = Transition.from_exact([[a[i] if i == j else 0 for j in range(d)] for i in range(d)],
                                          [Fraction(int(x)) for x in _ints(rng, d)])
                t.diag = np.array([float(x) for x in a])
                trans.append(t)
        else:
            d = 4 if kind == "block_diagonal" else int(rng.integers(1, 4))
            trans = []
            for _ in range(S):
                A = _ints(rng, (d, d))
                if kind == "block_diagonal":
                    A[:2, 2:] = 0
                    A[2:, :2] = 0
                t = Transition.from_exact(A.tolist(), _ints(rng, d).tolist())
                if kind == "block_diagonal":
                    t.blocks = [A[:2, :2].astype(float), A[2:, 2:].astype(float)]
                trans.append(t)
        n_out = int(rng.integers(2, 5))
        per = bool(rng.integers(0, 2))
        # integer W, H (all weights are integers) and c plus the distinct offsets j/8: exact scores never tie and
        # differ by >= 1/8, far above the rounding of float32 factor-by-factor runs on these short words
        tie = [Fraction(j, 8) for j in range(n_out)]
        if per:
            c = [[Fraction(int(x)) + tie[j] for j, x in enumerate(r)] for r in _ints(rng, (S, n_out), -2, 2)]
            dec = Decoder.exact(_ints(rng, (S, n_out, d), -2, 2).tolist(), c, [f"y{j}" for j in range(n_out)],
                                per_symbol=True)
        else:
            c = [Fraction(int(x)) + tie[j] for j, x in enumerate(_ints(rng, n_out, -2, 2))]
            dec = Decoder.exact(_ints(rng, (n_out, d), -2, 2).tolist(), c, [f"y{j}" for j in range(n_out)])
        H0 = [Fraction(int(x)) for x in _ints(rng, d)]
        layers.append(Layer(kind, d, trans, np.array([float(x) for x in H0]), tmap, dec, H0_exact=H0,
                            name=f"L{li}"))
        sizes_out.append(n_out)
    L = len(layers)
    reads = [Read(L - 1, 0), Read(0, 1)]
    sizes = [sizes_out[L - 1], sizes_out[0] + 1]
    n_lab = 5
    readout = TableMap(reads, sizes, rng.integers(0, n_lab, size=int(np.prod(sizes))), n_lab)
    return Model([f"a{i}" for i in range(n_in)], layers, readout, [f"o{j}" for j in range(n_lab)], name="random")


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2 ** 31 - 1), st.sampled_from([torch.float32, torch.float64]),
       st.sampled_from(["matrix", "factors"]))
def test_torch_backend_equals_reference(seed, dtype, gh_mode):
    m = random_model(seed)
    words = np.random.default_rng(seed + 1).integers(0, len(m.alphabet), size=(3, 10))
    ref = run_float(m, words)
    mod = load(m, backend="torch", dtype=dtype, device="cpu", gh_mode=gh_mode)
    with torch.no_grad():
        out = mod(words).numpy()
    np.testing.assert_array_equal(out, ref.outputs)
    for a, b in zip(mod.last_layer_outputs, ref.layer_outputs):
        np.testing.assert_array_equal(a.numpy(), b)


@pytest.mark.triton
@settings(max_examples=3, deadline=None)
@given(st.integers(0, 2 ** 31 - 1), st.sampled_from([torch.float32, torch.float64]),
       st.sampled_from(["matrix", "factors"]))
def test_triton_backend_equals_reference(seed, dtype, gh_mode):
    m = random_model(seed)
    words = np.random.default_rng(seed + 1).integers(0, len(m.alphabet), size=(2, 8))
    ref = run_float(m, words).outputs
    out = run_model(m, words, backend="triton", dtype=dtype, device=DEV, gh_mode=gh_mode)
    np.testing.assert_array_equal(out, ref)


@pytest.mark.triton
@pytest.mark.parametrize("backend", ["torch", "triton"])
@pytest.mark.parametrize("gh_mode", ["matrix", "factors"])
def test_symmetric_group_word_problem(backend, gh_mode):
    """S_4 over a generating set (a transposition, a 4-cycle, the identity): outputs are the prefix products."""
    letters = [(1, 0, 2, 3), (1, 2, 3, 0), (0, 1, 2, 3)]
    m = permutation_group_model(4, letters)
    words = np.random.default_rng().integers(0, 3, size=(2, 12))
    truth = group_truth(4, letters, words)
    np.testing.assert_array_equal(run_float(m, words).outputs, truth)
    out = run_model(m, words, backend=backend, dtype=torch.float32, device=DEV if backend == "triton" else "cpu",
                    gh_mode=gh_mode)
    np.testing.assert_array_equal(out, truth)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_low_precision_weights_on_exact_model(dtype):
    """Permutation letters and H0 = (1..n) are exact in bf16/fp16 (small integers), so the run stays exact."""
    letters = [(1, 0, 2), (1, 2, 0)]
    m = permutation_group_model(3, letters)
    words = np.random.default_rng().integers(0, 2, size=(4, 30))
    np.testing.assert_array_equal(run_model(m, words, backend="torch", dtype=dtype, device="cpu"),
                                  group_truth(3, letters, words))


def registry_models():
    try:
        from lrnnkit.automata.sources import load_source
        from lrnnkit.constructions.registry import compile as compile_fsa
    except ImportError:  # the registry is not there yet
        return []
    out = []
    for src in ["group:Z3", "group:S3", "group:D4", "parity", "counter:3", "flipflop"]:
        try:
            out.append((src, compile_fsa(load_source(src))))
        except InputError:   # no construction applies (yet)
            continue
    return out


@pytest.mark.triton
def test_registry_compiled_models():
    models = registry_models()
    if not models:
        pytest.skip("the constructions registry compiles none of the sample automata yet")
    rng = np.random.default_rng()
    for src, m in models:
        words = rng.integers(0, len(m.alphabet), size=(2, 16))
        ref = run_float(m, words).outputs
        np.testing.assert_array_equal(run_model(m, words, backend="torch", dtype=torch.float32, device="cpu"),
                                      ref, err_msg=src)
        np.testing.assert_array_equal(run_model(m, words[:1, :10], backend="triton", dtype=torch.float32,
                                                device=DEV), ref[:1, :10], err_msg=src)


def test_bad_words_and_options_refused():
    m = permutation_group_model(3, [(1, 0, 2), (1, 2, 0)])
    with pytest.raises(InputError, match="outside the alphabet"):
        run_model(m, np.array([[0, 2]]), device="cpu")
    with pytest.raises(InputError, match="outside the alphabet"):
        run_model(m, np.array([[-1]]), device="cpu")
    with pytest.raises(InputError, match="integer"):
        run_model(m, np.array([[0.5]]), device="cpu")
    with pytest.raises(InputError, match="backend"):
        run_model(m, np.array([[0]]), backend="cuda")
    with pytest.raises(InputError, match="dtype"):
        run_model(m, np.array([[0]]), dtype="float8")
    with pytest.raises(InputError, match="gh_mode"):
        run_model(m, np.array([[0]]), gh_mode="fast", device="cpu")


def test_empty_word():
    m = permutation_group_model(3, [(1, 0, 2)])
    assert run_model(m, np.zeros((1, 0), dtype=np.int64), device="cpu").shape == (1, 0)
