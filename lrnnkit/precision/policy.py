"""Cast policies: where rounding happens when an LRNN layer (paper 000, eq. 1) runs in a number format.

One layer step is ``H_t = A(s_t) H_{t-1} + B(s_t)`` and its output ``y_t = argmax_j (W H_t + c)_j`` (``W[s_t]``,
``c[s_t]`` for per-symbol decoders). ``fl`` is the cast into the format with the chosen rounding
(:func:`lrnnkit.precision.cast.cast`). Under the policies ``op`` and ``matvec`` the *parameters* are stored in the
format: every entry of ``A`` (or of the GH factors' ``beta`` and key ``v``), ``B``, ``H_0``, ``W`` and ``c`` is
``fl(.)`` of the model's float64 value, once, before the run. ``H_0`` is then the first state.

Every ``fl(x + y)`` / ``fl(x - y)`` / ``fl(x * y)`` of two values of the format below is the exact rounding of the
exact result (IEEE 754's "correctly rounded" operations): a product of two values with at most 26 significand bits
is exact in float64; a sum is computed in float64 together with its exact error (TwoSum), which settles the cases
where rounding the float64 sum alone would differ (directed modes, ties). For formats wider than 26 significand bits
(custom ``e*m26`` and up, not fp64 itself) products are rounded to float64 first.

``op`` — after every elementary operation (what a scalar loop in the format computes):

* dense / block-diagonal / bilinear layers: ``(A H)_i = fl(... fl(fl(p_i0 + p_i1) + p_i2) ... + p_i,d-1)`` with
  ``p_ij = fl(a_ij h_j)`` (sum left to right, every partial sum rounded), then ``H'_i = fl((A H)_i + b_i)``;
* diagonal layers: ``H'_i = fl(fl(a_i h_i) + b_i)``;
* ``gh`` layers (as DeltaNet / DeltaProduct compute them, factor by factor; ``gh="factors"``): for each factor
  ``(beta, v)``, first to last: ``sigma = fl-dot(v, H)`` (as above), ``g = fl(beta sigma)``,
  ``H_i = fl(H_i - fl(g v_i))``; then ``H_i = fl(H_i + b_i)``. With ``gh="scaled"`` a factor stored exactly as
  ``(beta, u)`` uses the unnormalized key ``u`` and ``gamma = beta / (u^T u)`` instead of the unit ``v`` and ``beta``
  (``G = I - gamma u u^T``): exactly representable for keys like ``e_i - e_j`` (gamma = 1), the mitigation for
  keys that normalization makes irrational (``(e_i - e_j)/sqrt 2``). With ``gh="matrix"`` the stored product ``A``
  is used as a dense matrix;
* decoder: ``logit_j = fl(fl-dot(W_j, H) + c_j)``.

``matvec`` — after every matrix-vector product (GPU style: low-precision storage, wide accumulation): a
matrix-vector product is computed in float64 from the stored (rounded) operands and rounded once:
``H' = fl(fl(A H) + B)`` (dense, block, bilinear; diagonal: ``fl(fl(a_i h_i) + b_i)``), per GH factor
``H_i = fl(H_i - (beta v_i) sigma)`` with ``sigma = v^T H`` in float64, then ``H = fl(H + B)``; decoder
``logits = fl(fl(W H) + c)``; the additions of ``B`` and ``c`` are elementary operations on two rounded values. Products of two values of a format with at most 26
significand bits are exact in float64; the float64 sum of d of them is rounded once more before ``fl``, so this
policy is "accumulate in fp64, round to the format", the analogue of fp32 accumulation in tensor cores (a double
rounding relative to exact accumulation, visible only in rare ties).

``proof`` — the proof model of paper 000 (Appendix A.3; proof of Theorem 1 in Appendix B.1, after Merrill et al.
2024): the state at step ``k`` is *not* computed recursively but from the unrolled recursion,

    ``Ĥ_k = fl( sum_{i=1..k} fl(A(s_k) ... A(s_{i+1}) B(s_i)) + fl(A(s_k) ... A(s_1) H_0) )``,

where every product is computed exactly (infinite precision) from the layer's weights (their exact rational values
where the model stores them, else the float64 values as exact dyadic rationals), each term is cast, the sum of the
cast terms is computed exactly and cast once (the additive term ``B(s_i)`` enters the term with index ``i``; the
product over an empty range is ``I``). The paper's extraction prints the sum as ``sum_{i=1}^{k-1}`` with
``prod_{j=i+1}^{k-1}``, which drops ``B(x_k)`` and the last ``A``; we follow the consistent closed form of eq. (1)
(its own constant-input specialization ``sum_{i=0}^{k-1} A^i B + A^k H_0`` confirms it). Its decoder is arbitrary
in the paper; here the linear-argmax decoder is applied to ``Ĥ_k`` in float64. Each step costs O(k d^2) exact
operations; :mod:`lrnnkit.precision.simulate` caps its length.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..errors import InputError
from ..exact import Cyc
from ..model import Layer
from .cast import cast
from .formats import FloatFormat, get_format
from .rounding import canonical_rounding
from .cast import cast_exact, scalar_caster

__all__ = ["POLICIES", "canonical_policy", "Rounder", "LayerKernel", "ProofLayer"]

POLICIES = ("op", "matvec", "proof")
_ALIASES = {"op": "op", "elementary": "op", "every-op": "op", "per-op": "op", "scalar": "op",
            "matvec": "matvec", "mv": "matvec", "per-matvec": "matvec", "matrix-vector": "matvec",
            "proof": "proof", "paper": "proof", "000": "proof", "proof-model": "proof"}
GH_MODES = ("factors", "scaled", "matrix")


def canonical_policy(name: str) -> str:
    if not isinstance(name, str) or name.strip().lower() not in _ALIASES:
        raise InputError(f"unknown cast policy {name!r}: use one of {', '.join(POLICIES)}")
    return _ALIASES[name.strip().lower()]


class Rounder:
    """``fl``: the cast into one format with one rounding mode (a seeded generator for stochastic rounding)."""

    def __init__(self, fmt, rounding: str = "nearest-even", seed: int = 0):
        self.fmt: FloatFormat = get_format(fmt)
        self.rounding = canonical_rounding(rounding)
        self.rng = np.random.default_rng(seed)
        self.deterministic = self.rounding != "stochastic"

    def __call__(self, x):
        return cast(x, self.fmt, self.rounding, rng=self.rng)

    def add(self, a, b) -> np.ndarray:
        """``fl(a + b)`` for values ``a``, ``b`` of the format, rounded from the *exact* sum: the float64 sum ``s``
        and its exact error ``e`` (TwoSum, a + b = s + e) decide the rare cases where rounding ``s`` alone would
        differ (``s`` a representable value or a tie, with ``e != 0``; directed modes or precision > 25 bits).
        Stochastic rounding rounds ``s``."""
        a, b = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
        with np.errstate(invalid="ignore", over="ignore"):
            s = a + b
            r = np.array(self(s), dtype=np.float64)
            if not self.deterministic:
                return r
            bb = s - a
            e = (a - (s - bb)) + (b - bb)
            nz = (e != 0) & np.isfinite(s) & np.isfinite(e)
        if not nz.any():
            return r
        sv, ev, rv = s[nz], e[nz], r[nz]
        f = self.fmt
        if self.rounding in ("nearest-even", "nearest-away"):
            lo, hi = cast(sv, f, "toward-negative"), cast(sv, f, "toward-positive")
            tie = (lo != hi) & (sv == (lo + hi) * 0.5)
            rv = np.where(tie, np.where(ev > 0, hi, lo), rv)
        else:
            rep = cast(sv, f, "toward-zero") == sv
            if self.rounding == "to-odd":
                # the exact sum lies strictly between sv and its float64 neighbour toward e: the odd one of sv and
                # the format's next value that way (for m = 52 that neighbour is the next value itself)
                fix = rep
                nxt = np.where(ev > 0, np.nextafter(sv, np.inf), np.nextafter(sv, -np.inf))
                if f.man_bits >= 52:
                    odd = (np.abs(sv).view(np.uint64) & np.uint64(1)) == 1
                    alt = np.where(odd, sv, nxt)
                else:
                    alt = cast(nxt, f, self.rounding)
            elif self.rounding == "toward-positive":
                fix = rep & (ev > 0)
                alt = cast(np.nextafter(sv, np.inf), f, self.rounding)
            elif self.rounding == "toward-negative":
                fix = rep & (ev < 0)
                alt = cast(np.nextafter(sv, -np.inf), f, self.rounding)
            else:
                fix = rep & (ev * sv < 0)
                alt = cast(np.nextafter(sv, 0.0), f, self.rounding)
            rv = np.where(fix, alt, rv)
        r[nz] = rv
        return r


def scalar_adder(fmt, rounding: str):
    """The pure-Python counterpart of :meth:`Rounder.add` (same decisions, one pair of floats)."""
    import math
    c = scalar_caster(fmt, rounding)
    cu, cd, cz = (scalar_caster(fmt, m) for m in ("toward-positive", "toward-negative", "toward-zero"))
    mode = canonical_rounding(rounding)
    nextafter, isfinite, inf = math.nextafter, math.isfinite, math.inf
    fmt_m = get_format(fmt).man_bits
    import struct

    def add(a: float, b: float) -> float:
        s = a + b
        r = c(s)
        if not isfinite(s):
            return r
        bb = s - a
        e = (a - (s - bb)) + (b - bb)
        if e == 0 or not isfinite(e):
            return r
        if mode in ("nearest-even", "nearest-away"):
            lo, hi = cd(s), cu(s)
            if lo != hi and s == (lo + hi) * 0.5:
                return hi if e > 0 else lo
            return r
        if cz(s) != s:
            return r
        if mode == "to-odd":
            nxt = nextafter(s, inf if e > 0 else -inf)
            if fmt_m >= 52:
                return s if struct.unpack("<Q", struct.pack("<d", abs(s)))[0] & 1 else nxt
            return c(nxt)
        if mode == "toward-positive":
            return c(nextafter(s, inf)) if e > 0 else r
        if mode == "toward-negative":
            return c(nextafter(s, -inf)) if e < 0 else r
        return c(nextafter(s, 0.0)) if e * s < 0 else r
    return add


def _nan_to_neginf(z: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(z), -np.inf, z)


@dataclass
class LayerKernel:
    """One layer under the ``op`` or ``matvec`` policy: a numpy path vectorized over a batch of states ``H`` (B, d)
    and a pure-Python path for one state (``step1`` / ``decode1``, used by the memoized simulator), which perform the
    same float64 operations in the same order, so both give bit-identical results.

    ``renorm`` (a mitigation, not part of any paper's model): after every step rescale the state to the norm of
    ``H_0``: ``n = fl(sqrt(sum_j h_j^2))`` (under ``op`` every square and partial sum rounded), and if ``n > 0``,
    ``H_i = fl(H_i fl(|H_0| / n))``."""
    layer: Layer
    fl: Rounder
    policy: str
    gh: str = "factors"
    renorm: bool = False
    decoder_fp64: bool = False

    def __post_init__(self):
        L, fl = self.layer, self.fl
        if self.gh not in GH_MODES:
            raise InputError(f"unknown gh mode {self.gh!r}: use one of {', '.join(GH_MODES)}")
        if self.policy not in ("op", "matvec"):
            raise InputError(f"LayerKernel runs the op and matvec policies, not {self.policy!r}")
        self.d = L.width
        self.kind = L.kind
        self.H0 = fl(L.H0)
        self.r0 = float(fl(np.array([np.linalg.norm(self.H0)]))[0])
        self.B = fl(L.B_stack())                                     # (S, d)
        self.mode = "dense"
        if L.kind == "diagonal":
            diag = np.stack([t.diag if t.diag is not None else np.diag(t.A) for t in L.transitions])
            self.diag = fl(diag)                                     # (S, d)
            self.mode = "diag"
        elif L.kind == "gh" and self.gh != "matrix":
            self.mode = "gh"
            rnd = fl.rounding if fl.deterministic else "nearest-even"
            per_symbol = []
            for t in L.transitions:
                fs = []
                for f in t.factors:
                    if self.gh == "scaled" and f.u_exact is not None and f.beta_exact is not None \
                            and not isinstance(f.beta_exact, Cyc) and not any(isinstance(x, Cyc) for x in f.u_exact):
                        uu = sum((Fraction(x) * Fraction(x) for x in f.u_exact), Fraction(0))
                        gamma = Fraction(f.beta_exact) / uu
                        fs.append((cast_exact(gamma, fl.fmt, rnd),
                                   np.array([cast_exact(Fraction(x), fl.fmt, rnd) for x in f.u_exact])))
                    else:
                        fs.append((float(fl(np.array([f.beta]))[0]), fl(f.v)))
                per_symbol.append(fs)
            self.nf = max((len(fs) for fs in per_symbol), default=0)
            S = len(per_symbol)
            self.fcoef = np.zeros((S, self.nf))                      # padded with identity factors (coef 0)
            self.fkey = np.zeros((S, self.nf, self.d))
            for s, fs in enumerate(per_symbol):
                for k, (cf, key) in enumerate(fs):
                    self.fcoef[s, k] = cf
                    self.fkey[s, k] = key
        if self.mode == "dense":
            self.A = fl(L.A_stack())                                 # (S, d, d)
        D = L.decoder
        self.per_symbol = D.per_symbol
        # decoder_fp64 (a diagnostic): the decoder reads the rounded state with float64 weights and arithmetic
        self.W = D.W.copy() if self.decoder_fp64 else fl(D.W)
        self.c = D.c.copy() if self.decoder_fp64 else fl(D.c)
        self._lists()

    # ------------------------------------------------------------------ numpy (batch) path
    def _dot(self, M: np.ndarray, H: np.ndarray) -> np.ndarray:
        """Rows of M (B, n, d) times H (B, d): under ``op`` every product and partial sum rounded, under ``matvec``
        in float64; both left to right."""
        fl = self.fl
        if self.policy == "op":
            P = fl(M * H[:, None, :])
            acc = P[..., 0]
            for j in range(1, P.shape[-1]):
                acc = fl.add(acc, P[..., j])
            return acc
        acc = M[..., 0] * H[:, None, 0]
        for j in range(1, M.shape[-1]):
            acc = acc + M[..., j] * H[:, None, j]
        return acc

    @np.errstate(invalid="ignore", over="ignore")
    def step(self, H: np.ndarray, s: np.ndarray) -> np.ndarray:
        """The next states (B, d) for states H (B, d) and symbols s (B,)."""
        fl = self.fl
        op = self.policy == "op"
        if self.mode == "diag":
            H = fl.add(fl(self.diag[s] * H), self.B[s])
        elif self.mode == "gh":
            coef, key = self.fcoef[s], self.fkey[s]                  # (B, nf), (B, nf, d)
            for k in range(self.nf):
                v = key[:, k, :]
                g = coef[:, k]
                sig = self._dot(v[:, None, :], H)[:, 0]
                if op:
                    gg = fl(g * sig)
                    Hn = fl.add(H, -fl(gg[:, None] * v))
                else:
                    Hn = fl(H - (g[:, None] * v) * sig[:, None])
                H = np.where((g != 0)[:, None], Hn, H)
            H = fl.add(H, self.B[s])
        else:
            AH = self._dot(self.A[s], H)
            H = fl.add(AH if op else fl(AH), self.B[s])
        if self.renorm:
            H = self._renorm(H)
        return H

    def _renorm(self, H: np.ndarray) -> np.ndarray:
        fl = self.fl
        if self.policy == "op":
            sq = fl(H * H)
            acc = sq[:, 0]
            for j in range(1, self.d):
                acc = fl.add(acc, sq[:, j])
            n = fl(np.sqrt(acc))
        else:
            acc = H[:, 0] * H[:, 0]
            for j in range(1, self.d):
                acc = acc + H[:, j] * H[:, j]
            n = fl(np.sqrt(acc))
        ok = n > 0
        f = fl(self.r0 / np.where(ok, n, 1.0))
        return np.where(ok[:, None], fl(H * f[:, None]), H)

    @np.errstate(invalid="ignore", over="ignore")
    def logits(self, H: np.ndarray, s: np.ndarray) -> np.ndarray:
        fl = self.fl
        W = self.W[s] if self.per_symbol else np.broadcast_to(self.W, (H.shape[0],) + self.W.shape)
        c = self.c[s] if self.per_symbol else self.c
        if self.decoder_fp64:
            z = W[..., 0] * H[:, None, 0]
            for j in range(1, W.shape[-1]):
                z = z + W[..., j] * H[:, None, j]
            return z + c
        z = self._dot(W, H)
        return fl.add(z if self.policy == "op" else fl(z), c)

    def decode(self, H: np.ndarray, s: np.ndarray) -> np.ndarray:
        """argmax of the logits, first index on ties; NaN logits count as -inf."""
        return np.argmax(_nan_to_neginf(self.logits(H, s)), axis=-1)

    # ------------------------------------------------------------------ pure-Python (one state) path
    def _lists(self):
        if not self.fl.deterministic:
            self._c1 = None
            return
        self._c1 = scalar_caster(self.fl.fmt, self.fl.rounding)
        self._a1add = scalar_adder(self.fl.fmt, self.fl.rounding)
        self._B1 = self.B.tolist()
        if self.mode == "diag":
            self._a1 = self.diag.tolist()
        elif self.mode == "gh":
            self._f1 = [[(float(self.fcoef[s, k]), self.fkey[s, k].tolist()) for k in range(self.nf)
                         if self.fcoef[s, k] != 0] for s in range(self.fcoef.shape[0])]
        else:
            self._A1 = self.A.tolist()
        self._W1 = self.W.tolist()
        self._cc1 = self.c.tolist()

    def _dot1(self, row, h):
        c = self._c1
        if self.policy == "op":
            acc = c(row[0] * h[0])
            for j in range(1, len(h)):
                acc = self._a1add(acc, c(row[j] * h[j]))
            return acc
        acc = row[0] * h[0]
        for j in range(1, len(h)):
            acc = acc + row[j] * h[j]
        return acc

    def step1(self, h: list, s: int) -> list:
        c = self._c1
        op = self.policy == "op"
        b = self._B1[s]
        if self.mode == "diag":
            add = self._a1add
            h = [add(c(a * x), bb) for a, x, bb in zip(self._a1[s], h, b)]
        elif self.mode == "gh":
            for g, v in self._f1[s]:
                sig = self._dot1(v, h)
                if op:
                    gg = c(g * sig)
                    h = [self._a1add(x, -c(gg * vi)) for x, vi in zip(h, v)]
                else:
                    h = [c(x - (g * vi) * sig) for x, vi in zip(h, v)]
            h = [self._a1add(x, bb) for x, bb in zip(h, b)]
        else:
            A = self._A1[s]
            if op:
                h = [self._a1add(self._dot1(row, h), bb) for row, bb in zip(A, b)]
            else:
                h = [self._a1add(c(self._dot1(row, h)), bb) for row, bb in zip(A, b)]
        if self.renorm:
            h = self._renorm1(h)
        return h

    def _renorm1(self, h: list) -> list:
        import math
        c = self._c1
        if self.policy == "op":
            acc = c(h[0] * h[0])
            for x in h[1:]:
                acc = self._a1add(acc, c(x * x))
        else:
            acc = h[0] * h[0]
            for x in h[1:]:
                acc = acc + x * x
        n = c(math.sqrt(acc)) if acc == acc else acc
        if not n > 0:
            return h
        f = c(self.r0 / n)
        return [c(x * f) for x in h]

    def decode1(self, h: list, s: int) -> int:
        c = self._c1
        W = self._W1[s] if self.per_symbol else self._W1
        cc = self._cc1[s] if self.per_symbol else self._cc1
        best, arg = None, 0
        for j, (row, cj) in enumerate(zip(W, cc)):
            if self.decoder_fp64:
                z = row[0] * h[0]
                for k in range(1, len(h)):
                    z = z + row[k] * h[k]
                z = z + cj
            else:
                z = self._dot1(row, h)
                z = self._a1add(z if self.policy == "op" else c(z), cj)
            if z != z:
                z = -np.inf
            if best is None or z > best:
                best, arg = z, j
        return arg


class ProofLayer:
    """One layer under the ``proof`` policy for a single sequence (exact rational arithmetic, O(k d^2) per step).

    Keeps the exact terms ``T_i = A(s_k) ... A(s_{i+1}) B(s_i)`` and ``D = A(s_k) ... A(s_1) H_0`` and updates them
    by one multiplication with ``A(s_{k+1})`` per step."""

    def __init__(self, layer: Layer, fl: Rounder):
        self.layer, self.fl = layer, fl
        if not fl.deterministic:
            raise InputError("the proof policy needs a deterministic rounding mode (stochastic rounding of exact "
                             "values is not defined here)")
        self._cast = lambda q: cast_exact(q, fl.fmt, fl.rounding)
        d = layer.width
        self.d = d

        def rat(x, xf):
            if x is not None and not isinstance(x, Cyc):
                return Fraction(x)
            return Fraction(float(xf))  # the float64 weight, as the exact dyadic rational it is

        self.A = []
        self.B = []
        for t in layer.transitions:
            Ae = t.A_exact
            self.A.append([[rat(Ae[i][j] if Ae is not None else None, t.A[i, j]) for j in range(d)]
                           for i in range(d)])
            Be = t.B_exact
            self.B.append([rat(Be[i] if Be is not None else None, t.B[i]) for i in range(d)])
        He = layer.H0_exact
        self.D = [rat(He[i] if He is not None else None, layer.H0[i]) for i in range(d)]
        self.terms: list = []
        D = layer.decoder
        self.per_symbol = D.per_symbol
        self.W, self.c = D.W, D.c
        self.state = np.array([self._cast(x) for x in self.D])

    @staticmethod
    def _mv(A, x):
        return [sum((a * b for a, b in zip(row, x) if a and b), Fraction(0)) for row in A]

    def step(self, s: int) -> np.ndarray:
        A = self.A[s]
        self.terms = [self._mv(A, T) for T in self.terms]
        self.terms.append(list(self.B[s]))
        self.D = self._mv(A, self.D)
        out = np.empty(self.d)
        for i in range(self.d):
            total, pinf, ninf, nan = Fraction(0), False, False, False
            for T in self.terms + [self.D]:
                c = self._cast(T[i])
                if np.isnan(c):
                    nan = True
                elif c == np.inf:
                    pinf = True
                elif c == -np.inf:
                    ninf = True
                else:
                    total += Fraction(c)
            if nan or (pinf and ninf):
                out[i] = np.nan
            elif pinf or ninf:
                out[i] = self._cast(np.inf if pinf else -np.inf)
            else:
                out[i] = self._cast(total)
        self.state = out
        return out

    def decode(self, H: np.ndarray, s: int) -> int:
        W = self.W[s] if self.per_symbol else self.W
        c = self.c[s] if self.per_symbol else self.c
        z = _nan_to_neginf(W @ H + c)
        return int(np.argmax(z))
