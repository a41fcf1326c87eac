"""Evaluation (lrnnkit.learn.evaluate): the test mixture of 000, Fig. 4 caption (lengths uniform in a range, one
accuracy over all words) and the accuracy at every prefix, on models whose answers are known exactly: parity
computed outright (always right), a constant answer, and parity right only up to a position."""
from fractions import Fraction

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from lrnnkit.learn.evaluate import evaluate, evaluate_mixture, mixture_lengths, mixture_words
from lrnnkit.learn.tasks import IGNORE, make_task

TASK = make_task("parity")


class ParityUpTo(torch.nn.Module):
    """Parity's answer (the running count of '1' mod 2) at positions before ``horizon``, class ``const`` after:
    ``horizon = None`` is always right, ``horizon = 0`` a constant predictor."""

    def __init__(self, horizon=None, const: int = 0):
        super().__init__()
        self.horizon, self.const = horizon, const

    def forward(self, x):
        par = torch.cumsum((x == TASK.vocab.index("1")).long(), 1) % 2
        if self.horizon is not None:
            pos = torch.arange(x.shape[1])[None, :]
            par = torch.where(pos < self.horizon, par, torch.full_like(par, self.const))
        return torch.nn.functional.one_hot(par, 2).float()


def test_mixture_lengths_are_uniform():
    """000's 8192 words in 40..256: 217 lengths, 37.75 expected words each. Chi-square goodness of fit against the
    uniform law: p > 1e-3 (the draw is fixed by the seed, so this is no flaky threshold: it is a check that the
    law is the uniform one; a range cut short fails it, below)."""
    lens = mixture_lengths(8192, 40, 256)
    assert lens.min() >= 40 and lens.max() <= 256 and len(lens) == 8192
    counts = np.bincount(lens - 40, minlength=217)
    assert chisquare(counts).pvalue > 1e-3
    # the test can fail: draws from 40..240 read against 40..256 (a range cut short by 16 lengths)
    short = np.bincount(mixture_lengths(8192, 40, 240) - 40, minlength=217)
    assert chisquare(short).pvalue < 1e-6


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 60), lo=st.integers(1, 12), extra=st.integers(0, 12), seed=st.integers(0, 10**6))
def test_mixture_words_are_the_drawn_lengths(n, lo, extra, seed):
    hi = lo + extra
    groups = mixture_words(TASK, n, lo, hi, seed)
    want = np.bincount(mixture_lengths(n, lo, hi, seed) - lo, minlength=hi - lo + 1)
    assert {L: x.shape[0] for L, x, _ in groups} == {lo + i: int(c) for i, c in enumerate(want) if c}
    assert all(x.shape == y.shape == (x.shape[0], L) for L, x, y in groups)
    assert sum(x.shape[0] for _, x, _ in groups) == n
    # the same words every time (every model is scored on the same set)
    again = mixture_words(TASK, n, lo, hi, seed)
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(groups, again))


def test_an_always_right_model_scores_one():
    r = evaluate_mixture(ParityUpTo(), TASK, 300, 20, 60, batch=64)
    assert r["final_accuracy"] == r["accuracy"] == r["scaled_accuracy"] == 1.0
    assert r["words"] == 300 and r["lengths"] == [20, 60] and sum(r["count"].values()) == 300


@pytest.mark.parametrize("const", [0, 1])
def test_a_constant_predictor_scores_the_share_of_its_class(const):
    """Counted exactly from the mixture's own labels: the final accuracy is the share of words whose last label
    is ``const``, the token accuracy the share of supervised positions labelled ``const``."""
    n, lo, hi = 257, 5, 40
    r = evaluate_mixture(ParityUpTo(horizon=0, const=const), TASK, n, lo, hi, batch=50)
    last = sum(int((y[:, -1] == const).sum()) for _, _, y in mixture_words(TASK, n, lo, hi))
    pos = sum(int(((y == const) & (y != IGNORE)).sum()) for _, _, y in mixture_words(TASK, n, lo, hi))
    tot = sum(int((y != IGNORE).sum()) for _, _, y in mixture_words(TASK, n, lo, hi))
    assert r["final_accuracy"] == float(Fraction(last, n))
    assert r["accuracy"] == float(Fraction(pos, tot))
    assert r["scaled_accuracy"] == pytest.approx((r["final_accuracy"] - 0.5) / 0.5, abs=1e-15)
    assert 0.3 < r["final_accuracy"] < 0.7          # parity's last bit is a fair coin: not a degenerate check


def test_mixture_is_the_length_weighted_mean_of_per_length_accuracies():
    """A model right up to position 30 and constant after: words of length <= 30 score 1, longer ones about 1/2.
    The mixture's final accuracy equals sum_L count(L) final_L / n, each final_L counted on the mixture's words of
    length L, in exact arithmetic (the float result is the correctly rounded fraction: compared with ==)."""
    n, lo, hi = 400, 10, 60
    model = ParityUpTo(horizon=30, const=1)
    r = evaluate_mixture(model, TASK, n, lo, hi, batch=64)
    total = Fraction(0)
    for L, x, y in mixture_words(TASK, n, lo, hi):
        pred = model(torch.as_tensor(x)).argmax(-1).numpy()
        final_L = Fraction(int((pred[:, -1] == y[:, -1]).sum()), x.shape[0])
        assert final_L == 1 or L > 30
        total += x.shape[0] * final_L
    assert r["final_accuracy"] == float(total / n)
    assert 0.5 < r["final_accuracy"] < 1.0


def test_prefix_accuracy_is_the_accuracy_at_every_position():
    """On the longest test words the accuracy at position t (the word's prefix of t + 1 tokens, the models being
    causal): exactly 1 before the horizon, the share of the constant's class after it."""
    model = ParityUpTo(horizon=25, const=0)
    ev = evaluate(model, TASK, [10, 50], n=64, batch=16)
    assert set(ev["prefix_accuracy"]) == {"50"}
    pa = ev["prefix_accuracy"]["50"]
    assert len(pa) == 50 and pa[:25] == [1.0] * 25
    assert all(0.0 <= a < 1.0 for a in pa[25:]) and 0.3 < sum(pa[25:]) / 25 < 0.7
    # the last position's accuracy is the per-length final accuracy (every position of parity is supervised)
    assert pa[-1] == ev["final_accuracy"]["50"]


class _Spectra(torch.nn.Module):
    """A stand-in model whose transition matrices are given: ``transition_matrices`` returns them whatever the
    words (the summary's matrix budget is what is under test)."""

    def __init__(self, mats):
        super().__init__()
        self.mats = mats

    def transition_matrices(self, x):
        return self.mats


def test_eigenvalue_summary_bounds_its_lapack_work_and_says_so():
    """Per layer at most ``max_cost // d^3`` matrices (at least one, first and last token included, evenly spaced)
    have their spectra computed, and the summary says how many of how many; with room for all, every one. The
    matrices are diagonal, so each one's eigenvalues are its diagonal (exact): the sampled summary is the summary
    of exactly the chosen matrices."""
    from lrnnkit.learn.evaluate import eigenvalue_summary
    task = make_task("parity")
    d, m = 4, 10
    diag = torch.linspace(-0.9, 0.9, m * d, dtype=torch.float64).reshape(1, m, 1, d)
    mats = [torch.diag_embed(diag)]                       # (1, m, 1, d, d): token t's eigenvalues diag[0, t, 0]
    full = eigenvalue_summary(_Spectra(mats), task, length=4, n=1)
    assert (full["matrices"], full["of"]) == (m, m)
    assert full["min_real"] == pytest.approx(-0.9, abs=1e-12) and full["max_abs"] == pytest.approx(0.9, abs=1e-12)
    assert full["fraction_negative"] == pytest.approx(0.5, abs=1e-12)
    some = eigenvalue_summary(_Spectra(mats), task, length=4, n=1, max_cost=3 * d ** 3)
    assert (some["matrices"], some["of"]) == (3, m)
    keep = [0, 4, 9]             # linspace(0, 9, 3) rounded: 0, 4.5 -> 4 (round half to even), 9
    ev = diag[0, keep, 0].reshape(-1)
    assert some["min_real"] == pytest.approx(float(ev.min()), abs=1e-12)
    assert some["max_abs"] == pytest.approx(float(ev.abs().max()), abs=1e-12)
    one = eigenvalue_summary(_Spectra(mats), task, length=4, n=1, max_cost=1)
    assert (one["matrices"], one["of"]) == (1, m)      # at least one, whatever the budget
