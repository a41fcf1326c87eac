"""The proof model of paper 000 (Appendix A.3, proofs of Theorems 1 and 2 in Appendix B) on a constant input
``x = 1^k``, evaluated exactly for every ``k`` at once.

With a constant symbol the unrolled state of eq. (1) is (B.1)

    ``H_k = sum_{i=0}^{k-1} A^i B + A^k H_0``,   ``Ĥ_k = fl( sum_{i=0}^{k-1} fl(A^i B) + fl(A^k H_0) )``

(products exact, each term cast, the sum exact, one final cast). The proof argues: the cast terms
``Ĉ_i = fl(A^i B)`` and ``D̂_k = fl(A^k H_0)`` become constant (period 2 for eigenvalue -1: B.2) after some
``tau``, so ``Ĥ_k = fl(S_tau + (k - tau) Ĉ + D̂)`` (B.1, the printed formula with ``Ĉ_i`` summed) changes only
through ``k Ĉ``, whose cast is eventually constant (it converges, or diverges to a point at infinity, which the cast
maps to one value). We compute this exactly, for transitions where every entry of ``A^i v`` has the form
``alpha + gamma mu^i`` with a rational ``mu in [-1, 1]``:

* diagonal ``A = diag(a)``: entry ``j`` is ``a_j^i v_j`` (``alpha = 0, gamma = v_j, mu = a_j``);
* one GH factor ``A = I - beta u u^T / (u^T u)`` (DeltaNet): ``A^i = I - (1 - lam^i) P`` with ``lam = 1 - beta``,
  ``P = u u^T / u^T u``, so entry ``j`` of ``A^i v`` is ``(v - P v)_j + (P v)_j lam^i``.

Along each parity class of ``i`` the sequence ``alpha + gamma mu^i`` is monotone (``mu^2 in [0, 1]``), so its cast
is monotone, reaches its eventual value at a computable index (binary search) and stays there: this replaces the
proof's existence argument by the exact index. The final cast of ``S_tau + j (v_0 + v_1) + const`` is monotone in
``j`` as well (binary search again, over integers as large as needed: e.g. counting with ``a = 1`` in fp32 only
stops changing when the sum overflows, after about 2^128 steps, far beyond any simulation).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..errors import InputError
from ..exact import Cyc
from ..model import Layer
from .cast import cast_exact
from .formats import get_format
from .rounding import canonical_rounding

__all__ = ["ProofConstantInput", "proof_constant_input"]


@dataclass
class ProofConstantInput:
    """The proof model's state ``Ĥ_k`` on ``1^k`` for every k: eventually periodic with ``period`` (1 or 2) from
    ``pre_period`` on (``Ĥ_k = final[(k - pre_period) mod period]`` for ``k >= pre_period``, and not from any earlier
    k); ``tau`` is where the cast terms stop changing; ``states`` are ``Ĥ_0 .. Ĥ_{len-1}`` computed directly."""
    pre_period: int
    period: int
    tau: int
    final: list
    states: list

    def to_json(self) -> dict:
        return {"pre_period": self.pre_period, "period": self.period, "tau": self.tau,
                "final": [[repr(float(x)) for x in h] for h in self.final]}


def _rat(x, xf) -> Fraction:
    if x is not None and not isinstance(x, Cyc):
        return Fraction(x)
    if isinstance(x, Cyc):
        raise InputError("the exact proof model on constant inputs needs rational weights")
    return Fraction(float(xf))


def _affine_forms(layer: Layer, s: int, v: list) -> list:
    """(alpha, gamma, mu) per entry with (A(s)^i v)_j = alpha_j + gamma_j mu_j^i."""
    t = layer.transitions[s]
    d = layer.width
    if layer.kind == "diagonal" or (t.A_exact is not None and all(
            t.A_exact[i][j] == 0 for i in range(d) for j in range(d) if i != j)):
        a = [_rat(t.A_exact[j][j] if t.A_exact is not None else None, t.A[j, j]) for j in range(d)]
        return [(Fraction(0), v[j], a[j]) for j in range(d)]
    if layer.kind == "gh" and t.factors is not None and len(t.factors) == 1:
        f = t.factors[0]
        beta = _rat(f.beta_exact, f.beta)
        if f.u_exact is not None and not any(isinstance(x, Cyc) for x in f.u_exact):
            u = [Fraction(x) for x in f.u_exact]
        else:
            u = [Fraction(float(x)) for x in f.v]
        uu = sum((x * x for x in u), Fraction(0))
        uv = sum((x * y for x, y in zip(u, v)), Fraction(0))
        Pv = [x * uv / uu for x in u]
        lam = 1 - beta
        return [(v[j] - Pv[j], Pv[j], lam) for j in range(d)]
    raise InputError(f"layer {layer.name!r}: the exact constant-input proof model handles diagonal layers and single "
                     f"GH factors (DeltaNet); this transition has kind {layer.kind!r}")


class _Entry:
    """One entry ``c(i) = alpha + gamma mu^i`` and its casts."""

    def __init__(self, alpha, gamma, mu, fl):
        if not -1 <= mu <= 1:
            raise InputError(f"eigenvalue {mu} outside [-1, 1]: the cast terms would not settle")
        self.alpha, self.gamma, self.mu, self.fl = alpha, gamma, mu, fl

    def value(self, i: int) -> Fraction:
        return self.alpha + self.gamma * self.mu ** i

    def cast(self, i: int) -> float:
        return self.fl(self.value(i))

    def settle(self, p: int) -> tuple[int, float]:
        """For the parity class i = 2j + p: the first j from which cast(c(2j + p)) is constant, and that value."""
        first = self.cast(p)
        far = 2 * _far_index(self, p) + p
        final = self.cast(far)
        if first == final or (np.isnan(first) and np.isnan(final)):
            return 0, final
        lo, hi = 0, (far - p) // 2   # cast(lo) != final, cast(hi) == final; monotone in between
        while hi - lo > 1:
            mid = (lo + hi) // 2
            c = self.cast(2 * mid + p)
            if c == final:
                hi = mid
            else:
                lo = mid
        return hi, final


def _far_index(e: _Entry, p: int) -> int:
    """A j so large that gamma mu^(2j+p) is below a quarter of the distance from the limit to the nearest rounding
    boundary other than the limit itself (boundaries: format values and midpoints; below min_subnormal / 2 the
    spacing is at least that), so that the cast has reached its eventual value."""
    if e.gamma == 0 or e.mu in (0, 1, -1):
        return 1
    fmt = e.fl.fmt
    L = e.alpha  # |mu| < 1
    gap = Fraction(fmt.min_subnormal) / 4
    if L != 0:
        a = abs(L)
        n, dd = a.numerator, a.denominator
        ex = n.bit_length() - dd.bit_length() - 1
        q = max(ex, fmt.emin) - fmt.man_bits - 2
        h = Fraction(2) ** q  # an eighth of the quantum: every boundary is a multiple of 4h
        r = a / h - (a / h).__floor__()
        dist = min(r, 1 - r) * h if r != 0 else h
        gap = min(gap, dist / 2)
    j = 1
    while abs(e.gamma) * abs(e.mu) ** (2 * j) >= gap:
        j *= 2
    return j


def proof_constant_input(layer: Layer, fmt, rounding: str = "nearest-even", symbol: int = 0,
                         direct_steps: int = 64) -> ProofConstantInput:
    """Exact eventual behaviour of the proof model (000, B.1/B.2) of one layer on the constant input ``symbol^k``."""
    fmt = get_format(fmt)
    rnd = canonical_rounding(rounding)
    if rnd == "stochastic":
        raise InputError("the proof model needs a deterministic rounding mode")

    class _FL:
        def __init__(self):
            self.fmt = fmt

        def __call__(self, x):
            return cast_exact(x, fmt, rnd)

    fl = _FL()
    t = layer.transitions[symbol]
    d = layer.width
    B = [_rat(t.B_exact[j] if t.B_exact is not None else None, t.B[j]) for j in range(d)]
    H0 = [_rat(layer.H0_exact[j] if layer.H0_exact is not None else None, layer.H0[j]) for j in range(d)]
    C = [_Entry(*f, fl) for f in _affine_forms(layer, symbol, B)]
    D = [_Entry(*f, fl) for f in _affine_forms(layer, symbol, H0)]
    # tau: from here on every cast term Ĉ_i (i >= tau) and D̂_k (k >= tau) equals its parity class's final value
    tau = 0
    cfin, dfin = [], []
    for e_list, fin in ((C, cfin), (D, dfin)):
        for e in e_list:
            (j0, f0), (j1, f1) = e.settle(0), e.settle(1)
            fin.append((f0, f1))
            tau = max(tau, 2 * j0, 2 * j1 + 1)
    if tau % 2:
        tau += 1
    K = tau + max(direct_steps, 4)
    # direct evaluation of Ĥ_k for k <= K (incremental exact sum of the cast terms)
    states = []
    S = [Fraction(0)] * d
    spec = [None] * d     # a non-finite partial sum (inf / nan) per entry
    for k in range(K + 1):
        h = []
        for j in range(d):
            dk = D[j].cast(k)
            h.append(_final_cast(S[j], spec[j], dk, fl))
        states.append(h)
        for j in range(d):
            c = C[j].cast(k)
            if spec[j] is not None or not np.isfinite(c):
                spec[j] = _add_special(spec[j], S[j], c)
            else:
                S[j] += Fraction(c)
    # tails: for k = tau + 2 m + r, inner value = S_tau + m (c_0 + c_1) + r c_{tau} + d_{k}
    S_tau = []
    S2 = [Fraction(0)] * d
    spec2 = [None] * d
    for k in range(tau):
        for j in range(d):
            c = C[j].cast(k)
            if spec2[j] is not None or not np.isfinite(c):
                spec2[j] = _add_special(spec2[j], S2[j], c)
            else:
                S2[j] += Fraction(c)
    S_tau = list(zip(S2, spec2))
    finals = [[None] * d, [None] * d]
    last_bad = -1
    for j in range(d):
        (c0, c1), (d0, d1) = cfin[j], dfin[j]
        for r in (0, 1):
            def inner(m, j=j, r=r, c0=c0, c1=c1, d0=d0, d1=d1):
                tot, sp = S_tau[j]
                for val, cnt in ((c0, m + r), (c1, m)):   # k = tau + 2m + r: i = tau.. k-1 has m + r even i
                    if cnt:
                        if not np.isfinite(val):
                            sp = _add_special(sp, tot, val)
                        else:
                            tot = tot + cnt * Fraction(val)
                return _final_cast(tot, sp, d0 if r == 0 else d1, fl)

            def eq(a, b):
                return a == b or (np.isnan(a) and np.isnan(b))
            if not (np.isfinite(c0) and np.isfinite(c1)) or S_tau[j][1] is not None:
                fin = inner(1)                    # a non-finite term dominates every later sum
                m_star = 0 if eq(inner(0), fin) else 1
            elif c0 + c1 == 0:
                fin, m_star = inner(0), 0
            else:
                # the inner value is affine in m with slope c0 + c1 != 0: its cast ends at the cast of +-"huge"
                huge = Fraction(2) ** (fmt.emax + 4) * (1 if c0 + c1 > 0 else -1)
                fin = fl(huge + 0) if np.isfinite(d0 if r == 0 else d1) else inner(1)
                m_far = 1
                while not eq(inner(m_far), fin):
                    m_far *= 2
                if eq(inner(0), fin):
                    m_star = 0
                else:
                    lo, hi = 0, m_far
                    while hi - lo > 1:
                        mid = (lo + hi) // 2
                        if eq(inner(mid), fin):
                            hi = mid
                        else:
                            lo = mid
                    m_star = hi
            finals[r][j] = fin
            if m_star > 0:
                last_bad = max(last_bad, tau + 2 * (m_star - 1) + r)
    period = 1 if all(_same(finals[0][j], finals[1][j]) for j in range(d)) else 2
    # direct scan below tau + 2 for violations of the final pattern
    for k in range(min(tau + 2, len(states))):
        r = (k - tau) % 2
        if any(not _same(states[k][j], finals[r][j] if period == 2 else finals[0][j]) for j in range(d)):
            last_bad = max(last_bad, k)
    mu = last_bad + 1
    fin_list = [finals[(mu - tau + r) % 2] if period == 2 else finals[0] for r in range(period)]
    return ProofConstantInput(mu, period, tau, fin_list, states[: direct_steps])


def _same(a, b) -> bool:
    return a == b and np.signbit(a) == np.signbit(b) or (np.isnan(a) and np.isnan(b))


def _add_special(spec, acc, c):
    """Track a sum that met inf / nan terms: returns a float (+inf, -inf or nan)."""
    vals = [x for x in (spec, c) if x is not None and not (isinstance(x, Fraction))]
    vals = [float(x) for x in vals if not np.isfinite(float(x))]
    if not vals:
        return None
    s = 0.0
    for v in vals:
        s = s + v
    return s


def _final_cast(S: Fraction, spec, dk: float, fl) -> float:
    if spec is not None or not np.isfinite(dk):
        sp = _add_special(spec, S, dk) if not np.isfinite(dk) else spec
        return fl(float(sp)) if sp is not None else fl(S + Fraction(dk))
    return fl(S + Fraction(dk))
