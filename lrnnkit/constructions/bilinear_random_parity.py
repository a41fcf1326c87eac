"""Parity with a frozen random diagonal bilinear network and a trained linear read-out (paper 004, Proposition
"fixed parity" and its proof in the appendix; formulas lost in the extraction, reconstructed here).

Model: ``h_t = D(x_t) h_{t-1}``, ``D(0) = diag(a)``, ``D(1) = diag(b)``, no additive term, ``a, b, h_0`` frozen i.i.d.
symmetric (here N(0, 1)); only a linear read-out ``y = sign(w^T h_t)`` is trained. Component i evolves as
``h_{t,i} = h_{0,i} a_i^{#zeros} b_i^{#ones}``: if ``a_i > 0 > b_i`` its sign is ``sign(h_{0,i}) (-1)^{#ones}`` for
every length (the "ideal" component of the remark); if ``a_i < 0 < b_i`` the sign also depends on the length.

Printed claims (004): (i) the network learns parity "with probability 1 - 2^{-H}" (H = width), the probability
that some component has ``a_i b_i < 0``; (ii) remark: a length-independent single-component read-out exists with
probability ``1 - (3/4)^H``. This module measures, over random draws: p_exists (some ``a_i b_i < 0``), p_ideal
(some ``a_i > 0 > b_i``) and p_trained (a read-out fitted by least squares on short words classifies every test
word of length ``test_len`` correctly). The trained read-out is checked statistically, never certified: its
weights are floats, and the magnitudes ``|h_{t,i}|`` grow or shrink exponentially at different rates, so the
component that dominates ``w^T h_t`` at long lengths need not be a good one.

The registered construction builds such a model for a parity automaton (kind "bilinear" since ``|a_i|`` may
exceed 1), with the read-out trained on all words of length <= 8.
"""
from __future__ import annotations

import itertools

import numpy as np

from ..errors import InputError
from ..model import Decoder, Layer, Model, Transition
from . import _support as S
from .registry import Construction, Cost, register

NAME = "bilinear-random-parity"


def _features(a, b, h0, words: np.ndarray) -> np.ndarray:
    """h_T for every word (rows of 0/1), computed in log-magnitude + sign to avoid under/overflow, then rescaled
    per word (a positive per-word factor does not change sign(w^T h))."""
    ones = words.sum(axis=1, keepdims=True)
    zeros = words.shape[1] - ones
    la, lb = np.log(np.abs(a)), np.log(np.abs(b))
    logmag = np.log(np.abs(h0)) + zeros * la + ones * lb
    sgn = np.sign(h0) * np.where((zeros % 2 == 1)[:, :1] & (a < 0), -1, 1) * np.where((ones % 2 == 1) & (b < 0), -1, 1)
    logmag = logmag - logmag.max(axis=1, keepdims=True)
    return sgn * np.exp(logmag)


def _all_words(max_len: int) -> list:
    out = []
    for L in range(1, max_len + 1):
        out += [np.array(w) for w in itertools.product((0, 1), repeat=L)]
    return out


def train_readout(a, b, h0, train_len: int = 8) -> np.ndarray:
    """Least-squares read-out on raw states h_T (targets +-1 for even/odd) over all words of length <= train_len."""
    X, y = [], []
    for w in _all_words(train_len):
        h = h0.copy()
        for x in w:
            h = (b if x else a) * h
        X.append(h)
        y.append(1.0 if w.sum() % 2 else -1.0)
    w, *_ = np.linalg.lstsq(np.array(X), np.array(y), rcond=None)
    return w


def parity_probability_experiment(H: int, trials: int = 200, seed: int = 0, train_len: int = 8,
                                  test_len: int = 500, n_test: int = 64, with_trained: bool = True) -> dict:
    """Measured p_exists, p_ideal, p_trained (module docstring) over ``trials`` random draws of width H."""
    rng = np.random.default_rng(seed)
    ex = ideal = trained = 0
    for _ in range(trials):
        a, b, h0 = rng.normal(size=H), rng.normal(size=H), rng.normal(size=H)
        ex += bool(np.any(a * b < 0))
        ideal += bool(np.any((a > 0) & (b < 0)))
        if not with_trained:
            continue
        w = train_readout(a, b, h0, train_len)
        words = rng.integers(0, 2, size=(n_test, test_len))
        F = _features(a, b, h0, words)
        pred = np.sign(F @ w)
        want = np.where(words.sum(axis=1) % 2 == 1, 1.0, -1.0)
        trained += bool(np.all(pred == want))
    return {"H": H, "trials": trials, "p_exists": ex / trials, "claim_exists": 1 - 2.0 ** -H,
            "p_ideal": ideal / trials, "claim_ideal": 1 - 0.75 ** H,
            "p_trained": trained / trials if with_trained else None,
            "train_len": train_len, "test_len": test_len, "n_test": n_test}


def _reason(fsa):
    r = S.group_of(fsa)
    if isinstance(r, str):
        return r
    if r[2].order > 2:
        return f"the transition group has order {r[2].order}; this construction is for parity (order <= 2)"
    return None


def single_component_readout(a, b, h0, train_len: int = 8) -> np.ndarray | None:
    """The read-out of the proof: ``w = sign(h_{0,i}) e_i`` for the first component whose sign classifies every
    training word (all words of length <= train_len) correctly, or None if no component does."""
    words = _all_words(train_len)
    for i in range(len(a)):
        ok = True
        for wd in words:
            h = h0[i] * np.prod(np.where(wd == 1, b[i], a[i]))
            if np.sign(h) * np.sign(h0[i]) != (-1.0 if wd.sum() % 2 else 1.0):
                ok = False
                break
        if ok:
            w = np.zeros(len(a))
            w[i] = -np.sign(h0[i])       # w^T h > 0 <=> odd
            return w
    return None


def build(fsa, H: int = 16, seed: int = 0, train_len: int = 8, readout: str = "single", **options) -> Model:
    if options:
        raise InputError(f"{NAME}: unknown option(s) {sorted(options)}")
    why = _reason(fsa)
    if why:
        raise InputError(f"{NAME}: {why}")
    states, perms, G, _, letter_elem = S.group_of(fsa)
    rng = np.random.default_rng(seed)
    a, b, h0 = rng.normal(size=H), rng.normal(size=H), rng.normal(size=H)
    if readout == "lstsq":
        w = train_readout(a, b, h0, train_len)
    elif readout == "single":
        w = single_component_readout(a, b, h0, train_len)
        if w is None:
            raise InputError(f"{NAME}: no component of the random network (H = {H}, seed = {seed}) classifies the "
                             f"training words; try another seed or a larger H")
    else:
        raise InputError(f"{NAME}: readout must be 'single' or 'lstsq', got {readout!r}")
    trans = [Transition(np.diag(b if letter_elem[x] != 0 else a), np.zeros(H), diag=(b if letter_elem[x] != 0 else a))
             for x in range(fsa.n_letters)]
    dec = Decoder(np.stack([-w, w]), np.zeros(2), ["even", "odd"])
    q0 = states.index(fsa.start)
    table = [S.output_index(fsa, states[int(G.elements[min(i, G.order - 1)][q0])]) for i in range(2)]
    layer = Layer("bilinear", H, trans, h0, S.input_identity(fsa), dec, None, symbol_names=list(fsa.alphabet),
                  name="frozen random diagonal")
    labels = S.output_labels(fsa)
    return Model(list(fsa.alphabet), [layer], S.readout_from_layer(0, table, 2, len(labels)), labels,
                 name=f"{NAME}({fsa.name})",
                 notes={"H": H, "seed": seed, "train_len": train_len, "readout": readout, "checked": "statistically, not certified"})


register(Construction(
    name=NAME, paper="004", statement="Proposition (fixed parity, random frozen network)",
    applies_to="parity (transition group of order <= 2)", build=build, applicable=_reason, layers="1",
    width="H (option, default 16)", factors_per_token="n/a (random diagonal, trained read-out)", priority=-50,
    cost=lambda fsa: Cost((16,), None, gh=False),
    notes="float weights: checked statistically (success probability vs H), never certified",
    options={"H": "width", "seed": "random seed", "train_len": "train on all words of length <= train_len",
             "readout": "'single' (the proof's one-component read-out, default) or 'lstsq' (least squares)"}))
