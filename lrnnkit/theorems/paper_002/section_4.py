"""Paper 002: 002:section-4.1.examples.

See the package docstring (lrnnkit/theorems/paper_002/__init__.py) for the paper and conventions."""
from __future__ import annotations

from ..registry import CheckResult, statement
from ._common import PAPER


# =========================================================================== Section 4.1 examples
def _mod_arith_value(expr: list, M: int) -> int:
    """Value of digits and operators with x binding tighter than + and - (no eval): sum of signed products."""
    total, sign, prod = 0, 1, int(expr[0])
    i = 1
    while i < len(expr):
        op, v = expr[i], int(expr[i + 1])
        if op == "*":
            prod *= v
        else:
            total += sign * prod
            sign, prod = (1 if op == "+" else -1), v
        i += 2
    return (total + sign * prod) % M


@statement(
    id="002:section-4.1.examples", paper=PAPER, perturb={"modulus": 6}, kind="claim",
    tests=["proofs_tests/test_theorems_B_002.py::test_mod_arith_precedence"],
    statement="Sum(5): input 0324 -> 4; EvenPair(5): input 0320 -> 1; ModArith(5): input 1+2-3x4 -> 1 "
              "(1 + 2 - 3 x 4 mod 5 = -9 mod 5 = 1).",
    hypotheses="Task definitions of Section 4.1.",
    conclusion="The printed outputs.",
    verdict="holds",
    evidence="Independent evaluators (sum mod M, first == last, precedence-aware modular arithmetic without eval) "
             "reproduce every printed output.")
def check_examples(profile: str, modulus: int = 5) -> CheckResult:
    ok = sum(map(int, "0324")) % modulus == 4
    ok &= int("0320"[0] == "0320"[-1]) == 1
    ok &= _mod_arith_value(["1", "+", "2", "-", "3", "*", "4"], modulus) == 1
    if not ok:
        return CheckResult("falsified", "an example disagrees", counterexample="see evaluators")
    return CheckResult("holds", "all printed examples reproduced")
