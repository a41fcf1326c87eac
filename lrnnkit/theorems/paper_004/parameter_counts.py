"""Paper 004, Sections 2.2.1-2.2.2: 004:section-2.2.parameter-counts.

See the package docstring (lrnnkit/theorems/paper_004/__init__.py) for the paper and conventions."""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..registry import CheckResult, entry


def cp_tensor(A: np.ndarray, B: np.ndarray, C: np.ndarray) -> np.ndarray:
    """T_ijk = sum_r A_ir B_jr C_kr (CP / PARAFAC, 004 Section 2.2.1)."""
    return np.einsum("ir,jr,kr->ijk", A, B, C)


def cp_transition(A, B, C, x) -> np.ndarray:
    """Eq. (4) as reconstructed: W(x) = A diag(C^T x) B^T."""
    return A @ np.diag(C.T @ x) @ B.T


def cp_effective_dims(H: int, D: int, R: int, seed: int = 0) -> int:
    """Rank of the Jacobian of (A, B, C) -> T at a random point: the dimension of the set of CP-rank-R tensors
    near it (float64; singular values below 1e-8 relative count as zero)."""
    rng = np.random.default_rng(seed)
    A, B, C = rng.standard_normal((H, R)), rng.standard_normal((H, R)), rng.standard_normal((D, R))
    cols = []
    for M in (A, B, C):
        for idx in np.ndindex(M.shape):
            E = np.zeros_like(M)
            E[idx] = 1.0
            args = [E if X is M else X for X in (A, B, C)]
            cols.append(cp_tensor(*args).ravel())   # T is linear in each factor: the partial derivative
    J = np.array(cols).T
    s = np.linalg.svd(J, compute_uv=False)
    return int((s > 1e-8 * s[0]).sum())


@entry("004:section-2.2.parameter-counts", perturb={"cp_count_offset": 1})
def check_parameter_counts(profile: str = "quick", cp_count_offset: int = 0) -> CheckResult:
    """``cp_count_offset`` (the perturbation 1) is added to the claimed CP count R(2H + D)."""
    rng = np.random.default_rng(9)
    for H in range(2, 9):
        for D in range(1, 5):
            for R in range(1, 5):
                A, B, C = rng.standard_normal((H, R)), rng.standard_normal((H, R)), rng.standard_normal((D, R))
                T = cp_tensor(A, B, C)
                x = rng.standard_normal(D)
                W = np.einsum("ijk,k->ij", T, x)
                if not np.allclose(W, cp_transition(A, B, C, x), rtol=1e-12, atol=1e-12):
                    return CheckResult("falsified", "eq. (4) differs from the CP tensor's transition",
                                       counterexample={"H": H, "D": D, "R": R})
                if A.size + B.size + C.size != R * (2 * H + D) + cp_count_offset or T.size != H * H * D:
                    return CheckResult("falsified", "CP count", counterexample={"H": H, "D": D, "R": R})
            for b in [b for b in range(1, H + 1) if H % b == 0]:
                blocks = [rng.standard_normal((b, b, D)) for _ in range(H // b)]
                n_block = sum(t.size for t in blocks)
                if n_block != H * b * D or Fraction(H * H * D, n_block) != Fraction(H, b):
                    return CheckResult("falsified", "block count", counterexample={"H": H, "D": D, "b": b})
    dims = {}
    cases = [(2, 1, 1), (3, 2, 1), (3, 2, 2), (4, 2, 2)] + ([(4, 3, 3), (5, 2, 3)] if profile == "deep" else [])
    for H, D, R in cases:
        dims[f"H={H},D={D},R={R}"] = (cp_effective_dims(H, D, R), R * (2 * H + D - 2))
        if dims[f"H={H},D={D},R={R}"][0] != R * (2 * H + D - 2):
            return CheckResult("open", f"CP degrees of freedom differ from R(2H + D - 2): {dims}", details=dims)
    return CheckResult("holds", "counts H^2 D, R(2H + D), H b D (ratio H/b) on every size checked; eq. (4) realizes "
                                f"the CP tensor; CP degrees of freedom R(2H + D - 2): {dims}", details=dims)

