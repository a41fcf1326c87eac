"""Paper 002: 002:section-4.1.examples.

See the package docstring (lrnnkit/theorems/paper_002/__init__.py) for the paper and conventions."""
from __future__ import annotations

from ..registry import CheckResult, entry


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


@entry("002:section-4.1.examples", perturb={"modulus": 6})
def check_examples(profile: str, modulus: int = 5) -> CheckResult:
    ok = sum(map(int, "0324")) % modulus == 4
    ok &= int("0320"[0] == "0320"[-1]) == 1
    ok &= _mod_arith_value(["1", "+", "2", "-", "3", "*", "4"], modulus) == 1
    if not ok:
        return CheckResult("falsified", "an example disagrees", counterexample="see evaluators")
    return CheckResult("holds", "all printed examples reproduced")
