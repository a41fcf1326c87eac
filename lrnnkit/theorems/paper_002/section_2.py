"""Paper 002: 002:claim-section-2.

See the package docstring (lrnnkit/theorems/paper_002/__init__.py) for the paper and conventions."""
from __future__ import annotations

import math
from fractions import Fraction as F

from ..registry import CheckResult, statement
from ._common import CHARS, PAPER


# =========================================================================== Section 2 claim, non-linear readout
def base4_states(max_len: int) -> dict:
    """All strings over {0, -, 1} of length <= max_len -> the state of the scalar input-independent LRNN
    x_k = x_{k-1} / 4 + c(s_k) with codes c(0) = 1, c(-) = 2, c(1) = 3 and x_0 = 0 (exact)."""
    code = {"0": F(1), "-": F(2), "1": F(3)}
    out = {"": F(0)}
    frontier = [""]
    for _ in range(max_len):
        nxt = []
        for w in frontier:
            for c in CHARS:
                out[w + c] = out[w] / 4 + code[c]
                nxt.append(w + c)
        frontier = nxt
    return out


def base4_decode(x: F) -> str:
    """Inverse of the encoding: the last character is floor(x) (since 0 <= x_{k-1}/4 < 1), then x_{k-1} =
    4 (x - floor(x)). Terminates at x = 0 (the empty string)."""
    inv = {1: "0", 2: "-", 3: "1"}
    s = []
    while x != 0:
        k = math.floor(x)
        if k not in inv:
            raise ValueError(f"not a state of the encoder: {x}")
        s.append(inv[k])
        x = 4 * (x - k)
    return "".join(reversed(s))


def base4_collapse_length(fmt: str) -> int | None:
    """Shortest m such that the expressions "0" + "-0"*m and "1" + "-0"*m (values 0 and 1) reach the same state when
    the encoder runs in the number format ``fmt`` with paper 000's cast model (product x/4 exact then cast, sum cast;
    lrnnkit.precision.cast.cast_exact). None if the precision module is unavailable or no collapse up to m = 80."""
    try:
        from ...precision.cast import cast_exact
    except ImportError:  # the precision module is another engineer's; the verdict does not depend on it
        return None
    code = {"0": F(1), "-": F(2), "1": F(3)}

    def run(word):
        x = F(0)
        for c in word:
            x = F(cast_exact(F(cast_exact(x / 4, fmt)) + code[c], fmt))
        return x
    for m in range(1, 81):
        if run("0" + "-0" * m) == run("1" + "-0" * m):
            return m
    return None


def subtraction_value(w: str) -> int | None:
    """Value of a well-formed expression digit (- digit)*, else None."""
    if len(w) % 2 == 0 or any((c in "01") != (i % 2 == 0) for i, c in enumerate(w)):
        return None
    digits = [int(c) for c in w[::2]]
    return digits[0] - sum(digits[1:])


@statement(
    id="002:claim-section-2", paper=PAPER, kind="claim",
    tests=["proofs_tests/test_theorems_B_002.py::test_base4_encoding_is_injective",
           "proofs_tests/test_theorems_B_002.py::test_subtraction_value"],
    statement="'In this section, we theoretically show that most LRNNs are unable to represent arithmetic operations' "
              "... 'such an input-independent matrix A cannot represent subtraction' (Section 2.1), for the LRNN of "
              "eq. (1) whose readout y_k = h(x_k) 'may or may not be a linear operation'.",
    hypotheses="Input-independent LRNN x_k = A x_{k-1} + B u_k with an arbitrary readout function h.",
    conclusion="No such LRNN outputs the value of every subtraction expression over {0, 1, -}.",
    verdict="falsified",
    evidence="Counterexample (exact): scalar state, A = 1/4, B u_0 = 1, B u_- = 2, B u_1 = 3, z = 0. The state "
             "x_k = x_{k-1}/4 + c_k is injective on strings (the last symbol is floor(x_k) because 0 <= x_{k-1}/4 < "
             "1), "
             "so h = value o decode is a well-defined readout; checked exhaustively on all strings of length <= 9 "
             "(decode(x_w) = w, and equal states never carry different values). Proposition 1 is about states being "
             "equal, not about what a readout can compute; the claim holds for linear readouts of states that "
             "must coincide, and in finite precision: run in fp32 with paper 000's cast model the encoder maps "
             "0(-0)^m and 1(-0)^m (values 0 and 1) to the same state from m = 7 on (bf16: m = 3), cf. paper 000.",
    counterexample={"A": "1/4", "Bu": {"0": "1", "-": "2", "1": "3"}, "z": "0",
                    "h": "h(x) = value of the expression decode(x); decode: last char = floor(x), "
                         "x <- 4 (x - floor(x))",
                    "example": {"0-1": "x = 3 + 2/4 + 1/16 = 57/16 -> -1", "1-0": "x = 1 + 2/4 + 3/16 = 27/16 -> 1"}},
    notes="Reading of 'represent' with eq. 1's readout h; under the proofs' state-level reading the statement is "
          "002:proposition-1 (holds).")
def check_claim_section_2(profile: str) -> CheckResult:
    L = 7 if profile == "quick" else 10
    states = base4_states(L)
    seen: dict = {}
    for w, x in states.items():
        if base4_decode(x) != w:
            return CheckResult("holds", f"encoding not injective at {w!r}")
        v = subtraction_value(w)
        if v is not None:
            if x in seen and seen[x] != v:
                return CheckResult("holds", "two expressions share a state with different values")
            seen[x] = v
    assert states["0-1"] == F(57, 16) and states["1-0"] == F(27, 16)
    collapse = {fmt: base4_collapse_length(fmt) for fmt in ("fp32", "bf16")}
    return CheckResult("falsified", f"exact injective input-independent encoding verified on all {len(states)} strings "
                       f"of length <= {L}; readout h = value o decode computes subtraction",
                       counterexample={"A": "1/4", "Bu": {"0": "1", "-": "2", "1": "3"}, "z": "0"},
                       details={"finite_precision_collapse_m": collapse,
                                "meaning": "in format F the words 0(-0)^m and 1(-0)^m (values 0, 1) share a state"})
