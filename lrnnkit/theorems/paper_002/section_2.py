"""Paper 002: 002:claim-section-2.

See the package docstring (lrnnkit/theorems/paper_002/__init__.py) for the paper and conventions."""
from __future__ import annotations

import math
from fractions import Fraction as F

from ...precision.cast import cast_exact
from ..registry import CheckResult, entry
from ._common import CHARS
from .propositions import check_proposition_1, check_proposition_2


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
    """Shortest m such that the expressions ``"0" + "-0" * m`` and ``"1" + "-0" * m`` (values 0 and 1) reach the
    same state when the encoder runs in the number format ``fmt`` with paper 000's cast model (product x/4 exact then
    cast, sum cast; lrnnkit.precision.cast.cast_exact). None if no collapse up to m = 80."""
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


@entry("002:claim-section-2", perturb={"transitions": "dense"})
def check_claim_section_2(profile: str, transitions: str | None = None) -> CheckResult:
    """``transitions`` (the perturbation ``dense``) re-decides both propositions for that transition class."""
    kw = {} if transitions is None else {"transitions": transitions}
    props = {"002:proposition-1": check_proposition_1(profile, **kw),
             "002:proposition-2": check_proposition_2(profile, **kw)}
    if any(r.verdict != "holds" for r in props.values()):
        bad = {k: r.verdict for k, r in props.items()}
        return CheckResult("falsified", f"the propositions the claim rests on do not hold: {bad}",
                           counterexample={k: r.counterexample for k, r in props.items()})
    # the note: the readout reading (injective input-independent encoder) and its finite-precision collapse
    L = 7 if profile == "quick" else 10
    states = base4_states(L)
    seen: dict = {}
    for w, x in states.items():
        if base4_decode(x) != w:
            raise RuntimeError(f"002 section-2 note: base-4 encoding not injective at {w!r}")
        v = subtraction_value(w)
        if v is not None:
            if x in seen and seen[x] != v:
                raise RuntimeError("002 section-2 note: two expressions share a state with different values")
            seen[x] = v
    assert states["0-1"] == F(57, 16) and states["1-0"] == F(27, 16)
    consistent = states["0-0-1"] == states["0-1-0"]
    collapse = {fmt: base4_collapse_length(fmt) for fmt in ("fp32", "bf16")}
    return CheckResult("holds", f"Propositions 1 and 2 hold (the proofs' reading). Note: the readout-only reading "
                       f"fails exactly (injective encoder on all {len(states)} strings of length <= {L}, consistent: "
                       f"{consistent}) and collapses in finite precision ({collapse})",
                       details={"readout_encoder": {"A": "1/4", "Bu": {"0": "1", "-": "2", "1": "3"}, "z": "0"},
                                "finite_precision_collapse_m": collapse,
                                "meaning": "in format F the words 0(-0)^m and 1(-0)^m (values 0, 1) share a state"})
