"""Safe symbolic expressions for ``lrnnkit precision cast``: ``1/sqrt(2)``, ``2**-3``, ``pi/4``, ``exp(-1)``.

The text is parsed by Python's :mod:`ast` (``mode="eval"``: a single expression, nothing is executed) and the tree
is rebuilt node by node into a sympy expression from a whitelist: numbers (integers, and decimals read exactly from
their source text: ``0.1`` is 1/10, never the float64 nearest to it), the names ``pi`` and ``e``, the operators
``+ - * / **`` and unary ``+ -``, and calls of the functions in :data:`FUNCTIONS` with one positional argument.
Everything else (attributes, subscripts, other names, keywords, comparisons, ``^``) is refused with one line. No
``eval``, no sympy ``parse_expr`` (which evaluates generated code). Sizes are bounded: at most :data:`MAX_NODES`
tree nodes, and a power ``b**p`` needs a rational exponent ``p`` whose numerator is at most
:data:`MAX_POWER_EXPONENT` in size and, for a rational base, a result of at most :data:`MAX_POWER_BITS` bits.

:func:`exact_bracket` gives the exact value of a rational expression, or a pair of dyadic rationals around an
irrational one from sympy's ``evalf(strict=True)`` (which raises rather than returning fewer correct digits than
asked for), so that the caller can round both ends and stop when they agree.
"""
from __future__ import annotations

import ast
from fractions import Fraction

from ..errors import InputError, SizeLimitError

__all__ = ["parse_expression", "exact_bracket", "FUNCTIONS"]

FUNCTIONS = ("sqrt", "cbrt", "exp", "log", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
             "abs")
MAX_NODES = 200
MAX_POWER_EXPONENT = 4096
MAX_POWER_BITS = 10_000
# bounds on function arguments (|x|): exp(1e5) ~ 10^43429 is still a quick evaluation, exp(1e300) is not; trigonometric
# functions of large arguments need that many more bits for the argument reduction
MAX_GROWTH_ARG = 10 ** 5
MAX_TRIG_ARG = 2 ** 64


def _sympy_function(name: str):
    import sympy
    return {"abs": sympy.Abs}.get(name) or getattr(sympy, name)


def parse_expression(text: str):
    """The sympy expression of ``text`` (a real, finite number), or :class:`InputError` naming what is refused."""
    import sympy
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError):
        raise InputError(f"not an exact number or expression: {text!r} (give a decimal, p/q, inf, nan, or an "
                         "expression such as 1/sqrt(2), 2**-3, pi/4)") from None
    nodes = sum(1 for _ in ast.walk(tree))
    if nodes > MAX_NODES:
        raise SizeLimitError(f"expression {text[:40]!r}: {nodes} syntax nodes, at most {MAX_NODES}")

    def refuse(what: str):
        raise InputError(f"not an exact number or expression: {text!r}: {what} is not allowed (numbers, pi, e, "
                         f"+ - * / **, and {', '.join(FUNCTIONS)})")

    def build(node):
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                refuse(f"the constant {v!r}")
            if isinstance(v, int):
                return sympy.Integer(v)
            src = ast.get_source_segment(text.strip(), node) or repr(v)
            try:
                f = Fraction(src.replace("_", ""))
            except (ValueError, ZeroDivisionError):
                refuse(f"the number {src!r}")
            return sympy.Rational(f.numerator, f.denominator)
        if isinstance(node, ast.Name):
            consts = {"pi": sympy.pi, "e": sympy.E}
            if node.id not in consts:
                refuse(f"the name {node.id!r}")
            return consts[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            x = build(node.operand)
            return -x if isinstance(node.op, ast.USub) else x
        if isinstance(node, ast.BinOp):
            ops = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}
            op = ops.get(type(node.op))
            if op is None:
                refuse("the operator ^ (use **)" if isinstance(node.op, ast.BitXor) else
                       f"the operator {type(node.op).__name__}")
            a, b = build(node.left), build(node.right)
            if op == "+":
                return a + b
            if op == "-":
                return a - b
            if op == "*":
                return a * b
            if op == "/":
                if b == 0:
                    raise InputError(f"expression {text!r}: division by zero")
                return a / b
            return _power(text, a, b)
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
                name = node.func.id if isinstance(node.func, ast.Name) else type(node.func).__name__
                refuse(f"the function {name!r}")
            if len(node.args) != 1 or node.keywords:
                refuse(f"{node.func.id} with other than one positional argument")
            arg = build(node.args[0])
            name = node.func.id
            if name == "log" and arg == 0:
                raise InputError(f"expression {text!r}: log(0)")
            bound = MAX_GROWTH_ARG if name in ("exp", "sinh", "cosh") else \
                MAX_TRIG_ARG if name in ("sin", "cos", "tan") else None
            if bound is not None and not arg.is_Rational and abs(arg.evalf(15)) > bound or \
                    bound is not None and arg.is_Rational and abs(arg) > bound:
                raise SizeLimitError(f"expression {text!r}: {name} of an argument beyond +-{bound}")
            return _sympy_function(name)(arg)
        refuse(f"the syntax {type(node).__name__}")

    try:
        value = build(tree.body)
    except InputError:
        raise
    except (ValueError, OverflowError, TypeError, ArithmeticError) as exc:
        raise InputError(f"expression {text!r}: {exc}") from None
    if value.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo) or value.is_finite is False:
        raise InputError(f"expression {text!r}: not a finite number")
    if value.is_real is False or (value.is_real is None and not _real_numerically(value)):
        raise InputError(f"expression {text!r}: not a real number ({value})")
    return value


def _power(text: str, base, exponent):
    import sympy
    if exponent.is_Rational:
        p, q = int(exponent.p), int(exponent.q)
        if abs(p) > MAX_POWER_EXPONENT or q > MAX_POWER_EXPONENT:
            raise SizeLimitError(f"expression {text!r}: exponent {exponent} beyond +-{MAX_POWER_EXPONENT}")
        if base.is_Rational:
            if base == 0 and p < 0:
                raise InputError(f"expression {text!r}: division by zero")
            bits = (abs(int(base.p)).bit_length() + int(base.q).bit_length()) * abs(p) // q
            if bits > MAX_POWER_BITS:
                raise SizeLimitError(f"expression {text!r}: the power has about {bits} bits, at most "
                                     f"{MAX_POWER_BITS}")
    else:  # an irrational exponent: bounded numerically (2**pi is fine, 10**(10**9 * pi) is not)
        if exponent.is_real is False or abs(complex(exponent.evalf(20))) > MAX_POWER_EXPONENT:
            raise SizeLimitError(f"expression {text!r}: exponent {exponent} not a real number within "
                                 f"+-{MAX_POWER_EXPONENT}")
    return sympy.Pow(base, exponent)


def _real_numerically(value) -> bool:
    try:
        z = complex(value.evalf(30))
    except (TypeError, ValueError):
        return False
    return z.imag == 0


def exact_bracket(value, digits: int):
    """``(lo, hi)`` Fractions with ``lo <= value <= hi``: both the exact value for a rational ``value``; else the
    ``digits``-digit evaluation widened by ``10^(3 - digits)`` relative (``None`` when sympy cannot give that many
    correct digits, e.g. for an expression that equals 0 without simplifying to it)."""
    import sympy
    from sympy.core.evalf import PrecisionExhausted
    if value.is_Rational:
        f = Fraction(int(value.p), int(value.q))
        return f, f
    try:
        approx = value.evalf(digits, strict=True)
    except PrecisionExhausted:
        return None
    if not isinstance(approx, sympy.Float):
        return None
    sign, man, exp, _bc = approx._mpf_
    mid = Fraction(man) * Fraction(2) ** exp * (-1 if sign else 1)
    err = abs(mid) * Fraction(1, 10 ** (digits - 3))
    if err == 0:
        return None
    return mid - err, mid + err
