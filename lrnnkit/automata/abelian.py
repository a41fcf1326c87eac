"""Invariant factors of a finite abelian group (used by :mod:`.embeddings` for Johnson's minimal degree and by
:mod:`.groups` to name abelian groups). A leaf below both, so that data flows one way: ``finite_group`` ->
``abelian`` -> ``embeddings`` -> ``groups``.
"""
from __future__ import annotations

import math

from ..errors import InputError
from .finite_group import FiniteGroup

__all__ = ["abelian_invariants", "prime_divisors"]


def abelian_invariants(G: FiniteGroup) -> list[int]:
    """Invariant factors ``[d_1, ..., d_r]`` (``d_i | d_{i+1}``, all > 1) of an abelian group, from the counts of
    elements of each prime-power order (``#{x : x^{p^k} = 1}`` = ``prod_i p^{min(k, e_i)}``)."""
    if not G.is_abelian:
        raise InputError("abelian_invariants needs an abelian group")
    orders = G.element_orders
    N = G.order
    primary = []
    for p in prime_divisors(N):
        # exponents e_i of the p-part: n_k = log_p #{x : x^(p^k) = 1} = sum_i min(k, e_i)
        n = [0]
        k = 1
        while True:
            cnt = int(sum(1 for o in orders.tolist() if (p ** k) % o == 0))
            n.append(round(math.log(cnt, p)))
            if n[-1] == n[-2]:
                break
            k += 1
        # number of e_i >= k is n_k - n_{k-1}
        ge = [n[k] - n[k - 1] for k in range(1, len(n))]
        exps = []
        for k in range(len(ge)):
            cnt_eq = ge[k] - (ge[k + 1] if k + 1 < len(ge) else 0)
            exps += [k + 1] * cnt_eq
        primary.append(sorted((p ** e for e in exps), reverse=True))
    r = max((len(x) for x in primary), default=0)
    inv = []
    for i in range(r):
        d = 1
        for x in primary:
            if i < len(x):
                d *= x[i]
        inv.append(d)
    return sorted(inv)


def prime_divisors(N: int) -> list[int]:
    """The distinct primes dividing N, increasing."""
    out, p = [], 2
    while N > 1:
        if N % p == 0:
            out.append(p)
            while N % p == 0:
                N //= p
        p += 1
    return out
