"""Paper 002: 002:appendix-A.2.1, 002:appendix-A.2.2.

See the package docstring (lrnnkit/theorems/paper_002/__init__.py) for the paper and conventions."""
from __future__ import annotations

from fractions import Fraction as F

import numpy as np

from ..registry import CheckResult, statement
from ._common import PAPER


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


@statement(
    id="002:appendix-A.2.1", paper=PAPER, perturb={"seq_len": 15}, kind="claim",
    tests=["proofs_tests/test_theorems_B_002.py::test_pscan_round_count"],
    statement="The function spt() generates the intermediate matrices of PScan: for a length-8 generation the first "
              "step requires [A1, A3, A5, A7], the second [A2, A3A2, A6, A7A6], the third [A4, A5A4, A6A5A4, "
              "A7A6A5A4] (Section 3.4 and the printed output of Appendix A.2.1).",
    hypotheses="seq_len = 2^3 - 1 = 7.",
    conclusion="The printed output.",
    verdict="holds",
    evidence="The printed code, run verbatim (np.char.add for the deprecated np.core.defchararray.add), prints "
             "exactly the listed matrices.")
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


@statement(
    id="002:appendix-A.2.2", paper=PAPER, perturb={"transpose_reference": True}, kind="claim",
    tests=["proofs_tests/test_theorems_B_002.py::test_pscan_reproduces_printed_output"],
    statement="PScan is equivalent to Sequential: the printed parallel-scan code generates the same states "
              "x_0..x_T of x_k = A_k x_{k-1} + u_k as the sequential loop (shown for seq_len = 7), in "
              "ceil(log2 L) steps for a length-L generation; e.g. x_3 = A3 A2 (A1 u0 + u1) + (A3 u2 + u3).",
    hypotheses="Any seq_len (the code zero-pads to 2^k - 1), any square A_k.",
    conclusion="Identical outputs.",
    verdict="holds",
    evidence="The printed algorithm run on exact rationals (numpy object arrays of Fractions) agrees exactly with the "
             "sequential recurrence for every seq_len in 1..24 (quick; 1..70 deep), batch 2, d in {1, 2, 3}; the "
             "number of rounds is ceil(log2(seq_len + 1)).")
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


@statement(
    id="002:section-3.cost", paper=PAPER, perturb={"offset": 1}, kind="claim",
    statement="(Section 3.3) The computational complexity of our model is O(b^3 h log(T)), where b, h, and T are the "
              "block size, number of blocks, and sequence length. With the embedding dimension held fixed as bh, the "
              "complexity scales quadratically w.r.t the block size.",
    hypotheses="The parallel scan of Appendix A.2.2 (as printed); 'complexity' read as parallel time with the "
               "sequence positions processed in parallel (the only reading under which log T appears).",
    conclusion="The printed scan takes ceil(log2(T + 1)) rounds, each a batch of independent b x b matrix products "
               "(cost b^3 each, per block: b^3 h per round with the positions in parallel); b^3 h = (bh) b^2.",
    verdict="holds",
    evidence="Counted on the printed scan's own loop (shapes of every np.matmul, T = 2^k - 1 for k = 2..10): "
             "rounds = k = log2(T + 1), every round one batched (independent) product. Note on total work: the "
             "rounds hold (k - 2) 2^{k-1} + 1 products in all, Theta(T log T) (e.g. 769 for T = 255), so as a "
             "sequential operation count the cost is Theta(b^3 h T log T), above the O(b^2 h T) of the sequential "
             "recurrence; the paper's O(b^3 h log T) is the parallel depth. Correctness of the scan itself is "
             "002:appendix-A.2.2.",
    notes="002, Section 3.3 and Appendix A.2.")
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
