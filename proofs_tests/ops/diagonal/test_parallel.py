"""The CPU kernels of the differentiable diagonal scan (lrnnkit.ops.diagonal.parallel): the step-by-step scan against
the naive loop, the doubling scan against it, the rule that picks one, and gradients through ``diagonal_scan`` on
either kernel against autograd through the naive loop (float64 throughout)."""
from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from lrnnkit.ops.diagonal import parallel
from lrnnkit.ops.diagonal.naive import diagonal_scan_naive
from lrnnkit.ops.diagonal.parallel import diagonal_scan, sequential_scan
from lrnnkit.ops.linear_scan import doubling_scan

# float64; the step-by-step scan computes b + a h with one fused multiply-add (addcmul), the naive loop as a product
# then a sum, and the doubling scan reassociates the products: each can round differently in the last bit per step,
# compounding over at most 80 steps of |a| <= 1: relative 1e-12 is far above that and far below any real error
RTOL, ATOL = 1e-12, 1e-12


def _inputs(B, T, D, seed, requires_grad=False):
    g = torch.Generator().manual_seed(seed)
    a = (torch.rand(B, T, D, generator=g, dtype=torch.float64) * 2 - 1).requires_grad_(requires_grad)
    b = torch.randn(B, T, D, generator=g, dtype=torch.float64).requires_grad_(requires_grad)
    return a, b


@settings(max_examples=40, deadline=None)
@given(B=st.integers(1, 4), T=st.integers(0, 80), D=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_the_step_by_step_and_doubling_scans_are_the_loop(B, T, D, seed):
    a, b = _inputs(B, T, D, seed)
    want = diagonal_scan_naive(a, b)
    torch.testing.assert_close(sequential_scan(a, b), want, rtol=RTOL, atol=ATOL)
    if T:
        torch.testing.assert_close(doubling_scan(a, b), want, rtol=RTOL, atol=ATOL)


def test_a_coefficient_broadcast_over_rows_is_each_rows_coefficient():
    a, b = _inputs(3, 7, 4, 0)
    a1 = a[:1]
    torch.testing.assert_close(sequential_scan(a1, b), diagonal_scan_naive(a1.expand_as(b).contiguous(), b),
                               rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("shape, kernel", [((2, 64, 3), "sequential"),      # short: step by step
                                           ((2, 65, 512), "sequential"),    # 1024 numbers a step
                                           ((2, 65, 511), "doubling"),      # long and narrow
                                           ((1, 300, 8), "doubling")])
def test_the_cpu_kernel_rule(shape, kernel, monkeypatch):
    ran = []
    monkeypatch.setattr(parallel, "sequential_scan", lambda a, b: ran.append("sequential") or sequential_scan(a, b))
    monkeypatch.setattr(parallel, "doubling_scan", lambda a, b: ran.append("doubling") or doubling_scan(a, b))
    a, b = _inputs(*shape, 1)
    torch.testing.assert_close(parallel._kernel(a, b), diagonal_scan_naive(a, b), rtol=RTOL, atol=ATOL)
    assert ran == [kernel] and parallel.cpu_kernel(shape) == kernel


@pytest.mark.parametrize("shape", [(2, 40, 5), (1, 150, 3)])      # the step-by-step kernel, then the doubling one
def test_gradients_through_either_kernel_are_autograds_through_the_loop(shape):
    a, b = _inputs(*shape, 2, requires_grad=True)
    w = torch.randn(*shape, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    ga, gb = torch.autograd.grad((diagonal_scan(a, b) * w).sum(), (a, b))
    wa, wb = torch.autograd.grad((diagonal_scan_naive(a, b) * w).sum(), (a, b))
    torch.testing.assert_close(ga, wa, rtol=RTOL, atol=ATOL)
    torch.testing.assert_close(gb, wb, rtol=RTOL, atol=ATOL)


def test_bench_cpu_scan_smoke(capsys):
    """benchmarks/bench_cpu_scan.py --smoke: both kernels timed on each shape, the rule named as ``_kernel`` applies
    it (``cpu_kernel``: a short sequence step by step, a long narrow one by doubling), a training step with each
    kernel, and the learning check's row (one seed trained once with each kernel)."""
    from benchmarks import bench_cpu_scan
    bench_cpu_scan.main(["--smoke", "--learn-seeds", "1"])
    out = capsys.readouterr().out
    assert "| smoke | step by step |" in out and "| smoke, long | doubling |" in out
    assert "| diagonal, smoke |" in out and "training step" in out
    row = next(ln for ln in out.splitlines() if ln.startswith("| 0 |"))     # seed 0 trained with each kernel
    accs = [float(x) for x in row.split("|")[2].split("/")]
    assert len(accs) == 2 and all(0.0 <= x <= 1.0 for x in accs)
