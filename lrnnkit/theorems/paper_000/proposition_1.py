"""Paper 000: 000:proposition-1.1, 000:proposition-1.2a, 000:proposition-1.2b, 000:proposition-1.2c, 000:proposition-1.2c-proof-swaps, 000:proposition-1.3a, 000:proposition-1.3b, 000:proposition-1-consequence.

See the package docstring (lrnnkit/theorems/paper_000/__init__.py) for the paper and conventions."""
from __future__ import annotations

import itertools
from fractions import Fraction as F
from typing import Sequence

from ...exact import cos2pi, sin2pi
from .._exact import _fac_json, _mat_json, _st, basis_vector, dot, eye, gh, gh_product, householder, is_psd, madd, mm
from .._exact import mv, prod, search, st_fraction, st_gh_product, st_unit, tr
from ..registry import CheckResult, statement
from ._common import PAPER, charpoly, poly_div_linear, rot, swap_vector, transpositions


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
    perturb={"beta_hi": 3},
    notes=_P1 + " The proof (sub-multiplicativity, ||C_i|| <= 1) is correct.")
def check_prop_1_1(profile: str = "quick", beta_hi=2) -> CheckResult:
    N = 80 if profile == "quick" else 600
    found = None
    for n in (2, 3):
        def bad(facs, n=n):
            M = gh_product(facs, n)
            return not is_psd(madd(eye(n), mm(tr(M), M), -1))
        found = search(st_gh_product(n, 4, 0, beta_hi), bad, N)
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
    id="000:proposition-1.2a", paper=PAPER, perturb={"per_n": 2}, kind="proposition",
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
def check_prop_1_2a(profile: str = "quick", per_n: int = 3) -> CheckResult:
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
            return len(facs) > per_n * n or gh_product(facs, n) != M or any(not 0 <= b_ <= 2 for b_, _ in facs)
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
    id="000:proposition-1.2b", paper=PAPER, perturb={"slack": -1}, kind="proposition",
    statement="If M is orthogonal then M in M_n^n({-1, 1}).",
    hypotheses="M real orthogonal n x n.",
    conclusion="M is a product of n GH matrices each being a reflection (beta = 2) or the identity (beta = 0).",
    verdict="holds",
    evidence="Exact: rational orthogonal matrices (Cayley transforms, both determinants, n = 2..4) are reduced by at "
             "most n reflections with rational GH matrices; the product is compared entrywise with M; every "
             "signed permutation matrix of size <= 3 as well.",
    notes=_P1 + " (Cartan-Dieudonne for R^n.)")
def check_prop_1_2b(profile: str = "quick", slack: int = 0) -> CheckResult:
    st = _st()
    N = 40 if profile == "quick" else 400
    for n in (2, 3, 4):
        m = n * (n - 1) // 2
        strat = st.tuples(st.lists(st.fractions(-3, 3, max_denominator=5), min_size=m, max_size=m), st.booleans())

        def bad(args, n=n):
            O = cayley_orthogonal(args[0], n, args[1])
            ws = householder_factors(O)
            return len(ws) > n + slack or prod([gh(2, w) for w in ws], n) != O
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
    """Column convention of docs/conventions.rst: ``P[p[q], q] = 1`` (state q goes to p[q])."""
    n = len(p)
    return tuple(tuple(F(int(p[j] == i)) for j in range(n)) for i in range(n))


@statement(
    id="000:proposition-1.2c", paper=PAPER, perturb={"slack": -1}, kind="proposition",
    statement="M in M_{n-1}^n({-1, 1}) when M is a permutation matrix.",
    hypotheses="M an n x n permutation matrix, n >= 2 (for n = 1, M = I in M_1^1({1}) as the proof remarks).",
    conclusion="M is a product of n - 1 GH matrices, each a reflection (swap, v = (e_i - e_j)/sqrt 2) or I.",
    verdict="holds",
    evidence="Exhaustive and exact over all permutation matrices of size 2..5 (quick) / 2..6 (deep): the product of "
             "the n - c(P) <= n - 1 swap reflections I - (e_i - e_j)(e_i - e_j)^T equals P entrywise.",
    notes=_P1)
def check_prop_1_2c(profile: str = "quick", slack: int = 0) -> CheckResult:
    nmax = 5 if profile == "quick" else 6
    count = 0
    for n in range(2, nmax + 1):
        I = eye(n)
        for p in itertools.permutations(range(n)):
            sw = transpositions(p)
            P = prod([gh(2, swap_vector(i, j, n)) for i, j in sw], n)
            count += 1
            if len(sw) > n - 1 + slack or P != perm_matrix(p):
                return CheckResult("falsified", "swap product mismatch", counterexample=list(p))
        del I
    return CheckResult("holds", f"all {count} permutation matrices of size 2..{nmax} are products of <= n-1 swap "
                                f"reflections (exact)")


@statement(
    id="000:proposition-1.2c-proof-swaps", paper=PAPER, perturb={"as_printed": True}, kind="construction",
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
def check_prop_1_2c_proof(profile: str = "quick", as_printed: bool = False) -> CheckResult:
    printed_fails = None
    for n in range(2, 6):
        for p in itertools.permutations(range(n)):
            if list(p) == list(range(n)):
                continue
            sw = transpositions(p)
            full = prod([gh(2, swap_vector(i, j, n)) for i, j in sw[: len(sw) - int(as_printed)]], n)
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
    perturb={"beta_2_allowed": True},
    notes=_P1 + " The proof's aside 'min_{x in [0,2]} x(2 - x) = 1 and is only reached at x = 0 and x = 2' should "
                "read min = 0 (the bound used, beta(2 - beta) > 0 on (0, 2), is right).")
def check_prop_1_3a(profile: str = "quick", beta_2_allowed: bool = False) -> CheckResult:
    N = 60 if profile == "quick" else 600
    for n in (2, 3):
        found = search(st_gh_product(n, 4, 0, 2, hi_open=not beta_2_allowed),
                       lambda f, n=n: not spectrum_13a_ok(gh_product(f, n)),
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
    perturb={"beta_hi": 2},
    counterexample={"n": 2, "k": 3, "factors": _fac_json(P13B_CE),
                    "N": [["99/625", "112/5625"], ["-112/1875", "1273/5625"]],
                    "discriminant": "-4604/31640625"},
    corrected="If N in M_k^n([0, 1]) with k <= 2, every eigenvalue of N is real (and in [0, 1]: N = C_1 C_2 is "
              "similar to C_1^{1/2} C_2 C_1^{1/2}, which is symmetric PSD). For k >= 3 only the first part "
              "(lambda = 1 or |lambda| < 1) survives.",
    notes=_P1 + " Consequence for the paper: the remark after Prop. 1 that an LRNN with A: R^l -> M_k^n([0,1]) cannot "
                "count modulo m still follows from Prop. 1.3a (all eigenvalues 1 or |lambda| < 1) together with "
                "Theorem 2 as printed, not from the reality of the spectrum.")
def check_prop_1_3b(profile: str = "quick", beta_hi=1) -> CheckResult:
    M = gh_product(P13B_CE, 2)
    disc = (M[0][0] + M[1][1]) ** 2 - 4 * (M[0][0] * M[1][1] - M[0][1] * M[1][0])
    printed_false = disc < 0 and all(0 <= b <= 1 and dot(v, v) == 1 for b, v in P13B_CE)
    N = 80 if profile == "quick" else 600
    for n in (2, 3):
        found = search(_st().lists(_st().tuples(st_fraction(0, beta_hi), st_unit(n)), min_size=1, max_size=2),
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
             "next sentence contrasts it with [-1, 1]); that reading is a separate entry "
             "(000:proposition-1-consequence.unit-interval-reading): it is false for k >= 3 when the exact state's "
             "limit sits on a rounding midpoint (an exact bf16 instance with k = 3), and true for k <= 2 and for "
             "casts continuous at the limit points. Corrected here: with A: R^l -> M_k^n([0, 1]) and either "
             "k 2^{i-1} <= 2 in layer i (products of <= 2 such factors have real spectra: exact search, n = 3) and a "
             "monotone cast (corrected 000:theorem-2), or any k and a cast continuous at the limit points "
             "(000:theorem-2.generic-cast, with 000:proposition-1.3a), the LRNN cannot count modulo m.",
    counterexample={"A(1)": "R(2 pi/3) = (I - 2 v v^T)(I - 2 e_2 e_2^T), v = (-sin(pi/3), cos(pi/3))",
                    "H0": [1, 0], "states": "e_1, R e_1, R^2 e_1 (period 3)"},
    corrected="With [0, 1] in place of [-1, 1], and either (a) k 2^{i-1} <= 2 for every layer i and a monotone cast, "
              "or (b) any k and a cast continuous at every limit point of the exact state sequences: no counting "
              "modulo m (m not a power of two). For k >= 3 with a rounding midpoint as limit the [0, 1] reading fails "
              "(000:proposition-1-consequence.unit-interval-reading).",
    perturb={"beta_hi": 2},
    notes="Depends on 000:theorem-2 (corrected), 000:theorem-2.generic-cast and 000:proposition-1.3b.")
def check_prop1_consequence(profile: str = "quick", beta_hi=1) -> CheckResult:
    v1 = (-sin2pi(1, 6), cos2pi(1, 6))
    H1 = householder(2, v1)
    R = mm(H1, ((F(1), F(0)), (F(0), F(-1))))
    s0 = (F(1), F(0))
    s1, s2 = mv(R, s0), mv(R, mv(R, s0))
    counts = len({s0, s1, s2}) == 3 and mv(R, s2) == s0 and R == rot(1, 3)
    N = 40 if profile == "quick" else 400
    found = search(_st().lists(_st().tuples(st_fraction(0, beta_hi), st_unit(3)), min_size=1, max_size=2),
                   lambda f: not all_roots_real(charpoly(gh_product(f, 3))), N)
    if found is not None:
        return CheckResult("falsified", "two [0,1] factors with a non-real eigenvalue", counterexample=_fac_json(found))
    if not counts:
        return CheckResult("holds", "the rotation counterexample does not count modulo 3")
    return CheckResult("holds-as-corrected", "R(2 pi/3) in M_2^2({-1}) counts modulo 3 exactly; products of <= 2 GH "
                       f"factors with eigenvalues in [0, 1] have real spectra ({N} exact cases, n = 3)",
                       counterexample={"A(1)": _mat_json(R)}, corrected="[0, 1], k 2^{i-1} <= 2 or generic cast")


# The k = 3 instance of the [0, 1] reading. In the plane W = p^perp, p = (1, 2, 2)/3, three GH factors with
# eigenvalues 1/11, 1/9, 4/99 (beta = 10/11, 8/9, 95/99) whose product M restricted to W has trace -2/99 and
# determinant 4/9801 = (2/99)^2: its eigenvalues are (2/99) e^{+-2 pi i/3}, so M|_W cubed is (2/99)^3 I exactly
# (Cayley-Hamilton: M^2 + r M + r^2 I = 0 with r = 2/99). The directions u_i are Q (0, w_i) for the rational
# orthogonal Q = [[1, 2, 2], [2, 1, -2], [2, -2, 1]] / 3 and w = (1, 0), (-1, 2), (5, 7) (found by an exact search
# over rational slopes and betas, solving tr^2 = det for the third beta).
UNIT_K3_FACTORS = [(F(10, 11), (F(2), F(1), F(-2))), (F(8, 9), (F(2), F(-5), F(4))),
                   (F(95, 99), (F(8), F(-3), F(-1)))]
UNIT_K3_FIXED = (F(1, 3), F(2, 3), F(2, 3))
UNIT_K3_H0 = (F(129, 128), F(1027, 512), F(257, 128))
UNIT_K3_C = F(2, 99) ** 3


def unit_interval_counter_facts(K: int, h0: tuple = UNIT_K3_H0) -> dict:
    """Every fact the k = 3 counterexample rests on, computed exactly (see :data:`UNIT_K3_FACTORS`).

    With ``x_k = (A^k H0)_1 - (1 + 2^-8)`` the identity ``A^3 = c I + (1 - c) p p^T`` (c = (2/99)^3, p fixed by every
    factor) gives ``x_{k+3} = c x_k``; with ``x_0 = 2^-8 > 0`` and ``-2^-8 < x_1, x_2 < 0`` every ``x_k`` with
    ``k >= 1`` lies in ``(-2^-8, 2^-8)``, positive iff ``3 | k``: the bf16 round-to-nearest-even cast of
    ``(A^k H0)_1`` is ``1 + 2^-7`` iff ``3 | k`` and 1 otherwise, for every k. ``K`` more steps are also cast
    directly (:func:`cast_model_states`) as an independent confirmation."""
    from .theorem_1_2 import BF16, cast_model_states
    n = 3
    A = gh_product(UNIT_K3_FACTORS, n)
    p = UNIT_K3_FIXED
    A3 = mm(A, mm(A, A))
    c = UNIT_K3_C
    target = tuple(tuple((c if i == j else F(0)) + (1 - c) * p[i] * p[j] / dot(p, p) for j in range(n))
                   for i in range(n))
    mid, half = 1 + F(1, 2 ** 8), F(1, 2 ** 8)
    xs, v = [], h0
    for _ in range(3):
        xs.append(v[0] - mid)
        v = mv(A, v)
    states = cast_model_states(A, (F(0),) * n, h0, K, BF16, "nearest-even")
    return {
        "betas_in_[0,1]": all(0 <= b <= 1 for b, _ in UNIT_K3_FACTORS),
        "fixed_direction": all(dot(u, p) == 0 for _, u in UNIT_K3_FACTORS) and mv(A, p) == p,
        "cube_is_scalar_on_W": A3 == target and 0 < c < 1,
        "x0_x1_x2": [str(x) for x in xs],
        "signs_and_bounds": xs[0] == half and all(-half < x < 0 for x in xs[1:]),
        "cast_counts_mod_3": all((s[0] == 1 + F(1, 2 ** 7)) == (k % 3 == 0) and s[0] in (1, 1 + F(1, 2 ** 7))
                                 for k, s in enumerate(states)),
        "midpoint_is_bf16_boundary": BF16.cast(mid, "nearest-even") == 1 and BF16.cast(mid + F(1, 2 ** 40)) != 1,
        "A": A, "K": K,
    }


@statement(
    id="000:proposition-1-consequence.unit-interval-reading", paper=PAPER, kind="corollary",
    statement="(Section 4.3, after Proposition 1, with the intended range [0, 1] for the printed [-1, 1]) If for "
              "every layer of an LRNN there exist n, k in N such that A: R^l -> M_k^n([0, 1]), then the LRNN cannot "
              "learn to count modulo m, with m not a power of two, due to Theorem 2.",
    hypotheses="Every layer's transitions are products of k GH matrices with eigenvalues in [0, 1]; the finite "
               "precision model of App. A.3 / B.1 (products exact, each term cast, the sum cast).",
    conclusion="The LRNN cannot count modulo m (m not a power of two).",
    verdict="falsified",
    evidence="Falsified for k = 3, n = 3, m = 3 in bf16 with round-to-nearest-even, one layer, B = 0, A(0) = I and "
             "A(1) = C_1 C_2 C_3, C_i = I - beta_i u_i u_i^T / |u_i|^2 with beta = (10/11, 8/9, 95/99) (eigenvalues "
             "1/11, 1/9, 4/99, all in [0, 1]) and u = (2, 1, -2), (2, -5, 4), (8, -3, -1), all orthogonal to "
             "p = (1, 2, 2)/3. A(1) fixes p and acts on p^perp with trace -2/99 and determinant (2/99)^2, so "
             "A(1)^3 = c I + (1 - c) p p^T with c = (2/99)^3 exactly (eigenvalues 1 and (2/99) e^{+-2 pi i/3}). With "
             "H0 = (129/128, 1027/512, 257/128) the first coordinate is (A(1)^k H0)_1 = 1 + 2^-8 + x_k with "
             "x_{k+3} = c x_k, x_0 = 2^-8, x_1 = -13/879120, x_2 = -41/31648320: for every k >= 1, |x_k| < 2^-8 and "
             "x_k > 0 iff 3 | k, so cast((A(1)^k H0)_1) = 1 + 2^-7 iff 3 | k and 1 otherwise, and dec(H) = "
             "1{H_1 > 1} recognizes (111)* at every length (checked exactly, and by casting the first 300 / 3000 "
             "states directly). The limit 1 + 2^-8 is a bf16 rounding midpoint. Three factors are the fewest: "
             "products of <= 2 factors with eigenvalues in [0, 1] have real spectra (000:proposition-1.3b, "
             "corrected), so with k <= 2 the corrected Theorem 2 (monotone cast) excludes counting; and for any k a "
             "cast continuous at the limit points excludes it (000:theorem-2.generic-cast).",
    counterexample={"format": "bf16, round-to-nearest-even", "m": 3, "k": 3, "n": 3, "layers": 1, "B": "0",
                    "betas": ["10/11", "8/9", "95/99"], "u": [[2, 1, -2], [2, -5, 4], [8, -3, -1]],
                    "H0": ["129/128", "1027/512", "257/128"], "A(1)^3": "c I + (1 - c) p p^T, c = (2/99)^3, "
                    "p = (1, 2, 2)/3", "state_after_k_ones": "cast(A(1)^k H0)_1 = 1 + 2^-7 if k % 3 == 0 else 1",
                    "decoder": "1{H_1 > 1}"},
    perturb={"h0": (F(129, 128), F(1027, 512), F(257, 128) + F(1, 64))},
    notes="Decides the k >= 3 case that earlier versions of 000:proposition-1-consequence left open. The instance "
          "was found by an exact search: directions of rational slope, beta_1, beta_2 on a grid, beta_3 a rational "
          "root of tr(M)^2 = det(M) (both affine in beta_3).")
def check_prop1_consequence_unit_interval(profile: str = "quick", h0: tuple = UNIT_K3_H0) -> CheckResult:
    facts = unit_interval_counter_facts(300 if profile == "quick" else 3000, h0)
    A = facts.pop("A")
    if all(v for k, v in facts.items() if k not in ("x0_x1_x2", "K")):
        return CheckResult("falsified", "A(1) in M_3^3([0, 1]) with A(1)^3 = c I + (1 - c) p p^T exactly; the bf16 "
                           "round-to-nearest-even state counts modulo 3 for every length (x_{k+3} = c x_k) and for "
                           f"k = 0..{facts['K']} directly", counterexample={"A(1)": _mat_json(A),
                                                                           "H0": [str(x) for x in UNIT_K3_H0]},
                           details={k: v for k, v in facts.items()})
    return CheckResult("holds", f"the k = 3 instance does not verify: {facts}")
