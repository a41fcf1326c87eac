"""Finite precision: number formats, rounding, cast policies, the finite-precision executor, and the demos of the
impossibility theorems of paper 000 (Theorems 1-2) and of the collapse of exact constructions.

    from lrnnkit.precision import get_format, cast, cast_exact, collapse
    cast(x, "bf16", "nearest-even")              # numpy, vectorized, bit-exact
    cast_exact("0.1", "e5m7", "toward-zero")     # exact reference
    collapse(model, "fp8-e4m3-ieee", "matvec", 10_000).first_wrong_step
"""
from .cast import cast, cast_exact, cast_torch, exact_decimal, parse_exact_value, scalar_caster
from .commands import cli_cast, cli_collapse, cli_impossibility, collapse_text
from .formats import PRESETS, FloatFormat, format_names, get_format
from .policy import POLICIES, canonical_policy
from .rounding import ROUNDINGS, canonical_rounding
from .demos import impossibility_demo
from .simulate import CollapseResult, EventuallyPeriodic, Simulator, collapse


__all__ = ["FloatFormat", "get_format", "format_names", "PRESETS", "ROUNDINGS", "POLICIES", "canonical_rounding",
           "canonical_policy", "cast", "cast_torch", "cast_exact", "scalar_caster", "exact_decimal",
           "parse_exact_value", "Simulator", "EventuallyPeriodic", "CollapseResult", "collapse", "cli_cast",
           "cli_collapse", "cli_impossibility", "collapse_text", "impossibility_demo"]
