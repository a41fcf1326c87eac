"""FixedPointLayer's training forward without host reads (``sync_free``, paper 003 App. D.2's stopping rule decided
on the device): the same iterate, output and gradients as the early-exit host loop, bit for bit; no
device-to-host read inside the forward; the device-drawn Gamma(4, 1) cap (003, Section 3.1) has the exact
distribution and is reproducible under a seed.

Exact comparisons (``torch.equal``) in float64: the sync-free loop applies the host loop's iterations to the same
operands and then selects with ``torch.where``, so nothing may differ by even one ulp."""
import copy
import math

import pytest
import torch
from hypothesis import given, settings, strategies as st

from lrnnkit.layers.fixed_point import FixedPointLayer
from .test_fixed_point import D64, _assert_identical, _layer, _randomize_y_terms, _run


def _pair(**kw):
    """Two training-mode layers with the same weights: ``sync_free`` True and False (the early-exit host loop)."""
    dev = _layer(**kw, sync_free=True)
    _randomize_y_terms(dev)
    host = copy.deepcopy(dev)
    host.sync_free = False
    return dev.train(), host.train()


# the rule holds early (a few iterations), late (at the last iteration the cap allows: the cap is set one above
# the count the rule needs, found with a cap of 400), never within the cap (tol 1e-300)
CASES = {"early": (dict(alpha_range="contractive", tol=0.1, train_max_iters=16), lambda it, cap: it <= cap // 2),
         "late": (dict(alpha_range="paper", tol=1e-12, train_max_iters=400), lambda it, cap: 6 <= it == cap - 1),
         "never": (dict(alpha_range="paper", tol=1e-300, train_max_iters=8), lambda it, cap: it == cap)}


def _case(case, u, w, **kw):
    """The two layers of a case, and its cap (for "late": one above the iterations the rule needs on (u, w))."""
    opts, which = CASES[case]
    dev, host = _pair(**opts, **kw)
    if case == "late":
        need = _run(host, u, w)[3]
        assert need < 400, "the late case needs a run that converges"
        dev.train_max_iters = host.train_max_iters = need + 1
    return dev, host, lambda it: which(it, host.train_max_iters)


@pytest.mark.parametrize("state_size", [None, 2])
@pytest.mark.parametrize("case", sorted(CASES))
def test_sync_free_training_forward_is_the_early_exit_one(case, state_size):
    """Output, input gradient and every parameter gradient equal (torch.equal) to the host loop's, as do the
    iteration count and the last residual; the case is checked to be what it claims (early / late / never)."""
    g = torch.Generator().manual_seed(5)
    u = torch.randn(2, 9, 6, dtype=D64, generator=g)
    w = torch.randn(2, 9, 6, dtype=D64, generator=g)
    dev, host, which = _case(case, u, w, state_size=state_size, num_reflections=2)
    a, b = _run(dev, u, w), _run(host, u, w)
    assert which(b[3]), (case, b[3])
    assert isinstance(dev.last_iterations, torch.Tensor) and isinstance(host.last_iterations, int)
    _assert_identical(a, b)


@pytest.mark.parametrize("case", sorted(CASES))
def test_sync_free_matches_on_packed_sequences(case):
    """cu_seqlens (three sequences, one of them a single token, and an empty one at the end): the per-sequence
    stopping rule decided on the device gives the host loop's output and gradients exactly."""
    g = torch.Generator().manual_seed(6)
    u = torch.randn(1, 12, 6, dtype=D64, generator=g)
    w = torch.randn(1, 12, 6, dtype=D64, generator=g)
    cu = torch.tensor([0, 4, 5, 12, 12])
    dev, host, which = _case(case, u, w, state_size=2)
    if case == "late":                                  # the cap for the packed run
        dev.train_max_iters = host.train_max_iters = 400
        dev.train_max_iters = host.train_max_iters = _run(host, u, w, cu_seqlens=cu)[3] + 1
    a, b = _run(dev, u, w, cu_seqlens=cu), _run(host, u, w, cu_seqlens=cu)
    assert which(b[3]), (case, b[3])
    _assert_identical(a, b)


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 3), st.integers(1, 10), st.sampled_from([None, 1, 3]), st.sampled_from([0.3, 1e-3, 1e-300]),
       st.integers(1, 10), st.sampled_from(["paper", "contractive"]), st.integers(0, 10**6))
def test_sync_free_equals_host_loop_property(B, T, state_size, tol, cap, alpha_range, seed):
    """Over shapes, caps (1 included: no iteration before the final step), tolerances and weights: identical."""
    dev, host = _pair(seed=seed % 1000, state_size=state_size, tol=tol, train_max_iters=cap, alpha_range=alpha_range)
    g = torch.Generator().manual_seed(seed)
    u = torch.randn(B, T, 6, dtype=D64, generator=g)
    w = torch.randn(B, T, 6, dtype=D64, generator=g)
    _assert_identical(_run(dev, u, w), _run(host, u, w))


def test_evaluation_keeps_the_early_exit_loop():
    """Out of training the forward stops early on the host (an int count, below max_iters = 100)."""
    dev, _ = _pair(alpha_range="contractive", tol=0.1, train_max_iters=16)
    dev.eval()
    dev(torch.randn(2, 9, 6, dtype=D64))
    assert isinstance(dev.last_iterations, int) and dev.last_iterations < 16


@pytest.mark.parametrize("rule", ["paper", "authors"])
@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("sample", [False, True])
def test_training_forward_reads_nothing_from_the_device(no_host_reads, packed, sample, rule):
    """The sync-free training forward and its backward run with every host read refused, under either iteration
    rule (the authors' decided on the device, its quantile included: on CUDA torch.quantile's range check of q is a
    host one for a Python float q, its sort, gather and lerp device work); the early-exit loop (in training with
    sync_free=False, and in evaluation) does read, so the detector can fail."""
    dev, host = _pair(state_size=2, tol=0.1, train_max_iters=16, sample_max_iters=sample, iteration=rule)
    u = torch.randn(1, 12, 6, dtype=D64)
    cu = torch.tensor([0, 4, 12]) if packed else None
    # packed: _mix, past pack(), which checks cu_seqlens on the host once per forward (outside the iteration)
    forward = (lambda layer: layer._mix(u, cu)) if packed else (lambda layer: layer(u)[0])
    forward(dev).sum().backward()
    assert all(p.grad is not None for p in dev.parameters())
    with pytest.raises(no_host_reads):
        forward(host)
    dev.eval()
    with pytest.raises(no_host_reads):
        forward(dev)


# ------------------------------------------------------------------------------------------------ the sampled cap
def _ceil_gamma4_pmf(n: int) -> float:
    """P(ceil(G) = n) for G ~ Gamma(4, 1): F(n) - F(n - 1), F(x) = 1 - e^{-x} (1 + x + x^2/2 + x^3/6)."""
    F = lambda x: 1 - math.exp(-x) * (1 + x + x * x / 2 + x ** 3 / 6) if x > 0 else 0.0   # noqa: E731
    return F(n) - F(n - 1)


def _chi_square(caps, top: int) -> float:
    """Pearson's statistic of caps against ceil(Gamma(4, 1)) clamped to [1, top] (the last bin takes the tail)."""
    n = len(caps)
    stat = 0.0
    for k in range(1, top + 1):
        p = _ceil_gamma4_pmf(k) if k < top else 1 - sum(_ceil_gamma4_pmf(j) for j in range(1, top))
        stat += (sum(c == k for c in caps) - n * p) ** 2 / (n * p)
    return stat


def test_device_cap_has_the_host_draws_distribution():
    """4000 device draws (bound 100) and 4000 host draws (:meth:`iteration_cap`, torch's Gamma sampler), binned
    1..10 and >= 11 against the exact law of ceil(Gamma(4, 1)): Pearson's chi-square with 10 degrees of freedom
    below 29.6 (the 0.999 quantile; seeded, so deterministic). A cap drawn as Gamma(3, 1) or Gamma(5, 1) fails it
    (checked below: statistic > 100). Clamped to the bound 3, the caps lie in {1, 2, 3} with the same law."""
    layer = _layer(tol=1e-300, max_iters=100, sample_max_iters=True).train()
    torch.manual_seed(11)
    dev = [int(layer.device_cap("cpu")) for _ in range(4000)]
    torch.manual_seed(12)
    host = [layer.iteration_cap() for _ in range(4000)]
    clamp = lambda c: min(c, 11)   # noqa: E731
    assert _chi_square([clamp(c) for c in dev], 11) < 29.6
    assert _chi_square([clamp(c) for c in host], 11) < 29.6
    g = torch.Generator().manual_seed(13)
    for k in (3, 5):                                    # the test tells a wrong shape apart
        wrong = -torch.log1p(-torch.rand(4000, k, dtype=D64, generator=g)).sum(1).ceil().clamp(1, 11)
        assert _chi_square([int(c) for c in wrong], 11) > 100
    layer.train_max_iters = 3
    torch.manual_seed(14)
    small = [int(layer.device_cap("cpu")) for _ in range(2000)]
    assert set(small) <= {1, 2, 3} and _chi_square(small, 3) < 13.8      # 2 degrees of freedom, 0.999 quantile


def test_device_cap_is_reproducible_and_drives_the_forward():
    """The same seed gives the same cap; the sampled sync-free forward runs exactly that many iterations (tol
    1e-300: the rule never holds) and equals the host loop run with that cap as train_max_iters."""
    dev, _ = _pair(tol=1e-300, max_iters=100, sample_max_iters=True)
    caps = []
    for s in range(6):
        torch.manual_seed(s)
        c = int(dev.device_cap("cpu"))
        torch.manual_seed(s)
        assert int(dev.device_cap("cpu")) == c
        caps.append(c)
        u = torch.randn(2, 5, 6, dtype=D64, generator=torch.Generator().manual_seed(s))
        w = torch.randn(2, 5, 6, dtype=D64, generator=torch.Generator().manual_seed(s + 100))
        torch.manual_seed(s)
        a = _run(dev, u, w)
        host = copy.deepcopy(dev)
        host.sync_free, host.sample_max_iters, host.train_max_iters = False, False, c
        b = _run(host, u, w)
        assert a[3] == c
        _assert_identical(a, b)
    assert len(set(caps)) > 1


def test_sync_free_flag_is_checked():
    from lrnnkit.errors import InputError
    with pytest.raises(InputError, match="sync_free"):
        FixedPointLayer(hidden_size=4, num_heads=1, sync_free="yes")
