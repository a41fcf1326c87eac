"""The compiled-model layer scan (lrnnkit.ops.table): the Triton kernel (fused_recurrent) against the torch
loop (naive), and the torch loop against an independent float64 numpy loop over the layer's own matrices
(``H_t = A(s_t) H_{t-1} + B(s_t)``, ``y_t = argmax(W H_t + c)``, first index on ties).

Models: compiled automata whose layers are dense and GH (as matrices and as factors), and a
hand-made diagonal layer. Float64 tables:
the three loops apply the same O(1)-entry matrices (products of reflections / permutations: norm 1) to O(1)
states for 30 steps, so they differ by rounding only, ~30 d 2^-53; 1e-12 bounds it. The decoder scores of these
models are separated by far more than that, so the argmax outputs agree exactly."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from lrnnkit.automata.sources import load_source  # noqa: E402
from lrnnkit.constructions import compile  # noqa: E402
from lrnnkit.ops._triton import INTERPRET  # noqa: E402
from lrnnkit.layers.compiled import layer_tables  # noqa: E402
from lrnnkit.ops.table.fused_recurrent import table_scan_triton  # noqa: E402
from lrnnkit.ops.table.naive import table_scan_naive  # noqa: E402

DEV = "cpu" if INTERPRET else "cuda"   # Triton interpreter on CPU tensors, else compiled on CUDA
CASES = [("group:S3", "householder-permutation", "matrix"), ("group:S3", "householder-permutation", "factors"),
         ("group:Z5", "cyclic-rotation", "factors"), ("flipflop", "bilinear-onehot", "matrix"),
         ("parity", "parity-sign", "matrix")]


def _numpy_scan(layer, sym):
    A = [np.asarray(t.A, np.float64) if t.A is not None else np.diag(t.diag) for t in layer.transitions]
    B = [np.asarray(t.B, np.float64) for t in layer.transitions]
    D = layer.decoder
    outs, states = np.zeros(sym.shape, np.int64), np.zeros(sym.shape + (layer.width,))
    for b in range(sym.shape[0]):
        h = np.asarray(layer.H0, np.float64)
        for t, s in enumerate(sym[b]):
            h = A[s] @ h + B[s]
            W, c = (D.W[s], D.c[s]) if D.per_symbol else (D.W, D.c)
            outs[b, t] = int(np.argmax(np.asarray(W) @ h + np.asarray(c)))
            states[b, t] = h
    return outs, states


def _on(v):
    return v.to(DEV) if isinstance(v, torch.Tensor) else v


def _triton(sym, tabs):
    o, h = table_scan_triton(torch.as_tensor(sym, device=DEV), {k: _on(v) for k, v in tabs.items()},
                             return_states=True)
    return o.cpu(), h.cpu()


@pytest.mark.triton
@pytest.mark.parametrize("src,construction,gh_mode", CASES)
def test_kernel_and_loops_agree(src, construction, gh_mode):
    fsa = load_source(src)
    layer = compile(fsa, construction=construction).layers[0]
    tabs = layer_tables(layer, torch.float64, gh_mode=gh_mode)
    assert tabs["mode"] == ("gh" if gh_mode == "factors" and layer.kind == "gh" else "dense")
    rng = np.random.default_rng(0)
    sym = rng.integers(0, layer.n_symbols, size=(3, 30))
    o_n, h_n = table_scan_naive(torch.as_tensor(sym), tabs, return_states=True)
    o_t, h_t = _triton(sym, tabs)
    o_np, h_np = _numpy_scan(layer, sym)
    assert torch.equal(o_n, o_t) and (o_n.numpy() == o_np).all()
    assert torch.allclose(h_n, h_t, atol=1e-12, rtol=0)
    assert np.allclose(h_n.numpy(), h_np, atol=1e-12, rtol=0)
    o_only, none = table_scan_triton(torch.as_tensor(sym, device=DEV), {k: _on(v) for k, v in tabs.items()})
    assert none is None and torch.equal(o_only.cpu(), o_t)


@pytest.mark.triton
def test_diagonal_mode():
    """A diagonal layer given as tables: per-symbol decay in [-1, 1], shared decoder; the kernel and the torch loop
    against the numpy loop ``h <- a(s) * h + b(s)`` (float64, 1e-12 as above)."""
    rng = np.random.default_rng(1)
    S, d, n_out = 3, 5, 4
    a, b, h0 = rng.uniform(-1, 1, (S, d)), rng.uniform(-1, 1, (S, d)), rng.uniform(-1, 1, d)
    W, c = rng.normal(size=(1, n_out, d)), rng.normal(size=(1, n_out))
    tabs = {"mode": "diagonal", "diag": torch.tensor(a), "B": torch.tensor(b), "H0": torch.tensor(h0),
            "W": torch.tensor(W), "c": torch.tensor(c)}
    sym = rng.integers(0, S, size=(2, 25))
    o_n, h_n = table_scan_naive(torch.as_tensor(sym), tabs, return_states=True)
    o_t, h_t = _triton(sym, tabs)
    for r in range(2):
        h = h0.copy()
        for t, s in enumerate(sym[r]):
            h = a[s] * h + b[s]
            assert np.allclose(h_n[r, t].numpy(), h, atol=1e-12, rtol=0)
            assert o_n[r, t] == int(np.argmax(W[0] @ h + c[0]))
    assert torch.equal(o_n, o_t) and torch.allclose(h_n, h_t, atol=1e-12, rtol=0)
