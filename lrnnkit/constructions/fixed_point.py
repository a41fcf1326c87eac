"""Dense LRNNs as the fixed point of diagonal ones (paper 003, Section 2, eqs. (1)-(4)), applied to the group
constructions of this package. Analysis only (no model is registered).

Paper 003: write the dense transition as ``A_t = Q_t^{-1} Lambda_t`` (Lambda_t diagonal, Q_t invertible); the
dense recurrence ``h_t = A_t h_{t-1} + B_t x_t`` (eq. (2)) is the fixed point in depth of the diagonal RNN
``f(x, h)_t = Lambda_t f_{t-1} + Q_t B_t x_t + (I - Q_t) h_t`` (eq. (3)), computed by the iteration (eq. (4))

    h^l_t = Lambda_t h^l_{t-1} + Q_t B_t x_t + (I - Q_t) h^{l-1}_t,      h^0 = 0.

:func:`fixed_point_iterate` runs eq. (4) over a whole sequence; :func:`direct_solve` runs eq. (2) (the fixed point
itself).

Convergence condition (ours; the paper's Theorem 2.1 gives a sufficient one for input-independent Lambda, Q). Stack
the sequence: one iteration is ``h^l = (I - Lambda S)^{-1} (c + (I - Q) h^{l-1})`` with S the shift, a block
lower-triangular map whose diagonal blocks are ``I - Q_t``. Its spectrum is the union of the spectra of the
``I - Q_t``, so the iteration converges for every input and start iff ``rho(I - Q_t) < 1`` for every token that
occurs. For a target letter matrix A and the scalar choice ``Lambda = lam I`` (``Q = lam A^{-1}``) the eigenvalues
of ``I - Q`` are ``1 - lam mu`` (mu the eigenvalues of ``A^{-1}``); some real lam gives ``|1 - lam mu| < 1`` for all
mu iff all mu lie in one open half-plane ``Re mu > 0`` (lam > 0 small) or ``Re mu < 0`` (lam < 0). For the group
constructions: a permutation matrix other than I has the eigenvalue 1 and an eigenvalue with ``Re <= -1/2`` (a
k-cycle's k-th roots of unity, -1 for k = 2), so NO scalar Lambda works for any non-trivial permutation letter
(000 Theorem 3, 001 S_n); a single reflection (eigenvalues 1, -1) never works either (000 Theorem 6, 001 Theorem 1
layer 2); a 2-D rotation by ``theta`` (eigenvalues ``e^{+-i theta}``, both with real part ``cos theta``) works iff
``cos theta != 0`` (lam of the sign of ``cos theta``; the Z_m construction's letter e converges iff
``cos(2 pi e / m) != 0``, i.e. all letters unless 4 | m and e = m/4 or 3m/4); the parity sign ``-1`` works with
lam in (-2, 0) and the identity with lam in (0, 2). The token-wise lam may differ (Lambda_t is input-dependent). A non-scalar diagonal Lambda does not rescue a transposition: ``I - diag(l1, l2) P`` has eigenvalues
``1 +- sqrt(l1 l2)``, never both inside the unit disc.
"""
from __future__ import annotations

import numpy as np

__all__ = ["fixed_point_iterate", "direct_solve", "scalar_lambda", "iteration_radius", "model_convergence"]


def fixed_point_iterate(Lams, Qs, Bx, iters: int, h0=None) -> list:
    """eq. (4): returns the list of iterates h^1..h^iters, each of shape (T, d). ``Lams``: (T, d) diagonals;
    ``Qs``: (T, d, d); ``Bx``: (T, d) = B_t x_t; ``h0``: initial state of the recurrence (default 0)."""
    Lams, Qs, Bx = np.asarray(Lams, float), np.asarray(Qs, float), np.asarray(Bx, float)
    T, d = Bx.shape
    prev = np.zeros((T, d))
    out = []
    start = np.zeros(d) if h0 is None else np.asarray(h0, float)
    for _ in range(iters):
        cur = np.empty((T, d))
        h = start
        for t in range(T):
            h = Lams[t] * h + Qs[t] @ Bx[t] + (np.eye(d) - Qs[t]) @ prev[t]
            cur[t] = h
        out.append(cur)
        prev = cur
    return out


def direct_solve(Lams, Qs, Bx, h0=None) -> np.ndarray:
    """eq. (2): ``h_t = Q_t^{-1} Lambda_t h_{t-1} + B_t x_t`` (the fixed point of eq. (4))."""
    Lams, Qs, Bx = np.asarray(Lams, float), np.asarray(Qs, float), np.asarray(Bx, float)
    T, d = Bx.shape
    h = np.zeros(d) if h0 is None else np.asarray(h0, float)
    out = np.empty((T, d))
    for t in range(T):
        h = np.linalg.solve(Qs[t], Lams[t] * h) + Bx[t]
        out[t] = h
    return out


def scalar_lambda(A) -> float | None:
    """A real lam with ``rho(I - lam A^{-1}) < 1`` (then ``Lambda = lam I``, ``Q = lam A^{-1}`` reproduce A), or None
    if none exists (the eigenvalues of A^{-1} are not in one open half-plane Re > 0 / Re < 0)."""
    mu = np.linalg.eigvals(np.linalg.inv(np.asarray(A, float)))
    re = mu.real
    tol = 1e-12
    if np.all(re > tol):
        return float(np.min(re / np.abs(mu) ** 2))          # any lam in (0, 2 min Re mu / |mu|^2)
    if np.all(re < -tol):
        return float(np.max(re / np.abs(mu) ** 2))
    return None


def iteration_radius(A, lam: float) -> float:
    """Spectral radius of ``I - lam A^{-1}`` (the depth iteration contracts iff < 1)."""
    A = np.asarray(A, float)
    return float(np.max(np.abs(np.linalg.eigvals(np.eye(len(A)) - lam * np.linalg.inv(A)))))


def model_convergence(model) -> dict:
    """For every layer: which symbols admit a scalar Lambda making the depth iteration converge to them."""
    out = []
    for i, L in enumerate(model.layers):
        ok = [scalar_lambda(t.A) is not None for t in L.transitions]
        out.append({"layer": i, "symbols": len(ok), "converging": int(sum(ok)),
                    "failing_symbols": [L.symbol_names[j] if L.symbol_names else j
                                        for j, v in enumerate(ok) if not v][:10]})
    return {"layers": out, "all_converge": all(x["converging"] == x["symbols"] for x in out)}
