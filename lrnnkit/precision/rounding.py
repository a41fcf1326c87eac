"""Rounding modes.

Every mode rounds the exact value ``x`` to a member of the format (``lrnnkit.precision.formats``). Let ``lo <= x <=
hi`` be the two neighbours of ``x`` in the format's grid extended with unbounded exponent (``lo = hi = x`` when ``x``
is representable):

* ``nearest-even`` (IEEE roundTiesToEven): the nearer of ``lo``, ``hi``; on a tie the one with an even integer
  significand on the tie's grid: writing ``lo = t 2^q`` with ``t`` the (m+1)-bit integer significand (or the
  subnormal one), the tie goes up iff ``t`` is odd. For ``m >= 1`` this is the even last mantissa bit. For formats
  with no mantissa bits (``m = 0``, values ``2^E``; IEEE 754 does not define ties at precision 1) ``t = 1`` in the
  normal range, so a tie between ``2^E`` and ``2^(E+1)`` goes UP in magnitude, and a tie between 0 and ``2^emin``
  (no subnormals) goes to 0. This is what mpmath's round-half-even at precision 1 and ml_dtypes' float8_e8m0fnu do
  (3 -> 4, 1.5 -> 2, 0.75 -> 1); both are tested. (An earlier version picked the even *encoding*, i.e. the even
  biased exponent; a hypothesis run against mpmath found the disagreement: e2m0, 3 -> 2 instead of 4.)
* ``nearest-away`` (IEEE 754 roundTiesToAway): the nearer of ``lo``, ``hi``; on a tie the one of larger magnitude;
* ``to-odd`` (round to odd, "von Neumann rounding" / jamming): ``x`` when representable, else the one of ``lo``,
  ``hi`` whose integer significand ``t`` (as above) is odd (the last mantissa bit set; without subnormals, between 0
  and ``2^emin`` the grid is ``2^emin`` and the odd one is ``2^emin``). A value rounded to odd at precision
  ``p + 2`` or more and then to nearest at precision ``p`` gives the correct nearest rounding (Boldo and Melquiond
  2008), the use of this mode. Its overflow goes to ``±max`` (like truncation, it never creates an infinity);
* ``toward-zero`` (truncation), ``toward-positive`` (ceiling), ``toward-negative`` (floor);
* ``stochastic``: ``hi`` with probability ``(|x| - |lo|) / (|hi| - |lo|)`` in magnitude (the magnitude is rounded
  away from zero with probability equal to the fractional distance to the truncated neighbour, so the rounding is
  unbiased: ``E[round(x)] = x`` away from overflow), otherwise the truncated neighbour. The probability is realised
  by comparing a uniform ``u in [0, 1)`` (multiples of 2^-53, from a seeded ``numpy.random.Generator``) with the
  fractional distance computed exactly in float64: ``u < frac``.

Overflow (the rounded magnitude exceeds the format's max) follows IEEE 754 section 7.4: modes whose direction
points away from zero for this sign (nearest-even, nearest-away, stochastic, toward-positive for x > 0,
toward-negative for x < 0) give the format's overflow value (inf / NaN / max, see ``formats``); the others
(toward-zero, to-odd, and the directed mode toward the other side) give ``±max``.

pychop's ``Chop(rmode=...)`` numbers these 1 nearest-even, 2 toward-positive, 3 toward-negative, 4 toward-zero,
5 stochastic (proportional), 8 nearest-away, 9 to-odd (6, 7 and 10 are equal-probability stochastic, ties toward
zero, and CADNA's random directed rounding, which lrnnkit does not offer).
"""
from __future__ import annotations

from ..errors import InputError

__all__ = ["ROUNDINGS", "canonical_rounding"]

ROUNDINGS = ("nearest-even", "nearest-away", "toward-zero", "toward-positive", "toward-negative", "to-odd",
             "stochastic")

_ALIASES = {
    "nearest-even": "nearest-even", "nearest": "nearest-even", "rne": "nearest-even", "rn": "nearest-even",
    "round-nearest-even": "nearest-even", "ties-to-even": "nearest-even",
    "toward-zero": "toward-zero", "rtz": "toward-zero", "rz": "toward-zero", "truncate": "toward-zero",
    "zero": "toward-zero",
    "toward-positive": "toward-positive", "up": "toward-positive", "ru": "toward-positive",
    "toward+inf": "toward-positive", "ceil": "toward-positive", "+inf": "toward-positive",
    "toward-negative": "toward-negative", "down": "toward-negative", "rd": "toward-negative",
    "toward-inf": "toward-negative", "toward--inf": "toward-negative", "floor": "toward-negative",
    "-inf": "toward-negative",
    "stochastic": "stochastic", "sr": "stochastic",
    "nearest-away": "nearest-away", "ties-away": "nearest-away", "ties-to-away": "nearest-away",
    "rna": "nearest-away", "round-nearest-away": "nearest-away",
    "to-odd": "to-odd", "odd": "to-odd", "round-to-odd": "to-odd", "rto": "to-odd", "ro": "to-odd",
}


def canonical_rounding(name: str) -> str:
    """The canonical name of a rounding mode (accepts the aliases rne, rtz, ru, rd, sr, up, down, ...)."""
    if not isinstance(name, str) or name.strip().lower() not in _ALIASES:
        raise InputError(f"unknown rounding mode {name!r}: use one of {', '.join(ROUNDINGS)}")
    return _ALIASES[name.strip().lower()]
