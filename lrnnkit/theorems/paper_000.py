"""Paper 000 (Grazzi et al., "Unlocking State-Tracking in Linear RNNs Through Negative Eigenvalues"): every formal
statement as an executable check.

Conventions of the paper used throughout (000, Section 3.1 and eq. (1), (5)):

* an LRNN layer is ``H_i = A(x_i) H_{i-1} + B(x_i)``, ``y_i = dec(H_i, x_i)``;
* a generalized Householder (GH) matrix is ``C = I - beta v v^T`` with ``||v|| = 1``; its one non-trivial eigenvalue
  is ``1 - beta``; ``M_k^n(Omega)`` (eq. 5) is the set of products of ``k`` GH matrices whose non-trivial eigenvalue
  ``1 - beta_i`` lies in ``Omega``;
* finite precision for the impossibility theorems (Appendix A.3 and B.1): the state after ``k`` steps is
  ``cast(sum_i cast(prod A ... B) + cast(prod A ... H_0))`` -- every product of transition matrices is computed
  exactly, each term is cast, the exact sum of the cast terms is cast once more. ``cast`` maps reals to a finite set
  D (applied separately to real and imaginary parts).

Every check below is independent of lrnnkit's constructions (exact rationals, ``lrnnkit.exact`` cyclotomic numbers,
sympy for characteristic polynomials, hypothesis for the counterexample searches); tests in
``proofs_tests/test_theorems_A*.py`` cross-check the pieces against the library modules (precision, constructions).

The exact tuple-matrix helpers and the hypothesis search helpers are shared with the other papers (``_exact.py``).
"""
from __future__ import annotations

import functools
import itertools
import math
from fractions import Fraction as F
from typing import Sequence

from ..exact import cos2pi, sin2pi
from ._exact import _fac_json, _mat_json, _st, basis_vector, dot, eye, gh, gh_product, householder, is_psd, madd, mm
from ._exact import det, mv, prod, search, st_fraction, st_gh_product, st_unit, tr
from .registry import CheckResult, statement

PAPER = "000"

# ----------------------------------------------------------------------------------------------------------------
# exact spectra (the tuple-matrix helpers are in _exact.py)


def charpoly(M) -> list:
    """Coefficients (highest degree first, monic) of det(x I - M) for a rational matrix (sympy, exact)."""
    import sympy
    S = sympy.Matrix([[sympy.Rational(x.numerator, x.denominator) for x in r] for r in M])
    return [F(int(sympy.fraction(c)[0]), int(sympy.fraction(c)[1])) for c in S.charpoly().all_coeffs()]


def poly_div_linear(p: list, r) -> tuple:
    """Synthetic division of p (highest first) by (x - r): quotient, remainder."""
    q, acc = [], F(0)
    for c in p:
        acc = acc * r + c
        q.append(acc)
    return q[:-1], q[-1]


def schur_cohn_inside(p: list) -> bool:
    """True iff every root of the real polynomial p (highest degree first) lies in the OPEN unit disk.

    Schur-Cohn: with ``p(z) = sum a_k z^k`` of degree d and its reversal ``p#(z) = z^d p(1/z)``, all roots are
    inside iff ``|a_0| < |a_d|`` and all roots of ``(a_d p(z) - a_0 p#(z)) / z`` (degree d - 1) are inside
    (Rouche on |z| = 1). Exact in rational arithmetic."""
    p = list(p)
    while len(p) > 1:
        ad, a0 = p[0], p[-1]
        if abs(a0) >= abs(ad):
            return False
        rev = p[::-1]
        q = [ad * x - a0 * y for x, y in zip(p, rev)]
        p = q[:-1]  # constant term is ad*a0 - a0*ad = 0: divide by z
    return True


def all_roots_real(p: list) -> bool:
    """True iff every root of the rational polynomial p (highest first) is real (Sturm counting on the square-free
    factors of sympy's sqf_list, so multiplicities count)."""
    import sympy
    x = sympy.Symbol("x")
    P = sympy.Poly([sympy.Rational(c.numerator, c.denominator) for c in p], x)
    _, facs = sympy.sqf_list(P)
    return sum(f.count_roots() * e for f, e in facs) == P.degree()


def spectrum_13a_ok(M) -> bool:
    """000 Prop. 1.3 first part: every eigenvalue of M is 1 or has modulus < 1 (exact)."""
    p = charpoly(M)
    while True:
        q, rem = poly_div_linear(p, F(1))
        if rem != 0 or len(p) == 1:
            break
        p = q
    return schur_cohn_inside(p)


# ----------------------------------------------------------------------------------------------------------------
# Proposition 1 (Section 4.3, proof in Appendix C.1)

_P1 = ("000, Proposition 1 (Expressivity of products of GH matrices), eq. (5): "
       "M_k^n(Omega) = {C_1 ... C_k : C_i = I - beta_i v_i v_i^T, 1 - beta_i in Omega, ||v_i|| = 1}.")


@statement(
    id="000:proposition-1.1", paper=PAPER, kind="proposition",
    statement="For any N in M_k^n([-1, 1]), ||N|| <= 1.",
    hypotheses="N = C_1...C_k, C_i = I - beta_i v_i v_i^T, beta_i in [0, 2], ||v_i|| = 1; any n, k.",
    conclusion="The spectral norm of N is at most 1.",
    verdict="holds",
    evidence="Exact search (hypothesis, derandomized, shrinking) over products of k <= 4 GH factors in R^2, R^3 with "
             "rational beta in [0, 2] (both ends included) and rational unit vectors: ||N|| <= 1 decided exactly as "
             "'I - N^T N is positive semidefinite'. No counterexample (quick: 80 products per n; deep: 600).",
    notes=_P1 + " The proof (sub-multiplicativity, ||C_i|| <= 1) is correct.")
def check_prop_1_1(profile: str = "quick") -> CheckResult:
    N = 80 if profile == "quick" else 600
    found = None
    for n in (2, 3):
        def bad(facs, n=n):
            M = gh_product(facs, n)
            return not is_psd(madd(eye(n), mm(tr(M), M), -1))
        found = search(st_gh_product(n, 4, 0, 2), bad, N)
        if found is not None:
            return CheckResult("falsified", "found N with ||N|| > 1", counterexample=_fac_json(found))
    return CheckResult("holds", f"no product of <= 4 GH factors (beta in [0,2]) in R^2, R^3 with ||N|| > 1 "
                                f"among {N} searched per dimension (exact PSD test)")


def householder_factors(O, exact: bool = True) -> list:
    """Write an orthogonal matrix as a product of at most n reflections (Cartan-Dieudonne, constructive): returns
    the (unnormalized) reflection vectors w_1..w_k with ``O = H(w_1) ... H(w_k)``, ``H(w) = I - 2 w w^T / w^T w``.

    Step i reflects the current matrix's i-th column onto e_i (both unit vectors); earlier columns are already
    e_1..e_{i-1} and are orthogonal to w, so they are kept."""
    n = len(O)
    W = [list(r) for r in O]
    ws = []
    for i in range(n):
        col = [W[r][i] for r in range(n)]
        if exact:
            w = [c - F(int(r == i)) for r, c in enumerate(col)]
            if all(x == 0 for x in w):
                continue
        else:
            # float64: col - e_i cancels when col ~ e_i; use col_i - 1 = -|rest|^2 / (1 + col_i) (col is a unit
            # vector), and skip when the rest is at round-off level (a reflection through a round-off direction
            # would be a full reflection).
            rest2 = sum(c * c for r, c in enumerate(col) if r != i)
            if col[i] > 0 and rest2 < 1e-24:
                continue
            w = [c for c in col]
            w[i] = -rest2 / (1 + col[i]) if col[i] > 0 else col[i] - 1
        Hm = gh(2, w) if exact else _gh_float(2.0, w)
        W = [list(r) for r in mm(Hm, W)] if exact else _mmf(Hm, W)
        ws.append(tuple(w))
    return ws


def _gh_float(beta, w):
    import numpy as np
    w = np.asarray(w, dtype=float)
    return np.eye(len(w)) - beta * np.outer(w, w) / (w @ w)


def _mmf(A, B):
    import numpy as np
    return (np.asarray(A) @ np.asarray(B)).tolist()


def cayley_orthogonal(S_entries: Sequence, n: int, flip: bool = False) -> tuple:
    """A rational orthogonal matrix: the Cayley transform (I - K)(I + K)^{-1} of the skew matrix with the given
    upper-triangular entries (optionally times diag(-1, 1, ...) to reach det = -1)."""
    import sympy
    K = sympy.zeros(n, n)
    it = iter(S_entries)
    for i in range(n):
        for j in range(i + 1, n):
            v = sympy.Rational(str(next(it)))
            K[i, j], K[j, i] = v, -v
    Q = (sympy.eye(n) - K) * (sympy.eye(n) + K).inv()
    if flip:
        Q = sympy.diag(*([-1] + [1] * (n - 1))) * Q
    return tuple(tuple(F(str(Q[i, j])) for j in range(n)) for i in range(n))


@statement(
    id="000:proposition-1.2a", paper=PAPER, kind="proposition",
    statement="For any M in R^{n x n} with ||M|| <= 1, M in M_{3n}^n([-1, 1]).",
    hypotheses="M real n x n with spectral norm at most 1.",
    conclusion="M is a product of 3n GH matrices with eigenvalues in [-1, 1].",
    verdict="holds",
    evidence="Constructive check of the proof (M = U S V^T; U, V^T products of <= n reflections by Householder "
             "reduction; S = prod_i (I - (1 - sigma_i) e_i e_i^T); padding with identities, beta = 0): exact in "
             "rational arithmetic for M = U S V^T with rational orthogonal U, V (Cayley transforms, det +-1) and "
             "rational sigma_i in [0, 1] (n = 2, 3), and in float64 via numpy's SVD for random M scaled to norm <= 1 "
             "(n = 1..5, including rank-deficient and norm exactly 1; reconstruction error <= 1e-9).",
    notes=_P1)
def check_prop_1_2a(profile: str = "quick") -> CheckResult:
    import numpy as np
    st = _st()
    N = 40 if profile == "quick" else 400
    for n in (2, 3):
        m = n * (n - 1) // 2
        strat = st.tuples(st.lists(st.fractions(-2, 2, max_denominator=4), min_size=m, max_size=m),
                          st.lists(st.fractions(-2, 2, max_denominator=4), min_size=m, max_size=m),
                          st.lists(st_fraction(0, 1, 6), min_size=n, max_size=n), st.booleans(), st.booleans())

        def bad(args, n=n):
            a, b, sig, f1, f2 = args
            U, V = cayley_orthogonal(a, n, f1), cayley_orthogonal(b, n, f2)
            S = tuple(tuple(sig[i] if i == j else F(0) for j in range(n)) for i in range(n))
            M = mm(mm(U, S), tr(V))
            facs = [(F(2), w) for w in householder_factors(U)]
            facs += [(1 - sig[i], basis_vector(i, n)) for i in range(n)]
            facs += [(F(2), w) for w in householder_factors(tr(V))]
            return len(facs) > 3 * n or gh_product(facs, n) != M or any(not 0 <= b_ <= 2 for b_, _ in facs)
        found = search(strat, bad, N)
        if found is not None:
            return CheckResult("falsified", "exact decomposition failed", counterexample=repr(found))
    rng = np.random.default_rng(0)
    for trial in range(N * 2):
        n = 1 + trial % 5
        M = rng.normal(size=(n, n))
        if trial % 7 == 3 and n > 1:
            M[:, 0] = M[:, 1]  # rank deficient
        M /= max(np.linalg.norm(M, 2), 1.0) if trial % 3 else np.linalg.norm(M, 2)  # some with norm exactly 1
        U, s, Vt = np.linalg.svd(M)
        facs = [(2.0, w) for w in householder_factors(U.tolist(), exact=False)]
        facs += [(1 - min(si, 1.0), np.eye(n)[i]) for i, si in enumerate(s)]
        facs += [(2.0, w) for w in householder_factors(Vt.tolist(), exact=False)]
        P = np.eye(n)
        for b_, w in facs:
            P = P @ _gh_float(b_, w)
        # tolerance: SVD backward error is ~1e-15 * n; 1e-9 leaves a wide margin, a wrong factorization is O(1) off
        if len(facs) > 3 * n or np.abs(P - M).max() > 1e-9:
            return CheckResult("falsified", "float decomposition failed", counterexample=M.tolist())
    return CheckResult("holds", f"decomposition into <= 3n GH factors verified exactly ({N} rational cases per "
                                f"n = 2, 3) and in float64 ({2 * N} random cases, n = 1..5)")


@statement(
    id="000:proposition-1.2b", paper=PAPER, kind="proposition",
    statement="If M is orthogonal then M in M_n^n({-1, 1}).",
    hypotheses="M real orthogonal n x n.",
    conclusion="M is a product of n GH matrices each being a reflection (beta = 2) or the identity (beta = 0).",
    verdict="holds",
    evidence="Exact: rational orthogonal matrices (Cayley transforms, both determinants, n = 2..4) are reduced by at "
             "most n reflections with rational GH matrices; the product is compared entrywise with M; every "
             "signed permutation matrix of size <= 3 as well.",
    notes=_P1 + " (Cartan-Dieudonne for R^n.)")
def check_prop_1_2b(profile: str = "quick") -> CheckResult:
    st = _st()
    N = 40 if profile == "quick" else 400
    for n in (2, 3, 4):
        m = n * (n - 1) // 2
        strat = st.tuples(st.lists(st.fractions(-3, 3, max_denominator=5), min_size=m, max_size=m), st.booleans())

        def bad(args, n=n):
            O = cayley_orthogonal(args[0], n, args[1])
            ws = householder_factors(O)
            return len(ws) > n or prod([gh(2, w) for w in ws], n) != O
        found = search(strat, bad, N if n < 4 else N // 4)
        if found is not None:
            return CheckResult("falsified", "reduction failed", counterexample=repr(found))
    for n in (1, 2, 3):
        for perm in itertools.permutations(range(n)):
            for signs in itertools.product((1, -1), repeat=n):
                O = tuple(tuple(F(signs[i]) if perm[i] == j else F(0) for j in range(n)) for i in range(n))
                ws = householder_factors(O)
                if len(ws) > n or prod([gh(2, w) for w in ws], n) != O:
                    return CheckResult("falsified", "signed permutation", counterexample=_mat_json(O))
    return CheckResult("holds", "every tested orthogonal matrix is a product of <= n reflections (exact)")


def perm_matrix(p: Sequence[int]) -> tuple:
    """Column convention of DESIGN.md: ``P[p[q], q] = 1`` (state q goes to p[q])."""
    n = len(p)
    return tuple(tuple(F(int(p[j] == i)) for j in range(n)) for i in range(n))


def swap_vector(i: int, j: int, n: int) -> tuple:
    """v_ij of the proof of Proposition 1 (000, App. C.1) without the 1/sqrt(2): e_i - e_j."""
    return tuple(F(1) if r == i else F(-1) if r == j else F(0) for r in range(n))


def transpositions(p: Sequence[int]) -> list:
    """The permutation as a product of n - (number of cycles) transpositions, in matrix order: with
    ``P = S_1 S_2 ... S_k`` (S_l the swap matrices)."""
    n = len(p)
    seen, out = [False] * n, []
    for s in range(n):
        if seen[s]:
            continue
        cyc, q = [], s
        while not seen[q]:
            seen[q] = True
            cyc.append(q)
            q = p[q]
        # the cycle c0 -> c1 -> ... -> c_{L-1} -> c0 equals (c0 c1)(c1 c2)...(c_{L-2} c_{L-1}) applied right to left
        for a in range(len(cyc) - 1):
            out.append((cyc[a], cyc[a + 1]))
    return out


@statement(
    id="000:proposition-1.2c", paper=PAPER, kind="proposition",
    statement="M in M_{n-1}^n({-1, 1}) when M is a permutation matrix.",
    hypotheses="M an n x n permutation matrix, n >= 2 (for n = 1, M = I in M_1^1({1}) as the proof remarks).",
    conclusion="M is a product of n - 1 GH matrices, each a reflection (swap, v = (e_i - e_j)/sqrt 2) or I.",
    verdict="holds",
    evidence="Exhaustive and exact over all permutation matrices of size 2..5 (quick) / 2..6 (deep): the product of "
             "the n - c(P) <= n - 1 swap reflections I - (e_i - e_j)(e_i - e_j)^T equals P entrywise.",
    notes=_P1)
def check_prop_1_2c(profile: str = "quick") -> CheckResult:
    nmax = 5 if profile == "quick" else 6
    count = 0
    for n in range(2, nmax + 1):
        I = eye(n)
        for p in itertools.permutations(range(n)):
            sw = transpositions(p)
            P = prod([gh(2, swap_vector(i, j, n)) for i, j in sw], n)
            count += 1
            if len(sw) > n - 1 or P != perm_matrix(p):
                return CheckResult("falsified", "swap product mismatch", counterexample=list(p))
        del I
    return CheckResult("holds", f"all {count} permutation matrices of size 2..{nmax} are products of <= n-1 swap "
                                f"reflections (exact)")


@statement(
    id="000:proposition-1.2c-proof-swaps", paper=PAPER, kind="construction",
    statement="(Proof of Prop. 1, App. C.1, second item) If P is a permutation matrix different from the identity, "
              "there exist k <= n - 1 and indices i_1..i_k, j_1..j_k with i_l != j_l such that "
              "P = prod_{l=1}^{k-1} P_{i_l j_l}, P_ij = I - 2 v_ij v_ij^T, v_ij = (e_i - e_j)/sqrt(2); "
              "'P_ij in M_k^n({-1})'.",
    hypotheses="P a non-identity n x n permutation matrix.",
    conclusion="P equals the product of the first k - 1 of the k swaps.",
    verdict="holds-as-corrected",
    evidence="Exhaustive over n = 2..5: the printed product stops at k - 1 and so omits one swap; it fails for every "
             "transposition (k = 1: empty product = I). Corrected: P = prod_{l=1}^{k} P_{i_l j_l} (and P_ij in "
             "M_1^n({-1})), verified exactly for every permutation of size 2..5.",
    counterexample={"n": 2, "P": [[0, 1], [1, 0]], "k": 1, "printed_product": "empty = I != P"},
    corrected="P = prod_{l=1}^{k} P_{i_l j_l} with k = n - (number of cycles of P) <= n - 1; each P_ij in M_1^n({-1}).",
    notes="Off-by-one in the upper index of the product (and M_k^n for a single swap, which should read M_1^n).")
def check_prop_1_2c_proof(profile: str = "quick") -> CheckResult:
    printed_fails = None
    for n in range(2, 6):
        for p in itertools.permutations(range(n)):
            if list(p) == list(range(n)):
                continue
            sw = transpositions(p)
            full = prod([gh(2, swap_vector(i, j, n)) for i, j in sw], n)
            printed = prod([gh(2, swap_vector(i, j, n)) for i, j in sw[: len(sw) - 1]], n)
            if full != perm_matrix(p):
                return CheckResult("falsified", "even the corrected product fails", counterexample=list(p))
            if printed != perm_matrix(p) and printed_fails is None:
                printed_fails = {"n": n, "P": _mat_json(perm_matrix(p)), "k": len(sw),
                                 "printed_product": _mat_json(printed)}
    if printed_fails is None:
        return CheckResult("holds", "printed product matched every permutation")
    return CheckResult("holds-as-corrected", "printed product (upper index k - 1) fails; with upper index k it "
                       "equals P for every permutation of size 2..5", counterexample=printed_fails,
                       corrected="P = prod_{l=1}^{k} P_{i_l j_l}")


@statement(
    id="000:proposition-1.3a", paper=PAPER, kind="proposition",
    statement="Any eigenvalue lambda of N in M_k^n((-1, 1]) is either 1 or satisfies |lambda| < 1.",
    hypotheses="N = C_1...C_k with beta_i in [0, 2) (eigenvalue 1 - beta_i in (-1, 1]), ||v_i|| = 1.",
    conclusion="Every eigenvalue is 1 or lies in the open unit disk.",
    verdict="holds",
    evidence="Exact search (hypothesis) over products of k <= 4 GH factors in R^2, R^3 with rational beta in [0, 2) "
             "(including values close to 2) and rational unit vectors: the characteristic polynomial (sympy, exact) "
             "with all factors (x - 1) removed passes the exact Schur-Cohn test (all roots in the open unit disk). "
             "Control: with beta = 2 allowed the same search finds the reflection (eigenvalue -1) at once.",
    notes=_P1 + " The proof's aside 'min_{x in [0,2]} x(2 - x) = 1 and is only reached at x = 0 and x = 2' should "
                "read min = 0 (the bound used, beta(2 - beta) > 0 on (0, 2), is right).")
def check_prop_1_3a(profile: str = "quick") -> CheckResult:
    N = 60 if profile == "quick" else 600
    for n in (2, 3):
        found = search(st_gh_product(n, 4, 0, 2, hi_open=True), lambda f, n=n: not spectrum_13a_ok(gh_product(f, n)),
                       N)
        if found is not None:
            return CheckResult("falsified", "eigenvalue on or outside the unit circle (not 1)",
                               counterexample=_fac_json(found))
    control = search(st_gh_product(2, 2, 0, 2), lambda f: not spectrum_13a_ok(gh_product(f, 2)), 200)
    if control is None:
        return CheckResult("open", "the control search (beta = 2 allowed) found no violation: the search is too weak")
    return CheckResult("holds", f"no violation among {N} products per n in {{2, 3}}; control with beta = 2 "
                                f"found {_fac_json(control)}")


P13B_CE = [(F(2, 3), (F(1), F(0))), (F(2, 3), (F(3, 5), F(4, 5))), (F(2, 3), (F(-3, 5), F(4, 5)))]


@statement(
    id="000:proposition-1.3b", paper=PAPER, kind="proposition",
    statement="If in addition N in M_k^n([0, 1]), then lambda in R (every eigenvalue of a product of GH matrices "
              "with eigenvalues in [0, 1] is real). Section 4.3: 'if every GH matrix in the product has only "
              "positive eigenvalues, matrices with complex eigenvalues cannot be represented.'",
    hypotheses="N = C_1...C_k, beta_i in [0, 1], ||v_i|| = 1, any k.",
    conclusion="All eigenvalues of N are real.",
    verdict="holds-as-corrected",
    evidence="Falsified for k = 3, n = 2: beta_1 = beta_2 = beta_3 = 2/3, v_1 = (1, 0), v_2 = (3/5, 4/5), "
             "v_3 = (-3/5, 4/5) give N = [[99/625, 112/5625], [-112/1875, 1273/5625]] with tr(N)^2 - 4 det(N) = "
             "-4604/31640625 < 0: two non-real eigenvalues (modulus sqrt(det N) < 1). The proof divides by "
             "v^T C_k v for a complex eigenvector v, which need not be real. Corrected statement (k <= 2) holds: "
             "exact search over products of <= 2 factors (n = 2, 3) finds no non-real eigenvalue (Sturm count).",
    counterexample={"n": 2, "k": 3, "factors": _fac_json(P13B_CE),
                    "N": [["99/625", "112/5625"], ["-112/1875", "1273/5625"]],
                    "discriminant": "-4604/31640625"},
    corrected="If N in M_k^n([0, 1]) with k <= 2, every eigenvalue of N is real (and in [0, 1]: N = C_1 C_2 is "
              "similar to C_1^{1/2} C_2 C_1^{1/2}, which is symmetric PSD). For k >= 3 only the first part "
              "(lambda = 1 or |lambda| < 1) survives.",
    notes=_P1 + " Consequence for the paper: the remark after Prop. 1 that an LRNN with A: R^l -> M_k^n([0,1]) cannot "
                "count modulo m still follows from Prop. 1.3a (all eigenvalues 1 or |lambda| < 1) together with "
                "Theorem 2 as printed, not from the reality of the spectrum.")
def check_prop_1_3b(profile: str = "quick") -> CheckResult:
    M = gh_product(P13B_CE, 2)
    disc = (M[0][0] + M[1][1]) ** 2 - 4 * (M[0][0] * M[1][1] - M[0][1] * M[1][0])
    printed_false = disc < 0 and all(0 <= b <= 1 and dot(v, v) == 1 for b, v in P13B_CE)
    N = 80 if profile == "quick" else 600
    for n in (2, 3):
        found = search(_st().lists(_st().tuples(st_fraction(0, 1), st_unit(n)), min_size=1, max_size=2),
                       lambda f, n=n: not all_roots_real(charpoly(gh_product(f, n))), N)
        if found is not None:
            return CheckResult("falsified", "the corrected statement (k <= 2) fails too",
                               counterexample=_fac_json(found))
    if not printed_false:
        return CheckResult("holds", "recorded counterexample does not verify")
    return CheckResult("holds-as-corrected", f"recorded k = 3 counterexample verified exactly (discriminant {disc}); "
                       f"corrected k <= 2 statement: no non-real eigenvalue among {N} products per n in {{2, 3}}",
                       counterexample={"factors": _fac_json(P13B_CE), "N": _mat_json(M), "discriminant": str(disc)},
                       corrected="k <= 2")


@statement(
    id="000:section-4.3-multi-token", paper=PAPER, kind="claim",
    statement="(Section 4.3, after Theorem 3) If each transition uses k letters and B = 0, A: R^l -> M_1^n([-1, 1]), "
              "the layer can model permutations that change up to k + 1 elements since H_t = C(x_t, ..., x_{t-k}) "
              "H_{t-k}, C(x_t, ..., x_{t-k}) := A(x_t) A(x_{t-1}) ... A(x_{t-k}) in M_k^n([-1, 1]).",
    hypotheses="A(x) single GH matrices with eigenvalues in [-1, 1].",
    conclusion="The product of the k + 1 matrices A(x_t)...A(x_{t-k}) lies in M_k^n and maps H_{t-k} to H_t.",
    verdict="holds-as-corrected",
    evidence="Off by one: A(x_t)...A(x_{t-k}) has k + 1 factors, and H_t = C H_{t-k-1}. Counterexample for k = 1, "
             "n = 2: A(x_t) = I - 2 e_2 e_2^T = diag(1, -1), A(x_{t-1}) = swap = I - (e_1 - e_2)(e_1 - e_2)^T give "
             "C = [[0, 1], [-1, 0]], not symmetric, hence not in M_1^2 (every single GH matrix is symmetric). "
             "Corrected: with k letters per transition, C(x_t, ..., x_{t-k+1}) = A(x_t)...A(x_{t-k+1}) in "
             "M_k^n([-1, 1]), H_t = C H_{t-k}, and such products realise every permutation moving <= k + 1 points "
             "(verified exhaustively for n <= 5: n - c(P) <= k swaps).",
    counterexample={"k": 1, "A(x_t)": [[1, 0], [0, -1]], "A(x_{t-1})": [[0, 1], [1, 0]], "C": [[0, 1], [-1, 0]],
                    "why": "C is not symmetric, every element of M_1^2 is"},
    corrected="With k letters per transition: H_t = C(x_t, ..., x_{t-k+1}) H_{t-k}, C = A(x_t)...A(x_{t-k+1}) in "
              "M_k^n([-1, 1]); permutations moving up to k + 1 elements are products of <= k swaps.")
def check_multi_token(profile: str = "quick") -> CheckResult:
    A1 = gh(2, (F(0), F(1)))
    A0 = gh(2, swap_vector(0, 1, 2))
    C = mm(A1, A0)
    if C == tr(C):
        return CheckResult("holds", "product turned out symmetric")
    for n in range(2, 6):
        for p in itertools.permutations(range(n)):
            moved = sum(1 for i in range(n) if p[i] != i)
            if moved and len(transpositions(p)) > max(moved - 1, 0):
                return CheckResult("falsified", "a permutation moving k + 1 points needs more than k swaps",
                                   counterexample=list(p))
    return CheckResult("holds-as-corrected", f"C = {_mat_json(C)} is not symmetric, so not in M_1^2; corrected "
                       "counting verified for all permutations of size <= 5",
                       counterexample={"C": _mat_json(C)}, corrected="k factors for k letters; H_t = C H_{t-k}")


# ----------------------------------------------------------------------------------------------------------------
# Theorems 1 and 2: the paper's own finite-precision model (App. A.3, B.1)


class BinaryFormat:
    """A binary floating-point format for the cast of App. A.3: significand precision ``p`` bits (hidden bit
    included), exponents ``emin..emax``, subnormals, saturation at the largest finite value (a monotone cast).
    Rounding is done exactly on Fractions (independent of numpy / ml_dtypes / lrnnkit.precision)."""

    def __init__(self, name: str, p: int, emin: int, emax: int):
        self.name, self.p, self.emin, self.emax = name, p, emin, emax
        self.max = (2 - F(1, 2 ** (p - 1))) * F(2) ** emax

    def cast(self, x, mode: str = "nearest-even") -> F:
        x = F(x)
        if x == 0:
            return F(0)
        a = abs(x)
        e = a.numerator.bit_length() - a.denominator.bit_length()
        if F(2) ** e > a:
            e -= 1
        e = max(e, self.emin)
        ulp = F(2) ** (e - self.p + 1)
        q = x / ulp
        if mode == "nearest-even":
            r = round(q)              # Fraction.__round__: ties to even
        elif mode == "toward-zero":
            r = math.trunc(q)
        elif mode == "toward-positive":
            r = math.ceil(q)
        elif mode == "toward-negative":
            r = math.floor(q)
        else:
            raise ValueError(mode)
        y = r * ulp
        return max(-self.max, min(self.max, y))


BF16 = BinaryFormat("bf16", 8, -126, 127)
TOY8 = BinaryFormat("fp8-like (p=4, emin=-6, emax=7, saturating)", 4, -6, 7)
MODES = ("nearest-even", "toward-zero", "toward-positive", "toward-negative")


def cast_model_states(A, B, H0, K: int, fmt: BinaryFormat, mode: str) -> list:
    """States of the paper's finite-precision model (000, App. B.1) on the input 1^k, k = 0..K:
    ``Hhat_k = cast(sum_{i<k} cast(A^i B) + cast(A^k H0))`` with every power computed exactly."""
    n = len(A)
    out = []
    acc = [F(0)] * n                  # exact sum of the cast terms cast(A^i B), i < k
    P_B, P_H = list(B), list(H0)      # A^k B and A^k H0, exact
    for _ in range(K + 1):
        cD = [fmt.cast(x, mode) for x in P_H]
        out.append(tuple(fmt.cast(a + d, mode) for a, d in zip(acc, cD)))
        acc = [a + fmt.cast(x, mode) for a, x in zip(acc, P_B)]
        P_B, P_H = list(mv(A, P_B)), list(mv(A, P_H))
    return out


def tail_monotone(states: list, period: int, start: int) -> bool:
    """Each coordinate of each residue class (mod period) of states[start:] is monotone."""
    for r in range(period):
        sub = [s for k, s in enumerate(states) if k >= start and k % period == r]
        for c in range(len(sub[0]) if sub else 0):
            col = [s[c] for s in sub]
            inc = all(a <= b for a, b in zip(col, col[1:]))
            dec = all(a >= b for a, b in zip(col, col[1:]))
            if not (inc or dec):
                return False
    return True


# Theorem 1 counterexample: A(1) = P diag(1, -1/2) P^{-1}, P = [[1, 1], [0, 1]]; A(0) = I; B = 0.
T1_A1 = ((F(1), F(-3, 2)), (F(0), F(-1, 2)))
T1_H0 = (1 + F(1, 2 ** 7), F(1, 2 ** 8))
# Theorem 2 counterexample: A(1) = P diag(1, C) P^{-1}, C = companion of x^2 + x/2 + 1/4 (roots e^{+-2 pi i/3}/2)
T2_A1 = ((F(1), F(-1), F(-1, 4)), (F(0), F(0), F(-1, 4)), (F(0), F(1), F(-1, 2)))
T2_H0 = (1 + F(1, 2 ** 7), F(1, 2 ** 8), F(1, 2 ** 8))


def _random_lrnn(draw_ints, eigs, n):
    """A = P J P^{-1} (J Jordan with the given eigenvalues), B, H0 from a stream of small integers."""
    import sympy
    lam = [eigs[draw_ints() % len(eigs)] for _ in range(n)]
    J = sympy.zeros(n, n)
    for i in range(n):
        J[i, i] = sympy.Rational(lam[i].numerator, lam[i].denominator)
        if i + 1 < n and lam[i] == lam[i + 1] and draw_ints() % 2:
            J[i, i + 1] = 1
    for _ in range(20):
        P = sympy.Matrix(n, n, lambda i, j: (draw_ints() % 5) - 2)
        if P.det() != 0:
            break
    else:
        P = sympy.eye(n)
    A = P * J * P.inv()
    A = tuple(tuple(F(str(A[i, j])) for j in range(n)) for i in range(n))
    grid = [F(0), F(1), F(-1), F(3, 2), F(1, 16), 1 + F(1, 16), F(17, 16), F(-5, 4), F(9, 8), F(1, 32)]
    B = tuple(grid[draw_ints() % len(grid)] * (draw_ints() % 3 - 1) for _ in range(n))
    H0 = tuple(grid[draw_ints() % len(grid)] for _ in range(n))
    return A, B, H0


def separates(states, m: int, start: int) -> bool:
    """True iff no cast state in ``states[start:]`` occurs both at a step k with m | k and at a step with m not
    dividing k: what a decoder needs to recognize (1^m)* (m = 2: parity) on those lengths."""
    seen: dict = {}
    for k in range(start, len(states)):
        r = seen.setdefault(states[k], k % m == 0)
        if r != (k % m == 0):
            return False
    return True


def _corrected_search(eigs, period: int, profile: str, m: int):
    """Search single-layer LRNNs with the given (real) spectrum set for a counterexample to the corrected
    statement: a cast-state sequence on 1^k that recognizes (1^m)*. Screening: the residue classes mod ``period``
    are not monotone on [K/2, K] (the proof's invariant is eventual monotonicity). A screened candidate counts
    only if, on a horizon 4x longer, it is still not monotone on the last half AND separates the residues mod m
    there. (The screen alone is not the statement: a deep run once flagged a growing state whose cast wobbles
    (-240, -224, -240 at k = 92..94) just before it saturates to a constant at k = 94: it recognizes nothing.)"""
    st = _st()
    K = 60 if profile == "quick" else 160
    N = 25 if profile == "quick" else 300

    def bad(args):
        seed_ints, n, mode = args
        import random
        rng = random.Random(repr(seed_ints))       # deterministic stream from the shrinkable integers
        A, B, H0 = _random_lrnn(lambda: rng.randrange(1000), eigs, n)
        states = cast_model_states(A, B, H0, K, TOY8, mode)
        if tail_monotone(states, period, K // 2):
            return False
        states = cast_model_states(A, B, H0, 4 * K, TOY8, mode)
        return not tail_monotone(states, period, 2 * K) and separates(states, m, 2 * K)
    strat = st.tuples(st.lists(st.integers(0, 1000), min_size=8, max_size=8), st.integers(1, 3 if profile == "deep"
                                                                                          else 2),
                      st.sampled_from(MODES))
    return search(strat, bad, N), K, N


@statement(
    id="000:theorem-1", paper=PAPER, kind="theorem",
    statement="Theorem 1 (Parity). A finite precision LRNN with finitely many layers as in (1) can solve parity for "
              "arbitrary input lengths, in particular, it can recognize the language (11)*, only if in at least one "
              "layer, there exist x such that A(x) has at least one eigenvalue lambda with |lambda| >= 1 and "
              "lambda not in {x in R : x >= 0}.",
    hypotheses="Finite precision as in App. A.3 / B.1: D finite, cast: R -> D (e.g. floating point numbers), products "
               "of transition matrices exact, each term cast, the sum cast; dec arbitrary.",
    conclusion="Some A(x) has an eigenvalue lambda with |lambda| >= 1 that is not a non-negative real.",
    verdict="holds-as-corrected",
    evidence="Falsified in the paper's own cast model with a standard format: bf16, round-to-nearest-even. One layer, "
              "n = 2, A(0) = I, B = 0, A(1) = [[1, -3/2], [0, -1/2]] (eigenvalues 1 and -1/2: no eigenvalue with "
              "|lambda| >= 1 outside [0, inf)), H0 = (1 + 2^-7, 2^-8) (both bf16 numbers). The exact product gives "
              "(A(1)^c H0)_1 = 1 + 2^-8 + 2^-8 (-1/2)^c, which for every c >= 1 lies strictly inside (1, 1 + 2^-7) "
              "on the side of the midpoint 1 + 2^-8 given by the parity of c; so cast(.)_1 = 1 + 2^-7 for even c and "
              "1 for odd c, for every c (c = number of ones). dec(H) = 1{H_1 > 1} recognizes (11)* and solves parity "
              "for all lengths. The proof's step 'cast of a convergent sequence is eventually constant' fails when "
              "the limit is a rounding boundary and is approached from both sides. Corrected: if cast is monotone "
              "(any rounding mode), the conclusion 'some eigenvalue is not a non-negative real' (the |lambda| >= 1 "
              "part dropped) is necessary: exact search over one-layer LRNNs with spectra in {0, 1/4, 1/2, 3/4, 1, "
              "5/4, 2} (Jordan blocks included), an 8-bit format and all four directed/nearest roundings found no "
              "cast-state sequence that recognizes (11)*: candidates that are not monotone on [K/2, K] are re-run "
              "4x longer and must stay non-monotone and separate even from odd k there (control: the counterexample "
              "above passes that test; a saturating transient found by a deep run does not, see the tests).",
    counterexample={"format": "bf16, round-to-nearest-even", "layers": 1, "A(0)": "I_2", "B": "0",
                    "A(1)": [["1", "-3/2"], ["0", "-1/2"]], "H0": ["1 + 2^-7", "2^-8"],
                    "state_after_c_ones": "cast(A(1)^c H0)_1 = 1 + 2^-7 if c even else 1",
                    "decoder": "1{H_1 > 1}"},
    corrected="In the cast model of App. B.1 with a monotone (non-decreasing) cast -- every rounding mode of every "
              "float format -- an LRNN can recognize (11)* only if in some layer some A(x) has an eigenvalue that is "
              "not a non-negative real number (eigenvalues of modulus < 1 count).",
    notes="The counterexample needs no exotic cast: round-to-nearest-even bf16, all weights bf16 numbers, the limit of "
          "the product sequence is the bf16 midpoint 1 + 2^-8. With a scalar state the trick stops at bf16 underflow, "
          "so n >= 2 is what makes it work for all lengths. The corrected statement's own proof: entries of A^k B, "
          "A^k H0 are exponential polynomials with non-negative bases, hence eventually monotone; a monotone cast "
          "of an eventually monotone sequence with finite range is eventually constant.")
def check_theorem_1(profile: str = "quick") -> CheckResult:
    K = 300 if profile == "quick" else 3000
    # exact spectrum of the counterexample: A(1) upper triangular, eigenvalues on the diagonal
    eig = [T1_A1[0][0], T1_A1[1][1]]
    hyp_violated = not any(abs(l) >= 1 and l < 0 for l in eig)   # real eigenvalues only here
    states = cast_model_states(T1_A1, (F(0), F(0)), T1_H0, K, BF16, "nearest-even")
    parity_ok = all((s[0] > 1) == (c % 2 == 0) for c, s in enumerate(states))
    # for all c beyond K: |2^-8 (1/2)^c| <= 2^-9 < 2^-8 = distance from the midpoint to the grid points
    all_c = F(1, 2 ** 8) * F(1, 2) < F(1, 2 ** 8)
    printed_false = hyp_violated and parity_ok and all_c
    found, K2, N = _corrected_search([F(x) for x in ("0", "1/4", "1/2", "3/4", "1", "5/4", "2")], 1, profile, 2)
    ctrl = cast_model_states(T1_A1, (F(0), F(0)), T1_H0, 4 * K2, BF16, "nearest-even")
    control = not tail_monotone(ctrl, 1, 2 * K2) and separates(ctrl, 2, 2 * K2)
    if found is not None:
        return CheckResult("falsified", "the corrected statement fails too", counterexample=repr(found))
    if not printed_false:
        return CheckResult("holds", "the recorded counterexample does not verify")
    if not control:
        return CheckResult("open", "the corrected-statement search cannot detect the known counterexample")
    return CheckResult("holds-as-corrected", f"bf16 counterexample verified exactly for c = 0..{K} (and all c by the "
                       f"bound); corrected statement: {N} one-layer LRNNs with non-negative spectra, {K2} steps "
                       "(candidates re-run 4x longer): none recognizes (11)*", counterexample={"A(1)": _mat_json(T1_A1),
                       "H0": [str(x) for x in T1_H0]}, corrected="eigenvalue not in [0, inf), monotone cast")


@statement(
    id="000:theorem-2", paper=PAPER, kind="theorem",
    statement="Theorem 2 (Modular Counting). A finite precision LRNN with L layers, each as in (1), can count modulo "
              "m, i.e. it can recognize the language (1^m)*, with m not a power of two, only if there exist "
              "i in {1, ..., L} and x_1, ..., x_{2^{i-1}} such that for the i-th layer the product "
              "A(x_1) A(x_2) ... A(x_{2^{i-1}}) has at least one eigenvalue lambda with |lambda| >= 1 and nonzero "
              "imaginary part.",
    hypotheses="Finite precision model of App. A.3 / B.1 (as for Theorem 1); m not a power of two.",
    conclusion="Some product of 2^{i-1} transition matrices of layer i has a non-real eigenvalue of modulus >= 1.",
    verdict="holds-as-corrected",
    evidence="Falsified for m = 3 with one layer (so i = 1 and the product is the single matrix A(1)): bf16, "
              "round-to-nearest-even, n = 3, B = 0, A(1) = [[1, -1, -1/4], [0, 0, -1/4], [0, 1, -1/2]] (eigenvalues "
              "1 and (1/2) e^{+-2 pi i/3}: the non-real ones have modulus 1/2 < 1), H0 = (1 + 2^-7, 2^-8, 2^-8). "
              "Exactly, (A(1)^k H0)_1 = 1 + 2^-8 + 2^-8 2^-k cos(2 pi k / 3) (= 1 + 2^-7 at k = 0), strictly inside "
              "(1, 1 + 2^-7) for k >= 1, above the midpoint iff 3 | k; so cast(.)_1 = 1 + 2^-7 iff 3 | k and "
              "dec(H) = 1{H_1 > 1} recognizes (111)* for every length. Corrected (monotone cast): counting modulo m "
              "(m not a power of two) needs some product of 2^{i-1} matrices of layer i with a NON-REAL eigenvalue "
              "(any modulus); exact search over one-layer LRNNs with real spectra (negative eigenvalues included) "
              "found no cast-state sequence that recognizes (111)*: candidates whose even and odd subsequences are "
              "not monotone on [K/2, K] are re-run 4x longer and must stay so and separate 3 | k from the other k "
              "there (control: the counterexample above passes that test).",
    counterexample={"format": "bf16, round-to-nearest-even", "m": 3, "layers": 1, "B": "0",
                    "A(1)": [["1", "-1", "-1/4"], ["0", "0", "-1/4"], ["0", "1", "-1/2"]],
                    "H0": ["1 + 2^-7", "2^-8", "2^-8"],
                    "state_after_k_ones": "cast(A(1)^k H0)_1 = 1 + 2^-7 if k % 3 == 0 else 1",
                    "decoder": "1{H_1 > 1}"},
    corrected="With a monotone cast: an LRNN with L layers can recognize (1^m)*, m not a power of two, only if for "
              "some i and x_1..x_{2^{i-1}} the product A(x_1)...A(x_{2^{i-1}}) of layer i has an eigenvalue with "
              "nonzero imaginary part.",
    notes="The extraction prints the index as 'x_{2^i-1}'; the proof (App. B.2: 'powers of the product of 2^{i-1} "
          "state-transition matrices') fixes it as 2^{i-1} (for i = 1 both readings give one matrix, which is all "
          "the counterexample needs). The proof also writes 'k mod d = 1' for 'k mod m = 1'.")
def check_theorem_2(profile: str = "quick") -> CheckResult:
    K = 300 if profile == "quick" else 3000
    p = charpoly(T2_A1)                       # (x - 1)(x^2 + x/2 + 1/4)
    q, rem = poly_div_linear(p, F(1))
    nonreal_small = rem == 0 and len(q) == 3 and q[1] ** 2 - 4 * q[0] * q[2] < 0 and q[2] / q[0] < 1
    states = cast_model_states(T2_A1, (F(0),) * 3, T2_H0, K, BF16, "nearest-even")
    count_ok = all((s[0] > 1) == (k % 3 == 0) for k, s in enumerate(states))
    # all k: |2^-8 2^-k cos(.)| <= 2^-9 < 2^-8 for k >= 1
    printed_false = nonreal_small and count_ok
    found, K2, N = _corrected_search([F(x) for x in ("0", "1/4", "1/2", "1", "2", "-1/4", "-1/2", "-1", "-2")], 2,
                                     profile, 3)
    ctrl = cast_model_states(T2_A1, (F(0),) * 3, T2_H0, 4 * K2, BF16, "nearest-even")
    control = not tail_monotone(ctrl, 2, 2 * K2) and separates(ctrl, 3, 2 * K2)
    if found is not None:
        return CheckResult("falsified", "the corrected statement fails too", counterexample=repr(found))
    if not printed_false:
        return CheckResult("holds", "the recorded counterexample does not verify")
    if not control:
        return CheckResult("open", "the corrected-statement search cannot detect the known counterexample")
    return CheckResult("holds-as-corrected", f"bf16 counterexample verified exactly for k = 0..{K}; corrected "
                       f"statement: {N} one-layer LRNNs with real spectra, {K2} steps "
                       "(candidates re-run 4x longer): none recognizes (111)*", counterexample={"A(1)": _mat_json(T2_A1)},
                       corrected="non-real eigenvalue (any modulus), monotone cast")


# ----------------------------------------------------------------------------------------------------------------
# Theorem 3 (one layer for group automata), Section 4.2 (rotations), Theorem 6 (reflections, two layers)


def compose(p, q) -> tuple:
    """First p, then q (transformations act on the right, DESIGN.md)."""
    return tuple(q[x] for x in p)


def closure(gens: list, ident) -> set:
    seen, todo = {ident}, [ident]
    while todo:
        g = todo.pop()
        for s in gens:
            h = compose(g, s)
            if h not in seen:
                seen.add(h)
                todo.append(h)
    return seen


def embeddings(gens: list, n: int) -> list:
    """All assignments of the generators to permutations of n points that extend to an injective homomorphism
    (closure of the graph of the assignment is the graph of a bijection)."""
    N = len(gens[0])
    size = len(closure(gens, tuple(range(N))))
    out = []
    for imgs in itertools.product(itertools.permutations(range(n)), repeat=len(gens)):
        # the graph as permutations of N + n points (second block shifted by N), so composition acts blockwise
        pairs = closure([g + tuple(N + v for v in im) for g, im in zip(gens, imgs)], tuple(range(N + n)))
        if len(pairs) == size and len({p[N:] for p in pairs}) == size:
            out.append(imgs)
    return out


def group_fsas(N: int, letters: int) -> list:
    """Transitive permutation automata on N states with the given number of letters (up to letter order)."""
    perms = list(itertools.permutations(range(N)))
    out = []
    for ls in itertools.combinations_with_replacement(perms, letters):
        reach = {0}
        todo = [0]
        while todo:
            q = todo.pop()
            for p in ls:
                if p[q] not in reach:
                    reach.add(p[q])
                    todo.append(p[q])
        if len(reach) == N:
            out.append(list(ls))
    return out


def implements(letter_mats: list, H0, letters: list, start: int = 0) -> bool:
    """Exact BFS over (model state, automaton state): the map H -> q is well defined on the reachable states, i.e.
    the layer implements the automaton (000, Section 3.2: g surjective with delta(g(H), w) = g(A(w) H))."""
    g = {H0: start}
    todo = [H0]
    while todo:
        H = todo.pop()
        q = g[H]
        for A, p in zip(letter_mats, letters):
            H2 = mv(A, H)
            q2 = p[q]
            if H2 in g:
                if g[H2] != q2:
                    return False
            else:
                g[H2] = q2
                todo.append(H2)
    return True


@statement(
    id="000:theorem-3", paper=PAPER, kind="theorem",
    statement="Theorem 3. Every FSA A = (Sigma, Q, q0, delta) whose transition monoid T(A) is a group, can be "
              "implemented by a finite precision LRNN with one layer and A: Sigma -> M_{k-1}^n({-1, 1}), where n is "
              "the smallest natural number such that T(A) is isomorphic to a subgroup of S_n, and k = max_w "
              "sum_q 1{delta(q, w) != q} is the maximum number of changed states after applying a single transition. "
              "Moreover, if T(A) is isomorphic to the cyclic group Z_m, then we can set A: Sigma -> M_2^n([-1, 1]) "
              "and if m = 2 (parity) we can set A: Sigma -> {-1, 1}.",
    hypotheses="Q reachable from q0 (the proof assumes it); T(A) a group.",
    conclusion="A one-layer LRNN with the stated transition sets implements A.",
    verdict="holds-as-corrected",
    evidence="Exhaustive and exact over all transitive permutation automata with 2..3 states and 1..2 letters, and "
             "4 states with 1 letter (quick; deep adds 4 states x 2 letters): minimal degree n by searching all "
             "injective homomorphisms into S_n; the proof's construction (permutation matrices of a minimal "
             "faithful representation, H0 = (1..n), written as <= k - 1 swap reflections) implements the automaton "
             "(exact BFS, g well defined); cyclic cases with 2 x 2 rotations (exact cyclotomic) and the m = 2 scalar "
             "case as well. As printed it fails at the boundary k = 0 (the one-state automaton, T(A) trivial): "
             "k - 1 = -1 and M_{-1}^n is empty/undefined. Corrected: A: Sigma -> M_{max(k-1, 1)}^n({-1, 1}).",
    counterexample={"automaton": "one state, one letter (identity)", "k": 0, "printed_set": "M_{-1}^1 (undefined)"},
    corrected="A: Sigma -> M_{max(k-1,1)}^n({-1, 1}) (identity letters use one GH factor with beta = 0); the rest as "
              "printed (for Z_m the 2 x 2 rotations lie in M_2^2({-1}), embedded block-diagonally in n x n).",
    notes="Only the boundary case fails; the substance (permutations of k points need k - 1 swaps) holds. The "
          "same boundary appears in App. C.4 ('P permuting k <= n elements is in M_{k-1}^n').")
def check_theorem_3(profile: str = "quick") -> CheckResult:
    cases = [(N, L) for N in (2, 3) for L in (1, 2)] + [(4, 1)]
    if profile == "deep":
        cases += [(4, 2), (5, 1)]
    count = 0
    for N, L in cases:
        for letters in group_fsas(N, L):
            count += 1
            k = max(sum(1 for q in range(N) if p[q] != q) for p in letters)
            G = closure(letters, tuple(range(N)))
            n, emb = N, [tuple(letters)]
            for m in range(1, N):
                e = embeddings(letters, m)
                if e:
                    n, emb = m, e
                    break
            best = min(emb, key=lambda imgs: max(sum(1 for i in range(n) if im[i] != i) for im in imgs))
            mats = []
            for im in best:
                sw = transpositions(im)
                if len(sw) > max(k - 1, 1):
                    return CheckResult("falsified", "a letter needs more than k - 1 swaps in every minimal "
                                       "faithful representation", counterexample={"letters": letters, "k": k})
                mats.append(prod([gh(2, swap_vector(i, j, n)) for i, j in sw], n) if sw else eye(n))
            H0 = tuple(F(i + 1) for i in range(n))
            if not implements(mats, H0, letters):
                return CheckResult("falsified", "construction does not implement", counterexample=letters)
            # cyclic: T(A) = Z_m acting regularly (transitive abelian): rotation by 2 pi j / m per letter
            m = len(G)
            gen = next((g for g in G if len(closure([g], tuple(range(N)))) == m), None)
            if gen is not None:
                powers, x = {}, tuple(range(N))
                for j in range(m):
                    powers[x] = j
                    x = compose(x, gen)
                rots = [((cos2pi(powers[p], m), -sin2pi(powers[p], m)), (sin2pi(powers[p], m), cos2pi(powers[p], m)))
                        for p in letters]
                if not implements(rots, (F(1), F(0)), letters):
                    return CheckResult("falsified", "rotation construction fails", counterexample=letters)
                if m == 2:
                    sc = [((F(-1) if any(p[q] != q for q in range(N)) else F(1),),) for p in letters]
                    if not implements(sc, (F(-1),), letters):
                        return CheckResult("falsified", "scalar parity construction fails", counterexample=letters)
    # the boundary case: one state, one letter -> k = 0, M_{k-1} = M_{-1}
    k0 = max(sum(1 for q in range(1) if p[q] != q) for p in [(0,)])
    if k0 - 1 >= 0:
        return CheckResult("holds", f"all {count} automata implemented; no boundary failure")
    return CheckResult("holds-as-corrected", f"{count} group automata implemented exactly with <= max(k - 1, 1) swap "
                       "reflections per letter (and rotations / scalars for cyclic groups); the printed bound "
                       "k - 1 = -1 at the trivial automaton is not a valid factor count",
                       counterexample={"automaton": "one state, one letter", "k": k0},
                       corrected="M_{max(k-1,1)}^n")


@functools.lru_cache(maxsize=4096)
def rot(k: int, m: int) -> tuple:
    """R(2 pi k / m) exactly (cached: the breadth-first searches reuse a few angles many times)."""
    c, s = cos2pi(k, m), sin2pi(k, m)
    return ((c, -s), (s, c))


@functools.lru_cache(maxsize=4096)
def refl(k: int, m: int) -> tuple:
    """H(2 pi k / m) = [[cos, sin], [sin, -cos]]: the reflection across the line at angle pi k / m (000, App. D)."""
    c, s = cos2pi(k, m), sin2pi(k, m)
    return ((c, s), (s, -c))


@statement(
    id="000:section-4.2-rotation", paper=PAPER, kind="claim",
    statement="(Section 4.2) For any m in N there exist unit vectors v_1, v_2 in R^2 with R(theta) = "
              "(I - 2 v_1 v_1^T)(I - 2 v_2 v_2^T), theta = 2 pi / m; with A(1) = R(theta), H0 = (1, 0)^T and "
              "dec(H, x) = argmax_i D_i^T H, D_i = R(i theta) H0, the one-layer LRNN outputs t mod m on 1^t.",
    hypotheses="m >= 1.",
    conclusion="Rotations are products of two reflections and count modulo m.",
    verdict="holds",
    evidence="Exact in cyclotomic arithmetic for m = 1..12 (quick) / 1..30 (deep): v_2 = e_2, v_1 = (-sin(theta/2), "
             "cos(theta/2)) give R(theta) entrywise; the states R(t theta) H0 are m distinct unit vectors, so the "
             "argmax decoder returns t mod m exactly (strict maximum D_i^T D_i = 1 > D_j^T D_i).",
    notes="000, Section 4.2.")
def check_rotation(profile: str = "quick") -> CheckResult:
    M = 12 if profile == "quick" else 30
    for m in range(1, M + 1):
        v1 = (-sin2pi(1, 2 * m), cos2pi(1, 2 * m))       # angle pi/m + pi/2
        H1 = householder(2, v1)
        H2 = ((F(1), F(0)), (F(0), F(-1)))
        if mm(H1, H2) != rot(1, m):
            return CheckResult("falsified", "R(2 pi/m) is not H1 H2", counterexample={"m": m})
        states = [mv(rot(t, m), (F(1), F(0))) for t in range(m)]
        if len(set(states)) != m or any(dot(s, s) != 1 for s in states):
            return CheckResult("falsified", "states not distinct unit vectors", counterexample={"m": m})
        if mv(rot(1, m), states[-1]) != states[0]:
            return CheckResult("falsified", "R^m != I", counterexample={"m": m})
    return CheckResult("holds", f"m = 1..{M}: R(2 pi/m) = H1 H2 exactly, distinct unit states, period m")


@statement(
    id="000:theorem-6", paper=PAPER, kind="theorem",
    statement="Theorem 6 (Modular addition with reflections). An LRNN with two layers in the form (1), where "
              "A: N -> {-1} for the first layer and A: R^2 -> M_1^2({-1}) for the second layer, can perform "
              "addition modulo m. In particular, the LRNN will have 2 scalar states in the first layer and 2m states, "
              "each being a vector in R^2, in the second layer. (Construction: h^(1)_t = -h^(1)_{t-1} + 1, "
              "y^(1)_t = (x_t, h_t); h^(2)_0 = (1,0), h^(2)_t = H(theta(y_1, y_2)) h^(2)_{t-1}, theta(i,1) = "
              "(1-2i) pi/m, theta(i,0) = (2i+1) pi/m, dec = argmax_i max(c_i^T h, d_i^T h), d_0 = (1,0), "
              "c_0 = H(theta(0,1)) d_0, d_i = R(2 i pi/m) d_0, c_i = R(-2 i pi/m) c_0.)",
    hypotheses="m >= 1; inputs x_i in {0..m-1}.",
    conclusion="The second layer outputs (x_1 + ... + x_t) mod m for every t.",
    verdict="holds",
    evidence="Exact (cyclotomic) breadth-first search over all reachable (layer-1 state, layer-2 state, sum mod m) "
             "for m = 1..8 (quick) / 1..16 (deep): every reachable layer-2 state is c_y (t odd) or d_y (t even) with "
             "y the running sum, the 2m vectors c_i, d_i are distinct unit vectors (so the argmax is strict and "
             "correct), and the search closes; both layers use the printed transition sets.",
    notes="000, Appendix D. The proof's closing line writes y_t = (sum_{i=1}^m x_i) mod m for sum_{i=1}^t.")
def check_theorem_6(profile: str = "quick") -> CheckResult:
    M = 8 if profile == "quick" else 16
    for m in range(1, M + 1):
        N2 = 2 * m                                         # angles are multiples of pi/m = 2 pi / (2m)
        d = [mv(rot(2 * i, N2), (F(1), F(0))) for i in range(m)]
        c0 = mv(refl(1, N2), d[0])                         # H(theta(0,1)) = H(pi/m)
        cs = [mv(rot(-2 * i, N2), c0) for i in range(m)]
        allv = d + cs
        if len(set(allv)) != 2 * m or any(dot(v, v) != 1 for v in allv):
            return CheckResult("falsified", "c_i, d_i not distinct unit vectors", counterexample={"m": m})
        theta = {(i, 1): (1 - 2 * i) % N2 for i in range(m)}
        theta.update({(i, 0): (2 * i + 1) % N2 for i in range(m)})
        start = (F(0), d[0], 0)
        seen, todo = {start}, [start]
        while todo:
            h1, h2, y = todo.pop()
            for x in range(m):
                n1 = -h1 + 1
                n2 = mv(refl(theta[(x, int(n1))], N2), h2)
                ny = (y + x) % m
                want = cs[ny] if n1 == 1 else d[ny]
                if n2 != want:
                    return CheckResult("falsified", "layer-2 state off the predicted orbit",
                                       counterexample={"m": m, "x": x})
                nxt = (n1, n2, ny)
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
    return CheckResult("holds", f"m = 1..{M}: exact reachable-state search closed with correct outputs")


@statement(
    id="000:equation-3", paper=PAPER, kind="claim",
    statement="(Eq. 3) h_t = a(x_t) h_{t-1} + b(x_t), h_0 = 0, b(1) = a(0) = 1, a(1) = -1, y_t = h_t implements the "
              "two-state parity automaton (scalar state, finite precision).",
    hypotheses="b(0) is not printed; the recursion needs b(0) = 0 (reconstructed).",
    conclusion="y_t = parity of x_1..x_t for every word.",
    verdict="holds",
    evidence="Exact reachable-state search over {0, 1}: states {0, 1}, output equals parity on every transition; with "
             "any b(0) != 0 the search finds a counterexample (the reconstruction b(0) = 0 is forced).",
    notes="000, Section 4.1.")
def check_eq3(profile: str = "quick") -> CheckResult:
    def run(b0):
        seen, todo = {(F(0), 0)}, [(F(0), 0)]
        while todo:
            h, par = todo.pop()
            for x in (0, 1):
                h2 = (F(-1) if x else F(1)) * h + (F(1) if x else b0)
                p2 = par ^ x
                if h2 != p2:
                    return False
                if (h2, p2) not in seen:
                    if len(seen) > 50:
                        return False
                    seen.add((h2, p2))
                    todo.append((h2, p2))
        return True
    if not run(F(0)):
        return CheckResult("falsified", "eq. 3 with b(0) = 0 does not compute parity", counterexample={"b(0)": "0"})
    if run(F(1, 2)):
        return CheckResult("open", "b(0) = 1/2 also works: the reconstruction is not forced")
    return CheckResult("holds", "eq. 3 with b(0) = 0 computes parity for all words (exact); b(0) = 1/2 fails")


@statement(
    id="000:equation-4", paper=PAPER, kind="claim",
    statement="(Eq. 4, Table 2) A_diag^-(x) = Diag(2 s(x) - 1) has eigenvalues 2 s(x)_i - 1 in [-1, 1] and "
              "A_GH^-(x) = I - 2 phi(x) v v^T has all eigenvalues 1 except one equal to 1 - 2 phi(x) in [-1, 1] "
              "(s in [0,1]^n, phi in [0,1], ||v|| = 1); Table 2: Mamba s = exp(-Delta_t exp(w_{1,i})), DeltaNet "
              "I - 2 beta_t k_t k_t^T.",
    hypotheses="s(x) in [0, 1]^n, phi(x) in [0, 1], ||v|| = 1.",
    conclusion="Eigenvalue range [-1, 1] for both modified transition families.",
    verdict="holds",
    evidence="Exact: for rational phi in [0, 1] and rational unit v (n = 2, 3), (I - 2 phi v v^T) v = (1 - 2 phi) v and "
             "w = w for w orthogonal to v (a basis of the complement), so the spectrum is {1, 1 - 2 phi}; 2 s - 1 "
             "maps [0, 1] onto [-1, 1]. Table 2's parametrizations reach the endpoints only in the limit "
             "(exp(-Delta e^w) in (0, 1) for Delta = softplus(.) > 0, beta = sigmoid(.) in (0, 1)); in float32 they "
             "are attained (exp underflows to 0, sigmoid rounds to 1), as App. A.3 remarks.",
    notes="000, Section 4.2 and Table 2.")
def check_eq4(profile: str = "quick") -> CheckResult:
    import numpy as np
    N = 60 if profile == "quick" else 600
    for n in (2, 3):
        def bad(args, n=n):
            phi, v = args
            G = gh(2 * phi, v)
            if mv(G, v) != tuple((1 - 2 * phi) * x for x in v):
                return True
            # complement basis: e_j - (v_j) v for j with those vectors spanning v-perp
            for j in range(n):
                e = basis_vector(j, n)
                w = tuple(a - v[j] * b for a, b in zip(e, v))
                if mv(G, w) != w:
                    return True
            return not -1 <= 1 - 2 * phi <= 1
        found = search(_st().tuples(st_fraction(0, 1), st_unit(n)), bad, N)
        if found is not None:
            return CheckResult("falsified", "spectrum not {1, 1 - 2 phi}", counterexample=repr(found))
    s = np.exp(-np.float32(200.0) * np.exp(np.float32(0.0)))
    sig = np.float32(1) / (np.float32(1) + np.exp(-np.float32(40.0)))
    if not (2 * s - 1 == -1 and 1 - 2 * sig == -1):
        return CheckResult("open", "float32 endpoints not attained")
    return CheckResult("holds", "spectra verified exactly; float32 attains the endpoints -1")


@statement(
    id="000:appendix-A.2", paper=PAPER, kind="claim",
    statement="(App. A.2) Any FSA is implemented by a single-layer LRNN with n = |Q|, H0 = e_1, B = 0 and "
              "A(w)_{q',q} = 1{delta(q, w) = q'}; such A(w) can have norm greater than one (and be neither symmetric "
              "nor triangular).",
    hypotheses="Any complete DFA.",
    conclusion="One-hot states track the automaton; some letter matrices have ||A(w)|| > 1.",
    verdict="holds",
    evidence="Exhaustive and exact over every transformation letter on 1..3 states (all single-letter automata and "
             "all pairs on 2 states): the one-hot state after every word is e_{delta(q0, w)} (BFS); the constant map "
             "on 2 states has A = [[1, 1], [0, 0]] with ||A||^2 = 2 > 1.",
    notes="000, Appendix A.2.")
def check_appendix_a2(profile: str = "quick") -> CheckResult:
    for N in (1, 2, 3):
        maps = list(itertools.product(range(N), repeat=N))
        sets = [[m] for m in maps] + ([list(c) for c in itertools.combinations(maps, 2)] if N == 2 else [])
        for letters in sets:
            mats = [tuple(tuple(F(int(p[q] == r)) for q in range(N)) for r in range(N)) for p in letters]
            H0 = basis_vector(0, N)
            seen, todo = {0}, [0]
            while todo:
                q = todo.pop()
                e = basis_vector(q, N)
                for A, p in zip(mats, letters):
                    if mv(A, e) != basis_vector(p[q], N):
                        return CheckResult("falsified", "one-hot tracking fails", counterexample=letters)
                    if p[q] not in seen:
                        seen.add(p[q])
                        todo.append(p[q])
            del H0
    A = ((F(1), F(1)), (F(0), F(0)))
    big = not is_psd(madd(eye(2), mm(tr(A), A), -1))
    if not big:
        return CheckResult("falsified", "constant map has norm <= 1", counterexample=_mat_json(A))
    return CheckResult("holds", "one-hot construction exact on every automaton tried; ||[[1,1],[0,0]]|| > 1")


# ----------------------------------------------------------------------------------------------------------------
# Theorems 4 and 5 (Krohn-Rhodes), App. C.3-C.4

_KR_FSAS = ["parity", "flipflop", "even-pairs", "counter:3", "cycle-nav:3", "transformations:[[1,2,0],[0,0,2]]",
            "transformations:[[1,0,2],[0,0,1]]", "transformations:[[1,0,2,3],[1,2,3,0],[0,1,0,1]]"]


def pr_layer_ok(letters: list, N: int) -> bool:
    """App. C.4 layer for a permutation-reset automaton: permutation letters -> product of swap reflections
    (<= N - 1 factors), constant letters -> A = prod_i (I - e_i e_i^T) = 0 (N factors, beta = 1), B = e_target;
    H0 = e_0. True iff the one-hot state tracks the automaton on every reachable state (exact)."""
    E = [basis_vector(q, N) for q in range(N)]
    layer = []
    for p in letters:
        if len(set(p)) == N:
            sw = transpositions(p)
            A = prod([gh(2, swap_vector(i, j, N)) for i, j in sw], N)
            Bv = (F(0),) * N
            nf = len(sw)
        else:
            A = prod([gh(1, E[i]) for i in range(N)], N)
            Bv = E[p[0]]
            nf = N
        if nf > N:
            return False
        layer.append((A, Bv))
    seen, todo = {0}, [0]
    while todo:
        q = todo.pop()
        for (A, Bv), p in zip(layer, letters):
            if tuple(a + b for a, b in zip(mv(A, E[q]), Bv)) != E[p[q]]:
                return False
            if p[q] not in seen:
                seen.add(p[q])
                todo.append(p[q])
    return True


@statement(
    id="000:theorem-4", paper=PAPER, kind="theorem",
    statement="Theorem 4. LRNNs with state transition matrices that are repeated products of GH matrices, each with "
              "eigenvalues in the range [-1, 1], can recognize any regular languages. In particular, every FSA "
              "A = (Sigma, Q, q0, delta) can be implemented by a finite precision LRNN with s <= 2^{|Q|} layers, each "
              "of the form 1, where n <= |Q|, p <= s, d = 1, A: R^l -> M_n^n([-1, 1]) and B: R^l -> N^n.",
    hypotheses="Any FSA.",
    conclusion="A multi-layer LRNN with GH-product transitions (eigenvalues in [-1, 1]) implements it.",
    verdict="holds",
    evidence="(1) The per-layer construction of App. C.4 checked exhaustively and exactly on every permutation-reset "
             "automaton with 1..3 states and 1..2 letters (permutation letters as <= n - 1 swap reflections, reset "
             "letters as A = prod (I - e_i e_i^T) = 0 with B one-hot). (2) End to end: lrnnkit's Krohn-Rhodes "
             "(holonomy) construction, certified for all input lengths by exact BFS (lrnnkit.certify) on parity, "
             "flip-flop, even-pairs, counters, cycle navigation and small transformation automata (deep: every pair "
             "of maps on 3 states); every letter matrix is a product of GH factors with beta in [0, 2], B in N^n. "
             "The size bounds are recorded separately (000:theorem-4.bounds); the proof's cascade wiring is "
             "000:theorem-4-proof-wiring.",
    tests=["proofs_tests/test_theorems_A_000.py::test_theorem_4_library_agrees"],
    notes="000, Section 4.3 and App. C.4.")
def check_theorem_4(profile: str = "quick") -> CheckResult:
    for N in (1, 2, 3):
        maps = list(itertools.product(range(N), repeat=N))
        pr = [m for m in maps if len(set(m)) in (1, N)]
        for L in (1, 2):
            for letters in itertools.combinations_with_replacement(pr, L):
                if not pr_layer_ok(list(letters), N):
                    return CheckResult("falsified", "permutation-reset layer fails", counterexample=list(letters))
    try:
        from ..automata.sources import load_source
        from ..certify import certify
        from ..constructions import registry as R
    except ImportError as exc:  # pragma: no cover - library pieces missing
        return CheckResult("open", f"layer construction holds; awaiting the Krohn-Rhodes construction ({exc})")
    srcs = list(_KR_FSAS)
    if profile == "deep":
        maps = [list(m) for m in itertools.product(range(3), repeat=3)]
        srcs += [f"transformations:[{a},{b}]".replace(" ", "") for a, b in itertools.combinations(maps, 2)]
    for src in srcs:
        fsa = load_source(src)
        cert = certify(R.compile(fsa, "krohn-rhodes"), float_steps=0)
        if not (cert.certified and cert.eigenvalues_in_unit_interval):
            return CheckResult("falsified", f"{src}: not certified ({cert.reason})",
                               counterexample={"source": src, "word": cert.counterexample})
    return CheckResult("holds", f"per-layer construction exact on all permutation-reset automata (<= 3 states, "
                                f"<= 2 letters); {len(srcs)} automata certified end to end")


@statement(
    id="000:theorem-4.bounds", paper=PAPER, kind="theorem",
    statement="(Part of Theorem 4 / Theorem 5) ... with s <= 2^{|Q|} layers, each of width n <= |Q| (|Q^(i)| <= |Q| "
              "in the Krohn-Rhodes cascade of Theorem 5), p <= s.",
    hypotheses="Any FSA; the cascade given by Theorem 5 (Maler & Pnueli 1994, Theorem 4).",
    conclusion="Depth and width bounds of the implementing LRNN.",
    verdict="open",
    evidence="Not decided: the bound rests on the cited Theorem 5. The holonomy decomposition used by lrnnkit "
             "(SgpDec's algorithm) does NOT meet |Q^(i)| <= |Q| in general: for the semigroup generated by S_4 "
             "((0 1), (0 1 2 3)) and the rank-2 idempotent [0, 1, 0, 1] on |Q| = 4 points, its top level has 6 "
             "points (the six 2-subsets are the tiles of X). Whether some other cascade meets the bound is the "
             "cited theorem's claim; no check here can refute an existence claim of that kind.",
    notes="000, Theorem 4 and App. C.3.")
def check_theorem_4_bounds(profile: str = "quick") -> CheckResult:
    try:
        from ..automata.holonomy import holonomy_decomposition
    except ImportError as exc:  # pragma: no cover
        return CheckResult("open", f"awaiting lrnnkit.automata.holonomy ({exc})")
    hd = holonomy_decomposition([[1, 0, 2, 3], [1, 2, 3, 0], [0, 1, 0, 1]], 4)
    return CheckResult("open", f"cited bound; the holonomy decomposition of <(0 1), (0 1 2 3), [0,1,0,1]> on 4 points "
                               f"has levels of sizes {list(hd.level_size)} (max {max(hd.level_size)} > 4)",
                       details={"level_size": list(hd.level_size)})


def _cascade_runs(top: list, bottom: dict, word: list, wiring: str) -> list:
    """States of a two-level cascade (000, Definition 1) on a word. ``top[w]``: map of the first automaton;
    ``bottom[(q, w)]``: map of the second. wiring 'cascade' reads the OLD top state (Definition 1), 'printed' the
    NEW one (App. C.4: w^(2)_t = y^(1)_t = delta^(1)(q0, w_1..w_t))."""
    q, r, out = 0, 0, []
    for w in word:
        q2 = top[w][q]
        r = bottom[(q if wiring == "cascade" else q2, w)][r]
        q = q2
        out.append((q, r))
    return out


@statement(
    id="000:theorem-4-proof-wiring", paper=PAPER, kind="construction",
    statement="(Proof of Theorem 4, App. C.4) Feeding layer i with the output of layer i - 1, w^(i)_j = y^(i-1)_j = "
              "(delta^(i-1)(q0^(i-1), w^(i-1)_1..w^(i-1)_j), ...), the first s elements of y^(s)_t are exactly the "
              "output of the cascade C = A^(s) o ... o A^(1) (Definition 1: delta''((q, q'), w) = (delta(q, w), "
              "delta'(q', (q, w)))).",
    hypotheses="A^(i) permutation-reset automata in cascade.",
    conclusion="The layered LRNN reproduces the cascade product.",
    verdict="holds-as-corrected",
    evidence="Falsified: Definition 1 feeds the lower automaton the OLD state q of the higher one, the proof feeds "
             "the NEW state delta(q, w). Minimal counterexample (one letter a, two 2-state permutation-reset levels): "
             "A^(1): a resets to 1; A^(2): input (0, a) toggles, (1, a) is the identity. On the word 'a' the cascade "
             "goes (0, 0) -> (1, 1), the printed wiring gives (1, 0). Corrected wiring (layer i reads the higher "
             "layers' outputs of step t - 1, a token shift, with the initial states before t = 1) equals the cascade "
             "on every word of length <= 6 for every pair of 2-state permutation-reset levels over a 2-letter "
             "alphabet (exhaustive, exact).",
    counterexample={"top": {"a": [1, 1]}, "bottom": {"(0,a)": [1, 0], "(1,a)": [0, 1]}, "word": ["a"],
                    "cascade": [[1, 1]], "printed": [[1, 0]]},
    corrected="w^(i)_t = (x_t, y^(1)_{t-1}, ..., y^(i-1)_{t-1}) with y^(j)_0 = q0^(j) (token shift), or one extra "
              "delay layer per level inside eq. (1).",
    notes="lrnnkit's 'krohn-rhodes' construction implements the corrected wiring; 'krohn-rhodes-as-printed' keeps the "
          "printed one and fails certification (e.g. on even-pairs).")
def check_theorem_4_wiring(profile: str = "quick") -> CheckResult:
    top = {0: [1, 1]}
    bottom = {(0, 0): [1, 0], (1, 0): [0, 1]}
    a = _cascade_runs(top, bottom, [0], "cascade")
    b = _cascade_runs(top, bottom, [0], "printed")
    if a == b:
        return CheckResult("holds", "printed wiring agrees on the minimal example")
    pr2 = [(0, 1), (1, 0), (0, 0), (1, 1)]       # 2-state permutation-reset maps
    L = 6 if profile == "quick" else 8
    for t0, t1 in itertools.product(pr2, repeat=2):
        for bots in itertools.product(pr2, repeat=4):
            bottom = {(q, w): bots[2 * q + w] for q in (0, 1) for w in (0, 1)}
            top = {0: t0, 1: t1}
            for word in itertools.product((0, 1), repeat=L):
                c = _cascade_runs(top, bottom, list(word), "cascade")
                # corrected: token shift = the layer reads the previous output (the old top state)
                q, r, ok = 0, 0, True
                for k, w in enumerate(word):
                    prev = c[k - 1][0] if k else 0
                    r = bottom[(prev, w)][r]
                    q = top[w][q]
                    ok &= (q, r) == c[k]
                if not ok:
                    return CheckResult("falsified", "token-shift wiring differs from the cascade",
                                       counterexample={"word": list(word)})
    return CheckResult("holds-as-corrected", f"printed wiring gives {b}, cascade {a} on 'a'; token-shift wiring equals "
                       f"the cascade on all words of length {L} for all 2-state permutation-reset pairs",
                       counterexample={"cascade": a, "printed": b}, corrected="token shift (lag 1)")


@statement(
    id="000:theorem-5", paper=PAPER, kind="theorem",
    statement="Theorem 5 (Krohn-Rhodes, Theorem 4 in Maler & Pnueli (1994)). For every FSA A = (Sigma, Q, q0, delta) "
              "there exists s <= 2^{|Q|} and a cascade product FSA C = A^(s) o ... o A^(1) with |Q^(i)| <= |Q|, and "
              "a function W: Q^x -> Q such that for any w in Sigma*, delta(q0, w) = W(delta^x(q0^x, w)) and each "
              "A^(i) is a permutation-reset automaton.",
    hypotheses="Any FSA.",
    conclusion="A permutation-reset cascade with the stated bounds emulates A.",
    verdict="open",
    evidence="Cited result. Checked here: lrnnkit's holonomy decomposition emulates every tested automaton (its own "
             "action / emulation / relational-morphism / cascade checks pass on the preset and small transformation "
             "automata, each level permutation-reset, depth <= 2^|Q|); the width bound |Q^(i)| <= |Q| is not met by "
             "that decomposition (see 000:theorem-4.bounds), so the bound is not confirmed.",
    notes="000, App. C.3.")
def check_theorem_5(profile: str = "quick") -> CheckResult:
    try:
        from ..automata.holonomy import check_all, holonomy_decomposition
        from ..automata.sources import load_source
    except ImportError as exc:  # pragma: no cover
        return CheckResult("open", f"awaiting lrnnkit.automata.holonomy ({exc})")
    worst = 0
    for src in _KR_FSAS:
        fsa = load_source(src)
        hd = holonomy_decomposition(fsa)
        res = check_all(hd)
        if not all(bool(v) for v in res.values()):
            return CheckResult("open", f"holonomy checks fail on {src}: {res}")
        if hd.n_levels > 2 ** fsa.n_states:
            return CheckResult("open", f"{src}: more than 2^|Q| levels")
        worst = max(worst, max(hd.level_size) - fsa.n_states if hd.level_size else 0)
    return CheckResult("open", f"holonomy emulation verified on {len(_KR_FSAS)} automata; level size exceeds |Q| by up "
                               f"to {worst} points, so the cited width bound is not confirmed by this decomposition")


@statement(
    id="000:proposition-1-consequence", paper=PAPER, kind="corollary",
    statement="(Section 4.3, after Proposition 1) A consequence of Proposition 1 is that if for every layer of an "
              "LRNN, there exists n, k in N such that the map A from inputs to state-transition matrices is such "
              "that A: R^l -> M_k^n([-1, 1]), then the LRNN cannot learn to count modulo m, with m not a power of "
              "two, due to Theorem 2.",
    hypotheses="Every layer's transitions are products of k GH matrices with eigenvalues in [-1, 1].",
    conclusion="The LRNN cannot count modulo m (m not a power of two).",
    verdict="holds-as-corrected",
    evidence="As printed (range [-1, 1]) it contradicts the paper's own Section 4.2: R(2 pi/3) = (I - 2 v_1 v_1^T)"
             "(I - 2 e_2 e_2^T) lies in M_2^2({-1}) and one layer with A(1) = R(2 pi/3), H0 = e_1 counts modulo 3 "
             "exactly (three exact states; checked in cyclotomic arithmetic). The intended range is [0, 1] (the "
             "next sentence contrasts it with [-1, 1]). Even then the argument needs the products of 2^{i-1} "
             "transition matrices of layer i to have real eigenvalues (corrected Theorem 2), which Prop. 1.3b only "
             "gives for at most 2 GH factors in total (000:proposition-1.3b). Corrected: one layer with "
             "A: R^l -> M_k^n([0, 1]), k <= 2 (or L layers with k 2^{L-1} <= 2), and a monotone cast, cannot count "
             "modulo m; products of <= 2 such factors have real spectra (exact search, as in 1.3b).",
    counterexample={"A(1)": "R(2 pi/3) = (I - 2 v v^T)(I - 2 e_2 e_2^T), v = (-sin(pi/3), cos(pi/3))",
                    "H0": [1, 0], "states": "e_1, R e_1, R^2 e_1 (period 3)"},
    corrected="With [0, 1] and at most two GH factors per product of 2^{i-1} consecutive transitions of layer i "
              "(k 2^{i-1} <= 2), and a monotone cast: no counting modulo m (m not a power of two). For k >= 3 the "
              "question is open (such products can have non-real eigenvalues).",
    notes="Depends on 000:theorem-2 (corrected) and 000:proposition-1.3b.")
def check_prop1_consequence(profile: str = "quick") -> CheckResult:
    v1 = (-sin2pi(1, 6), cos2pi(1, 6))
    H1 = householder(2, v1)
    R = mm(H1, ((F(1), F(0)), (F(0), F(-1))))
    s0 = (F(1), F(0))
    s1, s2 = mv(R, s0), mv(R, mv(R, s0))
    counts = len({s0, s1, s2}) == 3 and mv(R, s2) == s0 and R == rot(1, 3)
    N = 40 if profile == "quick" else 400
    found = search(_st().lists(_st().tuples(st_fraction(0, 1), st_unit(3)), min_size=1, max_size=2),
                   lambda f: not all_roots_real(charpoly(gh_product(f, 3))), N)
    if found is not None:
        return CheckResult("falsified", "two [0,1] factors with a non-real eigenvalue", counterexample=_fac_json(found))
    if not counts:
        return CheckResult("holds", "the rotation counterexample does not count modulo 3")
    return CheckResult("holds-as-corrected", "R(2 pi/3) in M_2^2({-1}) counts modulo 3 exactly; products of <= 2 GH "
                       f"factors with eigenvalues in [0, 1] have real spectra ({N} exact cases, n = 3)",
                       counterexample={"A(1)": _mat_json(R)}, corrected="[0, 1], k 2^{i-1} <= 2")


@statement(
    id="000:equation-5-inclusion", paper=PAPER, kind="claim",
    statement="(Section 4.3, after eq. 5) M_k^n(Omega) subset M_{k'}^n(Omega') if 1 in Omega, k' >= k and "
              "Omega subset Omega'.",
    hypotheses="1 in Omega (the identity I - 0 v v^T is an admissible factor), k' >= k, Omega subset Omega'.",
    conclusion="Padding a product with k' - k identity factors stays in the larger set.",
    verdict="holds",
    evidence="Exact search: products of k <= 3 factors padded with k' - k <= 2 identity factors (beta = 0, "
             "eigenvalue 1 in Omega) are unchanged entrywise; every factor's eigenvalue 1 - beta stays in Omega'. "
             "With 1 not in Omega (e.g. Omega = {-1}) the inclusion M_1^2({-1}) subset M_2^2({-1}) fails: a single "
             "reflection has determinant -1, a product of two has determinant +1 (checked), so the hypothesis "
             "1 in Omega is needed.",
    notes="000, Section 4.3.")
def check_inclusion(profile: str = "quick") -> CheckResult:
    N = 40 if profile == "quick" else 400
    st = _st()

    def bad(args):
        facs, pad = args
        n = len(facs[0][1])
        padded = list(facs) + [(F(0), facs[0][1])] * pad
        return gh_product(facs, n) != gh_product(padded, n)
    found = search(st.tuples(st_gh_product(2, 3, 0, 2), st.integers(0, 2)), bad, N)
    if found is not None:
        return CheckResult("falsified", "padding changed the product", counterexample=repr(found))
    r1 = gh(2, (F(3, 5), F(4, 5)))
    det1 = det(r1)
    r2 = mm(r1, gh(2, (F(1), F(0))))
    det2 = det(r2)
    if not (det1 == -1 and det2 == 1):
        return CheckResult("open", "determinant control failed")
    return CheckResult("holds", f"identity padding verified on {N} products; the hypothesis 1 in Omega is necessary "
                                "(det of one vs two reflections)")


@statement(
    id="000:appendix-D-identities", paper=PAPER, kind="lemma",
    statement="(App. D) With R(alpha) the rotation by alpha and H(alpha) = [[cos alpha, sin alpha], [sin alpha, "
              "-cos alpha]] the reflection across the line at angle alpha/2: R(alpha) R(gamma) = R(alpha + gamma), "
              "H(alpha) H(gamma) = R(alpha - gamma), R(alpha) H(gamma) = H(alpha + gamma), H(gamma) R(alpha) = "
              "H(gamma - alpha).",
    hypotheses="alpha, gamma real.",
    conclusion="The four product identities.",
    verdict="holds",
    evidence="Exact in cyclotomic arithmetic for all alpha, gamma in multiples of 2 pi / 12 (quick) / 2 pi / 24 "
             "(deep); the identities are polynomial identities in (cos, sin), so agreement on this grid plus "
             "the angle-addition formulas is the proof; a float64 check on random real angles (tolerance 1e-12) is "
             "in the tests.",
    notes="000, App. D (also used by 001, App. B).")
def check_appendix_d(profile: str = "quick") -> CheckResult:
    N = 12 if profile == "quick" else 24
    for a, g in itertools.product(range(N), repeat=2):
        if mm(rot(a, N), rot(g, N)) != rot(a + g, N) or mm(refl(a, N), refl(g, N)) != rot(a - g, N) \
                or mm(rot(a, N), refl(g, N)) != refl(a + g, N) or mm(refl(g, N), rot(a, N)) != refl(g - a, N):
            return CheckResult("falsified", "identity fails", counterexample={"alpha": f"2pi*{a}/{N}",
                                                                              "gamma": f"2pi*{g}/{N}"})
    return CheckResult("holds", f"all four identities exact on the {N} x {N} angle grid")
