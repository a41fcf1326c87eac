"""lrnnkit.ops.diagonal.selective: Mamba's selective scan with its readout, the two Triton kernels (interpreter on
the CPU) against the torch expression and against a loop written from the recurrence, values and every input's
gradient in float64; the states kept only where a backward follows; bad shapes refused. Run in the Triton
interpreter on CPU tensors (compiled on CUDA where the interpreter is off: benchmarks/gpu_checks.sh)."""
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from lrnnkit.ops._triton import INTERPRET
from lrnnkit.ops.diagonal.selective import selective_scan, selective_scan_fused, selective_scan_reference

DEV = "cpu" if INTERPRET or not torch.cuda.is_available() else "cuda"
pytestmark = pytest.mark.skipif(not INTERPRET and not torch.cuda.is_available(),
                                reason="Triton kernels need TRITON_INTERPRET=1 or a GPU")


def _fused(*ins_and_neg):
    """:func:`selective_scan_fused` on :data:`DEV` (the interpreter on the CPU, compiled on CUDA), output on the
    CPU; differentiable back to the CPU inputs."""
    *ins, neg = ins_and_neg
    return selective_scan_fused(*[t.to(DEV) for t in ins], neg).cpu()


def _inputs(B, T, di, n, seed, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(B, T, di, generator=g, dtype=dtype)
    delta = 0.05 + torch.rand(B, T, di, generator=g, dtype=dtype)          # softplus outputs: positive
    A = -torch.exp(torch.randn(di, n, generator=g, dtype=dtype))
    Bm = torch.randn(B, T, n, generator=g, dtype=dtype)
    C = torch.randn(B, T, n, generator=g, dtype=dtype)
    return [t.requires_grad_() for t in (x, delta, A, Bm, C)]


def _loop(x, delta, A, Bm, C, neg):
    """The recurrence step by step (module text), a (B, Di, N) state."""
    h = torch.zeros(x.shape[0], x.shape[2], A.shape[1], dtype=x.dtype)
    ys = []
    for t in range(x.shape[1]):
        s = torch.exp(delta[:, t, :, None] * A)
        h = (2 * s - 1 if neg else s) * h + (delta[:, t] * x[:, t])[..., None] * Bm[:, t, None, :]
        ys.append((h * C[:, t, None, :]).sum(-1))
    return torch.stack(ys, 1)


def _grads(f, ins, w):
    y = f(*ins)
    return y.detach(), torch.autograd.grad((y * w).sum(), ins)


@pytest.mark.parametrize("neg", [False, True])
@pytest.mark.parametrize("shape", [(2, 7, 5, 3), (1, 1, 70, 16), (3, 12, 64, 4)])
def test_fused_kernels_are_the_recurrence(neg, shape):
    """Output and the gradients of x, delta, A, B, C: fused kernels (interpreter) vs the torch expression vs the
    loop, float64, tolerance 1e-10 (sums of at most 12 steps and 16 states of O(1) terms, re-associated). The
    shapes cover a state padded to a power of two (N = 3), a channel block with a ragged end (Di = 70 > 64) and
    one time step."""
    B, T, di, n = shape
    ins = _inputs(B, T, di, n, seed=sum(shape) + neg)
    w = torch.randn(B, T, di, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    y_f, g_f = _grads(lambda *a: _fused(*a, neg), ins, w)
    y_r, g_r = _grads(lambda *a: selective_scan_reference(*a, neg), ins, w)
    y_l, g_l = _grads(lambda *a: _loop(*a, neg), ins, w)
    for got in (y_f, y_r):
        torch.testing.assert_close(got, y_l, rtol=1e-10, atol=1e-10)
    for name, a, b, c in zip(("x", "delta", "A", "B", "C"), g_f, g_r, g_l):
        torch.testing.assert_close(a, c, rtol=1e-10, atol=1e-10, msg=lambda s: f"fused d{name}: {s}")
        torch.testing.assert_close(b, c, rtol=1e-10, atol=1e-10, msg=lambda s: f"reference d{name}: {s}")


@settings(max_examples=15, deadline=None)
@given(B=st.integers(1, 3), T=st.integers(1, 9), di=st.integers(1, 20), n=st.integers(1, 5), neg=st.booleans(),
       seed=st.integers(0, 2 ** 16))
def test_fused_forward_matches_the_loop_on_any_shape(B, T, di, n, neg, seed):
    """Any small shape: the fused forward equals the loop (float64, 1e-10)."""
    ins = _inputs(B, T, di, n, seed)
    with torch.no_grad():
        torch.testing.assert_close(_fused(*ins, neg), _loop(*ins, neg), rtol=1e-10, atol=1e-10)


def test_float32_inputs_stay_float32_and_cpu_dispatches_to_the_reference():
    """float32 in, float32 out, within 1e-5 relative of float64 (single-precision rounding over 12 steps);
    :func:`selective_scan` on CPU tensors is the torch expression."""
    ins = [t.detach() for t in _inputs(2, 12, 8, 4, seed=3)]
    y32 = _fused(*[t.float() for t in ins], True)
    assert y32.dtype == torch.float32
    y64 = _loop(*ins, True)
    assert float((y32.double() - y64).norm() / y64.norm()) < 1e-5
    torch.testing.assert_close(selective_scan(*ins, False), selective_scan_reference(*ins, False))


def test_states_are_stored_only_for_a_backward(monkeypatch):
    """Under no_grad the forward is told not to keep the (B, T, Di, N) states (they are most of its memory)."""
    from lrnnkit.ops.diagonal import selective
    seen = []
    orig = selective._SelectiveScan.apply
    monkeypatch.setattr(selective._SelectiveScan, "apply", lambda *a: seen.append(a[-1]) or orig(*a))
    ins = _inputs(1, 3, 4, 2, seed=0)
    with torch.no_grad():
        _fused(*ins, False)
    _fused(*ins, False)
    assert seen == [False, True]


@pytest.mark.parametrize("neg", [False, True])
def test_runs_each_with_its_own_A_are_the_runs_alone(neg):
    """R runs at once, x (R, B, T, Di) with A (R, Di, N) (the batched models of lrnnkit.learn.batched): fused and
    reference outputs and gradients equal each run computed alone, float64, 1e-10; A's gradient is each run's own
    (summed over its rows only)."""
    R, B, T, di, n = 3, 2, 6, 5, 3
    runs = [_inputs(B, T, di, n, seed=10 + r) for r in range(R)]
    w = torch.randn(R, B, T, di, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    alone = [_grads(lambda *a: _loop(*a, neg), ins, w[r]) for r, ins in enumerate(runs)]
    stacked = [torch.stack([ins[k].detach() for ins in runs]).requires_grad_() for k in range(5)]
    for f in (_fused, selective_scan_reference):
        y, g = _grads(lambda *a: f(*a, neg), stacked, w)
        for r in range(R):
            torch.testing.assert_close(y[r], alone[r][0], rtol=1e-10, atol=1e-10)
            for name, a, b in zip(("x", "delta", "A", "B", "C"), g, alone[r][1]):
                torch.testing.assert_close(a[r], b, rtol=1e-10, atol=1e-10,
                                           msg=lambda s: f"{f.__name__} run {r} d{name}: {s}")


def test_bad_shapes_are_refused():
    x, delta, A, Bm, C = [t.detach() for t in _inputs(1, 3, 4, 2, seed=0)]
    with pytest.raises(ValueError, match="selective_scan_fused"):
        selective_scan_fused(x, delta, A, Bm[..., :1], C, False)
    with pytest.raises(ValueError, match="selective_scan_fused"):
        selective_scan_fused(x, delta[:, :2], A, Bm, C, False)
    with pytest.raises(ValueError, match="selective_scan_fused"):           # A per run, x without a run axis
        selective_scan_fused(x, delta, A[None], Bm, C, False)
    with pytest.raises(ValueError, match="selective_scan_fused"):           # two runs' A for one run's rows
        selective_scan_fused(x[None], delta[None], A[None].expand(2, -1, -1), Bm[None], C[None], False)
