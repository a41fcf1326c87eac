"""The Python API at the command line's standard: every bad argument of ``chunk_gh``, the layers' forward and
``run_float`` / ``run_exact`` is an InputError naming it -- zero-length axes (were ZeroDivisionError and reshape
errors), ``cu_seqlens`` as a float tensor (was truncated) or a list (was AttributeError), ``initial_state`` as a
list, input and layer of different dtypes (was torch's matmul error), symbol indices 0.5 or "0" (were cast)."""
from __future__ import annotations

import pytest
import torch

import lrnnkit as L
from lrnnkit.errors import InputError
from lrnnkit.executor import run_exact, run_float
from lrnnkit.layers import DeltaProductLayer, FixedPointLayer
from lrnnkit.ops.gh.api import chunk_gh


def _inputs(B=1, T=4, H=2, K=4, V=3, n_h=1, dtype=torch.float64):
    g = torch.Generator().manual_seed(0)
    q = torch.randn(B, T, H, K, generator=g, dtype=dtype)
    k = torch.nn.functional.normalize(torch.randn(B, T * n_h, H, K, generator=g, dtype=dtype), dim=-1)
    v = torch.randn(B, T * n_h, H, V, generator=g, dtype=dtype)
    beta = torch.rand(B, T * n_h, H, generator=g, dtype=dtype)
    return q, k, v, beta


@pytest.mark.parametrize("axis", ["T", "H", "K", "V", "B"])
def test_zero_length_axes_are_named(axis):
    sizes = dict(B=1, T=4, H=2, K=4, V=3)
    sizes[axis] = 0
    q, k, v, beta = _inputs(**sizes)
    with pytest.raises(InputError, match="every axis must have length >= 1"):
        chunk_gh(q, k, v, None, beta, 1, backend="torch")


@pytest.mark.parametrize("cu, needle", [
    (torch.tensor([0.0, 2.7, 4.0]), "integer torch.Tensor"),
    ([0, 2, 4], "got list"),
    (torch.tensor([[0, 4]]), "1-D"),
    (torch.tensor([0, 3, 2, 4]), "must rise from 0"),
])
def test_cu_seqlens_must_be_integer_offsets(cu, needle):
    q, k, v, beta = _inputs()
    with pytest.raises(InputError, match=needle):
        chunk_gh(q, k, v, None, beta, 1, cu_seqlens=cu, backend="torch")
    layer = FixedPointLayer(hidden_size=8, num_heads=2, mode="chunk").double()
    with pytest.raises(InputError, match=needle):
        layer(torch.randn(1, 4, 8, dtype=torch.float64), cu_seqlens=cu)


def test_initial_state_and_gate_must_be_tensors():
    q, k, v, beta = _inputs()
    with pytest.raises(InputError, match="initial_state: expected a torch.Tensor or None, got list"):
        chunk_gh(q, k, v, None, beta, 1, initial_state=[[0.0]], backend="torch")
    with pytest.raises(InputError, match="beta: expected a floating-point tensor"):
        chunk_gh(q, k, v, None, (beta > 0.5).long(), 1, backend="torch")
    o, _ = chunk_gh(q, k, v, None, beta, 1, cu_seqlens=torch.tensor([0, 1, 4]), backend="torch")
    assert o.shape == (1, 4, 2, 3)        # integer offsets still work


def test_a_dtype_mix_between_input_and_layer_is_named():
    torch.manual_seed(0)
    layer = DeltaProductLayer(hidden_size=16, head_dim=8, num_heads=2, mode="torch")
    with pytest.raises(InputError, match=r"hidden_states has dtype torch.float64, the layer's parameters "
                                         r"torch.float32"):
        layer(torch.randn(1, 5, 16, dtype=torch.float64))
    assert layer(torch.randn(1, 5, 16))[0].dtype == torch.float32
    assert layer.double()(torch.randn(1, 5, 16, dtype=torch.float64))[0].dtype == torch.float64


@pytest.mark.parametrize("words", [[0.5, 1], ["0", "1"], "01", [[0, 1], [1]], [True, False], [[[0]]], [0, 2]])
def test_run_float_and_run_exact_take_integer_indices_only(words):
    model = L.compile(L.load_source("parity"))
    with pytest.raises(InputError, match="run_float: words"):
        run_float(model, words)
    if not (isinstance(words, list) and words and isinstance(words[0], list)):
        with pytest.raises(InputError, match="run_exact: word"):
            run_exact(model, words)
    assert run_float(model, [1, 1, 0]).outputs.tolist() == [[1, 0, 0]]
    assert run_exact(model, [1, 1, 0]) == run_float(model, [1, 1, 0]).outputs[0].tolist()
