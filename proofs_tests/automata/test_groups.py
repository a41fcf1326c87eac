"""Named groups, group structure (vs sympy), subgroup lattices, minimal faithful permutation representations
(known values, the abelian formula, validity of the explicit action), identification, the Cayley embedding."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st
from sympy.combinatorics import Permutation, PermutationGroup
from sympy.combinatorics.group_constructs import DirectProduct
from sympy.combinatorics.named_groups import AlternatingGroup, CyclicGroup, DihedralGroup, SymmetricGroup
from sympy.ntheory import factorint

from lrnnkit.automata.embeddings import (cayley_embedding, minimal_faithful_permutation_degree,
                                         minimal_faithful_permutation_representation)
from lrnnkit.automata.finite_group import FiniteGroup
from lrnnkit.automata.fsa import FSA
from lrnnkit.automata.groups import abelian_invariants, group_structure, identify, named_group
from lrnnkit.automata.monoid import compose, transition_monoid
from lrnnkit.automata.sources import load_source
from lrnnkit.automata.subgroups import conjugacy_classes_of_subgroups
from lrnnkit.errors import InputError
from lrnnkit.testing.strategies import group_automata


def sympy_group(name):
    parts = []
    for f in name.split("x"):
        kind, m = f[0], int(f[1:])
        parts.append({"Z": CyclicGroup, "D": DihedralGroup, "S": SymmetricGroup, "A": AlternatingGroup}[kind](m))
    return parts[0] if len(parts) == 1 else DirectProduct(*parts)


NAMES = ["Z1", "Z2", "Z6", "D3", "D4", "D5", "D6", "S3", "S4", "A4", "A5", "S5", "A4xZ5", "S3xZ2", "Z60",
         "Z2xZ2xZ2", "D4xZ3", "S4xZ2"]


@pytest.mark.parametrize("name", NAMES)
def test_structure_matches_sympy(name):
    f = load_source(f"group:{name}")
    s = group_structure(f)
    ref = sympy_group(name)
    assert s["order"] == ref.order() == f.n_states
    assert s["abelian"] == ref.is_abelian
    assert s["solvable"] == ref.is_solvable


@pytest.mark.parametrize("name,order", [("Z7", 7), ("D1", 2), ("D2", 4), ("D7", 14), ("S1", 1), ("S2", 2),
                                        ("A3", 3), ("A5", 60), ("S5", 120), ("A4xZ5", 60), ("Z2xD3xZ2", 24)])
def test_named_group_orders_and_identity_first(name, order):
    G = named_group(name)
    assert G.order == order == len(set(G.perms)) == len(set(G.element_names))
    assert G.perms[0] == tuple(range(G.degree))
    # closed under the product and faithful (distinct permutations): a group of that order
    S = set(G.perms)
    for a in G.perms[:10]:
        for b in G.perms[:10]:
            assert compose(a, b) in S


@pytest.mark.parametrize("name", ["S4", "D5", "A4xZ5", "Z6", "D2"])
def test_named_group_perm_group_is_sympy_group_of_that_order(name):
    G = named_group(name)
    PG = G.perm_group
    assert PG.order() == G.order
    assert all(PG.contains(Permutation(list(p))) for p in G.perms)


def test_dihedral_is_the_m_gon():
    G = named_group("D5")
    r1, s0 = G.perms[G.element_names.index("r1")], G.perms[G.element_names.index("s0")]
    assert r1 == (1, 2, 3, 4, 0) and s0 == (0, 4, 3, 2, 1)
    assert compose(compose(s0, r1), s0) == G.perms[G.element_names.index("r4")]   # s r s = r^-1


# Known minimal faithful permutation degrees (Johnson 1971; GAP's MinimalFaithfulPermutationDegree agrees, see
# automata/test_groups_gap.py): the task's list plus a few classics.
KNOWN_DEGREES = [("S5", 5), ("A5", 5), ("Z60", 12), ("A4xZ5", 9), ("D6", 5), ("S3xZ2", 5), ("S4", 4), ("A4", 4),
                 ("S3", 3), ("Z6", 5), ("Z2xZ2", 4), ("D4", 4), ("Z1", 1), ("Z2", 2), ("D5", 5), ("Z4xZ2", 6),
                 ("Z2xZ2xZ2xZ2", 8), ("D15", 8), ("A4xZ2", 6)]


@pytest.mark.parametrize("name,degree", KNOWN_DEGREES)
def test_minimal_degree_known_values(name, degree):
    f = load_source(f"group:{name}")
    rep = minimal_faithful_permutation_representation(f)
    assert rep.degree == degree
    d, images = rep
    assert d == degree and len(images) == f.n_letters
    assert minimal_faithful_permutation_degree(sympy_group(name)) == degree


@pytest.mark.parametrize("name,degree", [("Q8", 8), ("Q8xZ3", 11)])
def test_minimal_degree_quaternion(name, degree):
    G = named_group(name, allow_quaternion=True).finite_group()
    assert minimal_faithful_permutation_representation(G).degree == degree
    assert identify(G) == name


@pytest.mark.slow
def test_minimal_degree_s6():
    assert minimal_faithful_permutation_degree(SymmetricGroup(6)) == 6
    assert minimal_faithful_permutation_degree(load_source("group:S6")) == 6


def test_quaternion_needs_its_regular_degree():
    # Q8 has a unique involution in every non-trivial subgroup, so no faithful action below degree 8
    i = Permutation([[0, 1, 4, 5], [2, 7, 6, 3]])
    j = Permutation([[0, 2, 4, 6], [1, 3, 5, 7]])
    G = PermutationGroup([i, j])
    assert G.order() == 8 and not G.is_abelian
    assert minimal_faithful_permutation_degree(G) == 8
    assert identify(FiniteGroup.from_generators([i.array_form, j.array_form])) == "Q8"


def _primary_sum(invariants):
    total = 0
    for d in invariants:
        for p, e in factorint(d).items():
            total += p ** e
    return total


@given(st.lists(st.integers(1, 9), min_size=1, max_size=3).filter(lambda c: math.prod(c) <= 150))
def test_abelian_minimal_degree_is_sum_of_primary_orders(cyclics):
    """Johnson (1971): for abelian G = prod Z_{p_i^a_i}, the minimal degree is sum p_i^a_i (1 for G = 1).
    The lattice search (the explicit representation) must find it; the degree function uses the formula."""
    G = DirectProduct(*[CyclicGroup(m) for m in cyclics]) if len(cyclics) > 1 else CyclicGroup(cyclics[0])
    expect = max(1, _primary_sum(cyclics))
    assert minimal_faithful_permutation_representation(G, method="lattice").degree == expect
    rep = minimal_faithful_permutation_representation(G)           # abelian fast path (primary basis)
    assert rep.degree == expect
    assert minimal_faithful_permutation_degree(G) == expect
    imgs = [tuple(v) for v in rep.element_images.values()]
    assert len(set(imgs)) == G.order()                             # faithful
    for x, y in zip(list(rep.element_images)[:20], list(rep.element_images)[1:21]):
        assert tuple(rep.image_of(compose(x, y))) == compose(rep.image_of(x), rep.image_of(y))
    FG = FiniteGroup.from_generators([g.array_form for g in G.generators], G.degree)
    assert sorted(abelian_invariants(FG)) == sorted(_inv_from_primary(G.abelian_invariants()))


def test_large_elementary_abelian_group_has_explicit_minimal_action():
    # Z2^7 (29212 subgroups: past the lattice cap) acting on 14 points by 7 disjoint swaps
    gens = [[(q ^ 1) if q // 2 == i else q for q in range(14)] for i in range(7)]
    f = FSA(tuple(f"a{i}" for i in range(7)), np.array(gens).T)
    rep = minimal_faithful_permutation_representation(f)
    assert rep.degree == 14 and rep.group_order == 128
    assert len({tuple(v) for v in rep.element_images.values()}) == 128


def _inv_from_primary(primary):
    by_p = {}
    for q in primary:
        (p, e), = factorint(q).items()
        by_p.setdefault(p, []).append(q)
    r = max((len(v) for v in by_p.values()), default=0)
    out = []
    for i in range(r):
        d = 1
        for v in by_p.values():
            v = sorted(v, reverse=True)
            if i < len(v):
                d *= v[i]
        out.append(d)
    return out


@given(group_automata(max_states=6, max_letters=3))
def test_faithful_representation_is_a_faithful_homomorphism(f):
    rep = minimal_faithful_permutation_representation(f)
    M = transition_monoid(f)
    els = [M.element(i) for i in range(M.size)]
    imgs = {e: tuple(rep.image_of(e)) for e in els}
    assert all(sorted(v) == list(range(rep.degree)) for v in imgs.values())
    assert len(set(imgs.values())) == len(els)                      # faithful
    for x in els[:12]:
        for y in els[:12]:
            assert imgs[compose(x, y)] == compose(imgs[x], imgs[y])   # homomorphism (right actions)
    for a in range(f.n_letters):
        assert tuple(rep.images[a]) == imgs[tuple(int(v) for v in f.delta[:, a])]
    # never above the natural degree, and equal to the sum of the orbit sizes
    assert rep.degree <= f.n_states
    assert rep.degree == sum(rep.orbit_sizes)
    assert all(o * s == M.size for o, s in zip(rep.subgroup_orders, rep.orbit_sizes))


def test_non_group_is_rejected():
    with pytest.raises(InputError, match="not a group"):
        minimal_faithful_permutation_representation(load_source("flipflop"))
    assert group_structure(load_source("flipflop")) is None


@pytest.mark.parametrize("name,count", [("S3", 4), ("S4", 11), ("A4", 5), ("S5", 19), ("A5", 9), ("D4", 8),
                                        ("Z2xZ2xZ2", 16), ("Z12", 6), ("Q8", 6)])
def test_number_of_subgroup_classes(name, count):
    """Known counts of conjugacy classes of subgroups (GAP: Length(ConjugacyClassesSubgroups(G)))."""
    if name == "Q8":
        G = FiniteGroup.from_generators([[1, 4, 7, 2, 5, 0, 3, 6], [2, 3, 4, 5, 6, 7, 0, 1]])
        assert G.order == 8 and not G.is_abelian
    else:
        G = named_group(name).finite_group()
    classes = conjugacy_classes_of_subgroups(G)
    assert len(classes) == count
    assert sum(c.class_size for c in classes) == {"S3": 6, "S4": 30, "A4": 10, "S5": 156, "A5": 59, "D4": 10,
                                                  "Z2xZ2xZ2": 16, "Z12": 6, "Q8": 6}[name]
    for c in classes:
        assert G.order % c.order == 0                                # Lagrange
        H = c.elements
        assert np.isin(G.table[np.ix_(H, H)], H).all()               # closed


@pytest.mark.parametrize("source,name", [("group:S3", "S3"), ("group:S3xZ2", "D6"), ("group:Z2xZ3", "Z6"),
                                         ("group:Z2xZ2xZ3", "Z2xZ6"), ("group:A4xZ5", "A4xZ5"),
                                         ("group:D3", "S3"), ("group:S5", "S5"), ("group:A5", "A5"),
                                         ("group:D4xZ3", "D4xZ3"), ("parity", "Z2"), ("cycle-nav:5", "Z5"),
                                         ("group:Z1", "Z1"), ("group:S4xZ2", "S4xZ2")])
def test_identify_names(source, name):
    assert group_structure(load_source(source))["name"] == name


def test_identify_returns_none_outside_the_catalogue():
    # the Frobenius group F20 = Z5 : Z4 (x -> x + 1, x -> 2x mod 5) is none of S_n, A_n, D_m, Q8 or products
    gens = [[1, 2, 3, 4, 0], [0, 2, 4, 1, 3]]
    G = FiniteGroup.from_generators(gens)
    assert G.order == 20
    assert identify(G) is None
    f = FSA(("a", "b"), np.array(gens).T)
    assert group_structure(f)["name"] is None
    assert group_structure(f)["min_perm_degree"] == 5


@given(group_automata(max_states=5, max_letters=2))
def test_isomorphism_is_certified(f):
    G = FiniteGroup.from_monoid(transition_monoid(f))
    perm = np.random.default_rng(G.order).permutation(G.degree)
    # the same group acting on relabelled points is isomorphic; the map found is a bijective homomorphism
    inv = np.argsort(perm)
    gens = [perm[G.perms[g][inv]].tolist() for g in G.small_generating_set()] or [list(range(G.degree))]
    H = FiniteGroup.from_generators(gens, G.degree)
    phi = G.isomorphism_to(H)
    assert phi is not None and len(set(phi.tolist())) == G.order
    assert (phi[G.table] == H.table[phi[:, None], phi[None, :]]).all()


def test_cayley_embedding_is_regular_action():
    f = load_source("flipflop")
    d, images = cayley_embedding(f)
    M = transition_monoid(f)
    assert d == M.size == 3
    for a in range(f.n_letters):
        for i in range(d):
            assert M.element(images[a][i]) == compose(M.element(i), tuple(int(v) for v in f.delta[:, a]))
    g = load_source("group:S3")
    d, images = cayley_embedding(g)
    assert d == 6 and all(sorted(im) == list(range(6)) for im in images)
