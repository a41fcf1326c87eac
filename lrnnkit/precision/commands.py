"""The functions behind ``lrnnkit precision cast | collapse | impossibility`` (the command line calls these; they
return JSON-able dicts and raise :class:`lrnnkit.errors.InputError` on bad input)."""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..errors import InputError
from .cast import cast_exact, exact_decimal, parse_exact_value
from .formats import get_format
from .rounding import canonical_rounding
from ..errors import SizeLimitError
from .. import limits
from .demos import impossibility_demo
from .simulate import DEFAULT_COLLAPSE_STEPS, collapse

__all__ = ["cli_cast", "cli_collapse", "cli_impossibility", "collapse_text", "cast_argv"]

_CAST_OPTIONS = {"--format": True, "--rounding": True, "--seed": True, "--json": False, "--help": False}


def cast_argv(argv: list) -> list:
    """``lrnnkit precision cast`` arguments reordered so that argparse reads every value as a value: the options
    first, then ``--``, then the values in their order. A value may start with ``-`` (``-3.5``, ``-1/3``, ``-inf``,
    ``-pi/4``) and stand anywhere, before or after ``--`` (which is dropped); an option is a known option name or a
    unique prefix of one (``--format X``, ``--format=X``, ``-h``), and any other word starting with ``--`` before
    ``--`` stays an option so that argparse names it; after ``--`` such a word is a value (``-- --1`` casts
    ``--1``). Other command lines come back unchanged."""
    argv = list(argv)
    if len(argv) < 2 or argv[0] != "precision" or argv[1] != "cast":
        return argv
    opts, values = [], []
    after = False       # past "--": a word starting with "--" that names no option is a value
    i = 2
    while i < len(argv):
        tok = argv[i]
        i += 1
        if tok == "--":
            after = True
            continue
        if tok in ("-h",):
            opts.append(tok)
            continue
        if tok.startswith("--"):
            name = tok.split("=", 1)[0]
            hits = [o for o in _CAST_OPTIONS if o.startswith(name)]
            if after and len(hits) != 1:
                values.append(tok)
                continue
            opts.append(tok)
            if len(hits) == 1 and _CAST_OPTIONS[hits[0]] and "=" not in tok and i < len(argv):
                opts[-1] = f"{tok}={argv[i]}"     # joined: a value such as "-inf" (toward-negative) stays a value
                i += 1
            continue
        values.append(tok)
    return argv[:2] + opts + (["--"] + values if values else [])


def cli_cast(values: list, fmt: str, rounding: str = "nearest-even", seed: int = 0) -> dict:
    """Exact rounding of each value (decimal, p/q, inf, nan, -0, cos(2*pi*k/m), sin(2*pi/m), or a symbolic
    expression such as 1/sqrt(2), 2**-3, pi/4: :mod:`lrnnkit.precision.expr`) into ``fmt``.
    ``outputs`` are exact decimal strings of the results. Stochastic rounding draws u in [0, 1) (53 random bits,
    seeded) per value and rounds away from zero iff u < the fractional distance."""
    f = get_format(fmt)
    mode = canonical_rounding(rounding)
    if not values:
        raise InputError("precision cast: give at least one value")
    if len(values) > limits.MAX_CAST_VALUES:
        raise SizeLimitError(f"precision cast: {len(values)} values, at most {limits.MAX_CAST_VALUES} "
                             "(lrnnkit.limits.MAX_CAST_VALUES)")
    rng = np.random.default_rng(seed)
    outs = []
    for v in values:
        x = parse_exact_value(str(v))
        u = Fraction(int(rng.integers(0, 2 ** 53)), 2 ** 53) if mode == "stochastic" else None
        outs.append(exact_decimal(cast_exact(x, f, mode, u)))
    res = {"inputs": [str(v) for v in values], "outputs": outs, "format": f.label, "rounding": mode,
           "format_info": f.describe()}
    if mode == "stochastic":
        res["seed"] = seed
    return res


def cli_collapse(model, fmt: str, policy: str = "matvec", steps: int = DEFAULT_COLLAPSE_STEPS,
                 rounding: str = "nearest-even", **options) -> dict:
    """First step at which ``model`` run in ``fmt`` under ``policy`` disagrees with its automaton (provenance), on a
    seeded random word of ``steps`` symbols (one-letter alphabets: the periodic word, exact for all lengths), with
    the period information of the run."""
    return collapse(model, fmt, policy, steps, rounding, **options).to_json()


def collapse_text(res: dict) -> str:
    """One line for ``lrnnkit precision collapse`` without ``--json``, saying the same as the JSON: a verdict for
    every length when the run was found eventually periodic, else for the steps actually run."""
    head = f"{res['format']} / {res['policy']} / {res['rounding']}: "
    fw = res.get("first_wrong_step")
    if fw is not None:
        return head + f"first wrong output at step {fw} ({res['input']})"
    if res.get("exact_for_all_lengths"):
        per = f"pre-period {res.get('pre_period')}, period {res.get('period')}"
        return head + f"no wrong output at any input length (the run is eventually periodic: {per}; {res['input']})"
    return head + f"no wrong output within {res['steps']} steps ({res['input']})"


def cli_impossibility(out_dir: str | None = None, formats=None, cap: int = 5_000) -> dict:
    """``lrnnkit precision impossibility``: the Theorem 1 and Theorem 2 demos of paper 000 (plots in out_dir)."""
    return impossibility_demo(out_dir, formats, cap)
