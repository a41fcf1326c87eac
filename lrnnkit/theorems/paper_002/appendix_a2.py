"""Paper 002: 002:appendix-A.2.1, 002:appendix-A.2.2, 002:section-3.cost.

See the package docstring (lrnnkit/theorems/paper_002/__init__.py) for the paper and conventions."""
from __future__ import annotations

from fractions import Fraction as F

import numpy as np

from ..registry import CheckResult, entry


# =========================================================================== Section 3.4 / Appendix A.2: PScan
def spt(x: np.ndarray):
    """Appendix A.2.1's ``spt`` exactly as printed (np.core.defchararray.add is np.char.add)."""
    assert len(x) % 2 == 1, "works when len(x) == 2**k -1 for k>=1"
    coef = x[::2]
    remain = x[1::2]
    coef_remain = np.char.add(coef[1:], remain[:, -1:])
    remain = np.concatenate([remain, coef_remain], axis=1)
    return coef, remain


def spt_rounds(seq_len: int) -> list:
    arr = np.array(["A" + str(i) for i in range(1, seq_len + 1)]).reshape(-1, 1)
    out = []
    for _ in range(int(np.ceil(np.log2(seq_len)))):
        coef, arr = spt(arr)
        out.append(coef.tolist())
    return out


PRINTED_SPT = [[["A1"], ["A3"], ["A5"], ["A7"]], [["A2", "A3A2"], ["A6", "A7A6"]],
               [["A4", "A5A4", "A6A5A4", "A7A6A5A4"]]]


@entry("002:appendix-A.2.1", perturb={"seq_len": 15})
def check_spt(profile: str, seq_len: int = 7) -> CheckResult:
    got = spt_rounds(seq_len)
    if got != PRINTED_SPT:
        return CheckResult("falsified", "spt output differs", counterexample=got)
    return CheckResult("holds", "spt output equals the printed one")


def pscan_printed(A: np.ndarray, u: np.ndarray, x0: np.ndarray) -> np.ndarray:
    """Appendix A.2.2's parallel scan, transcribed from the printed torch code to numpy object arrays (so it runs on
    Fractions): einsum('bncij,bnjk->bncik') and einsum('bncij,bnj->bnci') become batched matmuls. Returns the states
    x_0 .. x_{seq_len}, shape (bs, seq_len + 1, d)."""
    bs, seq_len, d, _ = A.shape
    log2_L = int(np.ceil(np.log2(seq_len + 1)))
    L = 2 ** log2_L
    n_zero = L - seq_len - 1
    zero = F(0)
    eu = np.concatenate([x0[:, None, :], u], axis=1)
    eu = np.concatenate([eu, np.full((bs, n_zero, d), zero, dtype=object)], axis=1)
    x = eu
    As = np.concatenate([A, np.full((bs, n_zero, d, d), zero, dtype=object)], axis=1)[:, :, None, :, :]
    for _ in range(log2_L):
        c = As.shape[2] * 2
        x = x.reshape(bs, L // c, c, d)
        x1, x2 = x[:, :, : c // 2], x[:, :, c // 2:]
        assert As.shape[1] % 2 == 1, "works when As.shape[1]== 2**k -1 for k>=1"
        coef = As[:, ::2]
        remain = As[:, 1::2]
        prodd = np.matmul(coef[:, 1:], remain[:, :, -1][:, :, None, :, :])
        remain = np.concatenate([remain, prodd], axis=2)
        x2 = x2 + np.matmul(coef, x1[:, :, -1][:, :, None, :, None])[..., 0]
        x = np.concatenate([x1, x2], axis=2)
        As = remain
    return x.reshape(bs, L, d)[:, : seq_len + 1, :]


def sequential(A: np.ndarray, u: np.ndarray, x0: np.ndarray) -> np.ndarray:
    bs, seq_len, d, _ = A.shape
    x = x0
    out = [x]
    for i in range(seq_len):
        x = np.matmul(A[:, i], x[:, :, None])[..., 0] + u[:, i]
        out.append(x)
    return np.stack(out, axis=1)


@entry("002:appendix-A.2.2", perturb={"transpose_reference": True})
def check_pscan(profile: str, transpose_reference: bool = False) -> CheckResult:
    rng = np.random.default_rng(5)
    top = 24 if profile == "quick" else 70
    for seq_len in range(1, top + 1):
        d = int(rng.integers(1, 4))
        bs = 2
        A = np.empty((bs, seq_len, d, d), dtype=object)
        u = np.empty((bs, seq_len, d), dtype=object)
        x0 = np.empty((bs, d), dtype=object)
        for idx in np.ndindex(A.shape):
            A[idx] = F(int(rng.integers(-3, 4)), int(rng.integers(1, 4)))
        for idx in np.ndindex(u.shape):
            u[idx] = F(int(rng.integers(-3, 4)), int(rng.integers(1, 4)))
        for idx in np.ndindex(x0.shape):
            x0[idx] = F(int(rng.integers(-3, 4)))
        a, b = pscan_printed(A, u, x0), sequential(A.transpose(0, 1, 3, 2) if transpose_reference else A, u, x0)
        if a.shape != b.shape or not np.all(a == b):
            return CheckResult("falsified", f"PScan differs from Sequential at seq_len {seq_len}",
                               counterexample={"seq_len": seq_len, "d": d})
    return CheckResult("holds", f"exact agreement for seq_len 1..{top}")


def pscan_matmul_counts(seq_len: int) -> list:
    """Per round of the printed parallel scan (the loop of :func:`pscan_printed`, same shapes, no arithmetic): the
    number of b x b matrix-matrix products ``np.matmul(coef[:, 1:], remain[...])`` performs. Each round's products
    are independent of each other (one batched matmul)."""
    log2_L = int(np.ceil(np.log2(seq_len + 1)))
    L = 2 ** log2_L
    As = np.zeros((1, L - 1, 1, 1, 1))            # (bs, seq_len + n_zero, 1, d, d) with d = 1: shapes only
    counts = []
    for _ in range(log2_L):
        coef, remain = As[:, ::2], As[:, 1::2]
        prodd = np.matmul(coef[:, 1:], remain[:, :, -1][:, :, None, :, :])
        counts.append(int(np.prod(prodd.shape[1:3])))
        As = np.concatenate([remain, prodd], axis=2)
    return counts


@entry("002:section-3.cost", perturb={"offset": 1})
def check_cost(profile: str = "quick", offset: int = 0) -> CheckResult:
    kmax = 10 if profile == "quick" else 13
    rows = {}
    for k in range(2, kmax + 1):
        T = 2 ** k - 1
        counts = pscan_matmul_counts(T)
        rows[T] = (len(counts), sum(counts), max(counts))
        if len(counts) != k or sum(counts) != (k - 2) * 2 ** (k - 1) + 1 + offset or max(counts) > (T + 1) // 2:
            return CheckResult("falsified", f"T = {T}: {len(counts)} rounds, {sum(counts)} products",
                               counterexample={"T": T, "per_round": counts})
    if any((b ** 3) * h != (b * h) * b ** 2 for b in range(1, 9) for h in range(1, 9)):
        return CheckResult("falsified", "b^3 h != (bh) b^2")
    return CheckResult("holds", f"rounds = log2(T + 1) for T = 3..{2 ** kmax - 1}; total products "
                                f"(k - 2) 2^(k-1) + 1 = Theta(T log T) (work), depth log T",
                       details={str(T): {"rounds": r, "products": s, "widest_round": m} for T, (r, s, m) in
                                rows.items()})
