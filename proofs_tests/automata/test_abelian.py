"""Invariant factors of finite abelian groups (lrnnkit.automata.abelian), against the Smith normal form.

A product Z_{n_1} x ... x Z_{n_k} is built as a permutation group (one cycle of length n_i per factor, on disjoint
points); its invariant factors are the diagonal of the Smith normal form of diag(n_1, ..., n_k) over the integers
(sympy, an independent computation), ones dropped."""
import pytest
import sympy
from hypothesis import given, strategies as st
from sympy.matrices.normalforms import smith_normal_form

from lrnnkit.automata.abelian import abelian_invariants, prime_divisors
from lrnnkit.automata.finite_group import FiniteGroup
from lrnnkit.errors import InputError


def cyclic_product(orders: list) -> FiniteGroup:
    degree = sum(orders)
    gens, start = [], 0
    for n in orders:
        g = list(range(degree))
        for i in range(n):
            g[start + i] = start + (i + 1) % n
        gens.append(g)
        start += n
    return FiniteGroup.from_generators(gens, degree)


def smith_invariants(orders: list) -> list:
    snf = smith_normal_form(sympy.Matrix.diag(*orders), domain=sympy.ZZ)
    return sorted(abs(int(snf[i, i])) for i in range(len(orders)) if abs(int(snf[i, i])) > 1)


@given(st.lists(st.integers(1, 9), min_size=1, max_size=3).filter(lambda o: sympy.prod(o) <= 200))
def test_invariant_factors_equal_the_smith_normal_form(orders):
    G = cyclic_product(orders)
    assert G.order == sympy.prod(orders)
    inv = abelian_invariants(G)
    assert inv == smith_invariants(orders), orders
    assert all(b % a == 0 for a, b in zip(inv, inv[1:]))          # d_i | d_{i+1}


@pytest.mark.parametrize("orders,inv", [([2, 2], [2, 2]), ([4], [4]), ([2, 3], [6]), ([4, 6], [2, 12]),
                                        ([1], [])])
def test_known_groups(orders, inv):
    assert abelian_invariants(cyclic_product(orders)) == inv


def test_a_non_abelian_group_is_refused():
    S3 = FiniteGroup.from_generators([[1, 0, 2], [1, 2, 0]])
    with pytest.raises(InputError, match="abelian"):
        abelian_invariants(S3)


@given(st.integers(1, 10 ** 5))
def test_prime_divisors(N):
    assert prime_divisors(N) == sympy.primefactors(N)
