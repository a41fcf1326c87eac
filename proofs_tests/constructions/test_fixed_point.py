"""Paper 003: the fixed-point iteration (eq. 4) against the direct solve (eq. 2), and the convergence condition for
the group constructions (see lrnnkit/constructions/fixed_point.py): with Lambda = lam I, the iteration converges to
a letter matrix A iff the eigenvalues of A^{-1} lie in one open half-plane Re > 0 or Re < 0."""
import numpy as np
import pytest

from lrnnkit.automata.sources import load_source
from lrnnkit.constructions import compile
from lrnnkit.constructions import fixed_point as FP


def _sequence(As, lam, T, seed=0):
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(As), size=T)
    d = As[0].shape[0]
    Lams = np.full((T, d), lam)
    Qs = np.stack([lam * np.linalg.inv(As[i]) for i in idx])
    Bx = rng.normal(size=(T, d))
    return Lams, Qs, Bx


@pytest.mark.parametrize("m", [7, 8, 12])
def test_rotations_converge_to_direct_solve(m):
    # letters 0 and 1 of Z_m (angles 0 and 2 pi/m < pi/2): the iteration reaches the dense states
    model = compile(load_source(f"group:Z{m}"), construction="cyclic-rotation")
    As = [model.layers[0].transitions[e].A for e in (0, 1)]
    lam = min(FP.scalar_lambda(A) for A in As)
    assert all(FP.iteration_radius(A, lam) < 1 for A in As)
    Lams, Qs, Bx = _sequence(As, lam, 12)
    it = FP.fixed_point_iterate(Lams, Qs, Bx, 400)
    # contraction factor < 1 per sweep: after 400 sweeps float64 agreement to 1e-8 (relative to the state scale)
    ref = FP.direct_solve(Lams, Qs, Bx)
    assert np.abs(it[-1] - ref).max() < 1e-8 * (1 + np.abs(ref).max())


@pytest.mark.parametrize("name", ["S3", "S4", "D4", "A4"])
def test_permutation_letters_never_converge(name):
    model = compile(load_source(f"group:{name}"), construction="householder-permutation")
    ts = model.layers[0].transitions
    ident = [np.allclose(t.A, np.eye(len(t.A))) for t in ts]
    for t, is_id in zip(ts, ident):
        assert (FP.scalar_lambda(t.A) is None) == (not is_id)
    assert not FP.model_convergence(model)["all_converge"]


def test_transposition_diverges_numerically():
    P = np.array([[0.0, 1.0], [1.0, 0.0]])
    for lam in (0.3, 1.0, -0.5):
        assert FP.iteration_radius(P, lam) >= 1
    Lams, Qs, Bx = _sequence([P], 0.5, 6)
    it = FP.fixed_point_iterate(Lams, Qs, Bx, 60)
    ref = FP.direct_solve(Lams, Qs, Bx)
    assert np.abs(it[-1] - ref).max() > 1.0        # no convergence: error grows (radius 1.5)


def test_reflection_layers_never_converge():
    for model in (compile(load_source("group:Z5"), construction="modadd-reflections"),
                  compile(load_source("group:D4"), construction="dihedral-deltanet")):
        L = model.layers[-1]
        assert all(FP.scalar_lambda(t.A) is None for t in L.transitions)


def test_parity_sign_converges_per_token():
    model = compile(load_source("parity"), construction="parity-sign")
    lams = [FP.scalar_lambda(t.A) for t in model.layers[0].transitions]
    assert lams[0] > 0 and lams[1] < 0                 # identity: lam > 0; the flip -1: lam < 0
    assert FP.model_convergence(model)["all_converge"]


@pytest.mark.parametrize("m", range(3, 13))
def test_cyclic_letters_converge_iff_cos_nonzero(m):
    model = compile(load_source(f"group:Z{m}"), construction="cyclic-rotation")
    for e, t in enumerate(model.layers[0].transitions):
        exp = model.notes["exponents"][e]
        want = abs(np.cos(2 * np.pi * exp / m)) > 1e-9
        assert (FP.scalar_lambda(t.A) is not None) == want, (m, e)


def test_obtuse_rotation_converges_with_negative_lambda():
    th = 2 * np.pi / 3
    R = np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])
    lam = FP.scalar_lambda(R)
    assert lam < 0 and FP.iteration_radius(R, lam) < 1
    Lams, Qs, Bx = _sequence([R], lam, 6, seed=3)
    # radius 0.866: the block-triangular iteration needs ~ T log / log(1/0.866) sweeps; 1500 is ample
    it = FP.fixed_point_iterate(Lams, Qs, Bx, 1500)
    ref = FP.direct_solve(Lams, Qs, Bx)
    assert np.abs(it[-1] - ref).max() < 1e-8 * (1 + np.abs(ref).max())   # float64, contraction < 1 per sweep
