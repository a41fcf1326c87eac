"""Targeted tests for paper 003's statements (lrnnkit/theorems/paper_003.py): the exact linear-algebra helpers
against independent oracles (sympy, numpy), hand counterexamples, and symbolic identities."""
import math
from fractions import Fraction as F

import numpy as np
import pytest
import sympy
from hypothesis import given, strategies as st

from lrnnkit.theorems import paper_003 as p3
from lrnnkit.theorems._exact import det, exact_identity as eye, exact_matmul as mm, is_pd, is_psd, msub as sub
from lrnnkit.theorems._exact import norm2_lt1, solve, transpose as tr
from lrnnkit.theorems.paper_003.mixer import _sym_from
from lrnnkit.theorems.paper_003.theorem_2 import _descent_ok

rat = st.integers(-12, 12).map(lambda k: F(k, 4))


def sym_matrix(n):
    return st.lists(rat, min_size=n * (n + 1) // 2, max_size=n * (n + 1) // 2).map(lambda v: _sym_from(v, n))


@given(st.integers(1, 4).flatmap(sym_matrix))
def test_is_pd_matches_sympy(S):
    assert is_pd(S) == sympy.Matrix(S).is_positive_definite
    assert is_psd(S) == sympy.Matrix(S).is_positive_semidefinite


@given(st.integers(1, 3).flatmap(lambda n: st.lists(st.lists(rat, min_size=n, max_size=n), min_size=n, max_size=n)))
def test_norm2_lt1_matches_svd(P):
    s = np.linalg.svd(np.array(P, dtype=float), compute_uv=False).max()
    # float64 singular values are accurate to ~1e-15 here; skip the boundary band where float cannot decide
    if abs(s - 1) > 1e-9:
        assert norm2_lt1(P) == (s < 1)


def test_theorem_2_1_counterexample_by_hand():
    """d = 1, T = 1, Lambda = -1/2, Q = 1/4: both hypotheses hold, Lipschitz constant 9/8, and the fixed-point
    iteration (eq. 4) diverges: its error is multiplied by 9/8 every iteration."""
    lam, Q = F(-1, 2), F(1, 4)
    assert abs(lam) < 1 and abs(1 - Q) < 1
    assert p3.lipschitz_operator([lam], [[1 - Q]], 1) == [[F(9, 8)]]
    B, x = F(1), F(1)
    fixed = (1 - lam) * Q * B * x / (1 - (1 - lam) * (1 - Q))
    h = F(0)
    errs = []
    for _ in range(6):
        h = (1 - lam) * (Q * B * x + (1 - Q) * h)
        errs.append(h - fixed)
    assert all(e2 == F(9, 8) * e1 for e1, e2 in zip(errs, errs[1:]))


@given(st.integers(1, 3), st.integers(1, 4), st.integers(0, 2**31 - 1))
def test_theorem_2_1_corrected_bound_float(d, T, seed):
    """Corrected Theorem 2.1: with 0 <= lambda < 1, ||L||_2 <= ||I - Q||_2 (float64 SVD, tolerance 1e-12)."""
    rng = np.random.default_rng(seed)
    lams = [F(int(v), 16) for v in rng.integers(0, 16, size=d)]
    P = [[F(int(v), 8) for v in row] for row in rng.integers(-8, 9, size=(d, d))]
    L = np.array(p3.lipschitz_operator(lams, P, T), dtype=float)
    assert np.linalg.norm(L, 2) <= np.linalg.norm(np.array(P, dtype=float), 2) + 1e-12


def test_f1_erratum_instance_float():
    """003:theorem-2.1-proof-neumann, independent float check (numpy SVD; tolerance 1e-12, far below the gap between
    the printed bound 9/8 and the true constant 3/4): the printed chain's factors and the true Lipschitz constant."""
    lams, P = p3.F1_LAMS, p3.F1_P
    D = np.diag([float(x) for x in lams])
    S = np.eye(2) + D                                                    # sum_{s <= 1} Lambda^s
    printed = np.linalg.norm(S, 2) * np.linalg.norm(np.eye(2) - D, 2) * np.linalg.norm(np.array(P, float), 2)
    assert printed == pytest.approx(9 / 8, abs=1e-12)
    L = np.array(p3.lipschitz_operator(lams, P, 2), dtype=float)
    assert np.linalg.norm(L, 2) == pytest.approx(3 / 4, abs=1e-12)
    assert p3.printed_f1_bound(lams, F(3, 4), 1) == F(9, 8)
    assert p3.repaired_f1_bound(lams, 1) == 1                            # max_i sum_s (lambda^s (1 - lambda))^2


def test_theorem_2_2_weak_hypothesis_witness():
    """Spectral radius < 1 is not enough for Theorem 2.2: J = [[1, 1/2], [-3/2, -1]], delta = (-14, -10)."""
    J = [[F(1), F(1, 2)], [F(-3, 2), F(-1)]]
    assert sympy.Matrix(J).eigenvals() == {sympy.Rational(1, 2): 1, sympy.Rational(-1, 2): 1}
    ok, info = _descent_ok(J, [F(-14), F(-10)])
    assert not ok and info["inner_product"] == "-4/3"


def test_theorem_C1_closed_form_against_quadrature():
    """p = P(omega x + b > ln 99) by quadrature of the Gaussian density of omega x (scipy.integrate) vs the closed
    form Phi((b - ln 99)/||omega||) (tolerance 1e-8: quad's absolute error estimate is ~1e-10)."""
    from scipy.integrate import quad
    for w, b in [(1.0, 5.0), (2.0, 5.0), (3.0, 1.0)]:
        dens = lambda s, w=w: math.exp(-s * s / (2 * w * w)) / (w * math.sqrt(2 * math.pi))  # noqa: E731
        p_quad, _ = quad(dens, math.log(99) - b, math.inf)
        m = p3.memory_closed_form(w, b)
        assert abs(p_quad / (1 - p_quad) - m) < 1e-8
    ratio = p3.memory_closed_form(1.0, 5.0) / p3.memory_closed_form(2.0, 5.0)
    assert 1.3 < ratio < 1.5 and math.exp(3) > 20


@given(st.integers(1, 6), st.integers(0, 2**31 - 1))
def test_theorem_D2_complex_single_reflection(n, seed):
    """U y = z H y with one complex Householder H and phase z (float64; tolerance 1e-10)."""
    rng = np.random.default_rng(seed)
    U, _ = np.linalg.qr(rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n)))
    y = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    s = np.vdot(y, U @ y)
    z = s / abs(s)
    v = y - (U @ y) / z
    H = np.eye(n) - 2 * np.outer(v, v.conj()) / np.vdot(v, v).real if np.linalg.norm(v) > 1e-12 else np.eye(n)
    assert np.allclose(H @ H.conj().T, np.eye(n), atol=1e-10)
    assert np.linalg.norm(z * (H @ y) - U @ y) <= 1e-10 * np.linalg.norm(y)


def test_reflections_of_orthogonal_exact():
    S = [[F(0), F(1, 2), F(-1)], [F(-1, 2), F(0), F(2)], [F(1), F(-2), F(0)]]
    U = p3.cayley_orthogonal(S)
    assert mm(tr(U), U) == eye(3)
    hs = p3.reflections_of_orthogonal(U)
    P = eye(3)
    for H in hs:
        assert mm(H, H) == eye(3)
        P = mm(P, H)
    assert P == U and len(hs) <= 3


def test_equation_9_symbolic():
    """Eq. 9 and the expanded recurrence as sympy identities (d_state = d_inner = 2)."""
    Q = sympy.Matrix(2, 2, sympy.symbols("q0:4"))
    D = sympy.diag(*sympy.symbols("d0:2"))
    B = sympy.Matrix(sympy.symbols("b0:2"))
    C = sympy.Matrix(sympy.symbols("c0:2"))
    x = sympy.Matrix(sympy.symbols("x0:2"))
    h = sympy.Matrix(2, 2, sympy.symbols("h0:4"))
    y = (C.T * h).T
    I = sympy.eye(2)
    lhs = B * (D * Q * x).T + B * (D * (I - Q) * y).T
    rhs = B * (D * (Q * (x - y) + y)).T
    assert (lhs - rhs).expand() == sympy.zeros(2, 2)
    assert (B * (D * (I - Q) * y).T - B * C.T * h * (I - Q).T * D).expand() == sympy.zeros(2, 2)


@given(st.lists(st.integers(-8, 8), min_size=4, max_size=4), st.integers(1, 8))
def test_negative_eigenvalue_excludes_contractive(entries, k):
    """Any Q with a real negative eigenvalue has ||I - Q||_2 > 1: build Q = S diag(-k/4, mu) S^{-1}."""
    a, b, c, d = entries
    S = [[F(a), F(b)], [F(c), F(d)]]
    if det(S) == 0:
        return
    Sinv = solve(S, eye(2))
    Q = mm(mm(S, [[F(-k, 4), F(0)], [F(0), F(1, 2)]]), Sinv)
    assert not norm2_lt1(sub(eye(2), Q))


def test_mixer_r2_witness():
    """r = 2 with both alpha < 1/2 can still give a non-contractive I - Q."""
    Q = p3.mixer([F(7, 16), F(7, 16)], [[F(1), F(0)], [F(1), F(1)]])
    assert np.linalg.norm(np.eye(2) - np.array(Q, dtype=float), 2) > 1
    assert not norm2_lt1(sub(eye(2), Q))


def test_gram_normalization_statistical():
    """Proposition G.2's scaling: (1/N) |A y|^2 has mean 1 (= delta_{II}); Monte Carlo mean within 0.1 (its standard
    error here is ~0.02)."""
    rng = np.random.default_rng(0)
    N, r = 256, 16
    vals = []
    for _ in range(200):
        W, M = rng.standard_normal((N, r)), rng.standard_normal((N, r))
        y = rng.standard_normal(N)
        v = W @ (M.T @ y) / math.sqrt(N * r)
        vals.append(v @ v / N)
    assert abs(np.mean(vals) - 1) < 0.1


def test_theorem_2_2_proof_erratum_instance_numpy():
    """003:theorem-2.2-proof-eigenvalues, independent float check (numpy eigenvalues; tolerance 1e-12 is far below
    the imaginary parts +-1/4 and the margins checked): ||J|| < 1, I - J has non-real eigenvalues, and the
    symmetric part of (I - J)^{-1} J J^T is PSD for T = 1..3."""
    for T in (1, 2, 3):
        J = np.array([[float(x) for x in r] for r in p3.lipschitz_operator(p3.T22_LAMS, p3.T22_P, T)])
        n = len(J)
        assert np.linalg.norm(J, 2) < 1
        ev = np.linalg.eigvals(np.eye(n) - J)
        assert np.all(np.abs(ev.imag) > 0.2)                   # 1 +- i/4 (block triangular: the same for all T)
        S = np.linalg.solve(np.eye(n) - J, J @ J.T)
        assert np.linalg.eigvalsh((S + S.T) / 2).min() > -1e-12


def test_neumann_repair_checks_the_whole_sequence_too():
    """003:theorem-2.1-proof-neumann checks both repaired bounds: per step (tight: the kernel's l2 norm) and for the
    whole sequence (Young: the kernel's l1 norm 1 - lambda^T). Lambda = 1/2, P = 7/8, T = 3: ||L||^2 is ~0.703 of the
    whole-sequence bound (numpy, float64, 1e-9 far below the margins 0.05 used here), so the whole-sequence
    condition fails at 0.65 of its bound and holds at 0.75, while the per-step one holds throughout."""
    import numpy as np
    from fractions import Fraction as F
    from lrnnkit.theorems.paper_003.proof_errata import repaired_bounds_hold
    lams, P, T = [F(1, 2)], [[F(7, 8)]], 3
    a = [0.5 ** s * 0.5 for s in range(T)]
    K = np.array([[a[t - u] if u <= t else 0 for u in range(T)] for t in range(T)])
    assert abs(np.linalg.norm(K, 2) ** 2 / (1 - 0.5 ** T) ** 2 - 0.7027) < 1e-3
    assert repaired_bounds_hold(lams, P, T) == (True, True)
    assert repaired_bounds_hold(lams, P, T, whole_scale=F(65, 100)) == (True, False)
    assert repaired_bounds_hold(lams, P, T, whole_scale=F(3, 4)) == (True, True)
    assert repaired_bounds_hold(lams, P, T, per_step_scale=F(99, 100))[0] is False


def test_table_1_baselines_says_where_000_is_ambiguous():
    """000 App. E.1.1's 'increase the number of layers to 3 ... for Transformer, Mamba, and DeltaNet' admits two
    readings: the Transformer, Mamba and DeltaNet rows of 003 Table 1 are 3-layer models under both (their 2L labels
    contradicted), the mLSTM and sLSTM rows 2 or 3 (not contradicted)."""
    from lrnnkit.theorems import get, run_check
    r = run_check("003:table-1.baselines")
    assert r.counterexample["labels contradicted"] == ["2L Transformer", "2L Mamba", "2L DeltaNet"]
    assert "ambiguous" in get("003:table-1.baselines").evidence and "mLSTM" in r.evidence
