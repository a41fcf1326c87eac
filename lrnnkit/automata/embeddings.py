"""Permutation embeddings of transformation monoids and groups.

* :func:`cayley_embedding` — Cayley's theorem (right regular representation): the monoid ``M = T(A)`` acts
  faithfully on itself by right multiplication, ``m -> m a``; letter ``a`` becomes the transformation
  ``i -> cayley[i, a]`` of ``{0..|M|-1}`` (a permutation when ``M`` is a group). Degree ``|M|``.

* :func:`minimal_faithful_permutation_representation` — the least ``n`` such that the group ``G`` embeds in
  ``S_n`` (the ``n`` of paper 000, Theorem 3), with an explicit faithful action of that degree.

  Method (standard; e.g. Johnson 1971, and GAP's ``MinimalFaithfulPermutationDegree``): every action of ``G`` is
  a disjoint union of transitive actions, each isomorphic to the action on the right cosets of a point
  stabiliser ``H_i``, whose kernel is ``core(H_i)``. The action is faithful iff ``/\\ core(H_i) = 1``, and its
  degree is ``sum [G : H_i]``. So the minimal degree is ``min sum [G:H_i]`` over collections of subgroups with
  trivially intersecting cores. Pruning: cores are conjugation-invariant, so a minimal collection uses at most one
  subgroup per core (hence per conjugacy class), and for each core only a subgroup of least index with that core;
  a branch and bound over the distinct cores (sorted by that index) stops when the running sum reaches the best
  degree found, which starts at the degree of the given faithful representation + 1. The subgroup classes come
  from :mod:`lrnnkit.automata.subgroups` (groups up to order 2520: every group of order <= 120, S5, A5, S6, ...).

  Abelian groups take a shortcut (``method="auto"``): with a primary basis ``G = <b_1> x ... x <b_s>``
  (``|b_i|`` prime powers), the stabilisers ``H_i = <b_j : j != i>`` give degree ``sum |b_i|``, Johnson's
  minimum, without the lattice, so abelian groups past the lattice caps (e.g. ``Z2^7``) still get an explicit
  action; the tests check the shortcut against the lattice search.

  Points of the result: the right cosets ``H_1 x`` of the first chosen subgroup are points ``0..[G:H_1]-1``
  (numbered in order of their least element index), then those of ``H_2``, and so on; an element ``g`` maps the
  coset ``H x`` to ``H x g`` (right action). ``images`` gives one permutation (image list) per letter of the
  automaton (or per generator of a sympy group); ``element_images`` one per group element.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from .abelian import abelian_invariants
from .finite_group import FiniteGroup
from .monoid import transition_monoid
from .subgroups import conjugacy_classes_of_subgroups

__all__ = ["cayley_embedding", "PermutationRepresentation", "minimal_faithful_permutation_representation",
           "minimal_faithful_permutation_degree", "as_finite_group"]


def cayley_embedding(fsa) -> tuple[int, list[list[int]]]:
    """``(|M|, images)`` with ``images[a][i]`` = index of ``m_i . a`` in the transition monoid ``M`` (right regular
    representation; element 0 is the identity, so state ``i`` of the embedding reached from 0 by ``w`` is the
    element ``delta_w``)."""
    M = transition_monoid(fsa)
    return M.size, [M.cayley[:, a].astype(int).tolist() for a in range(M.n_letters)]


@dataclass
class PermutationRepresentation:
    """A faithful permutation representation of degree ``degree``. Unpacks as ``(degree, images)``."""

    degree: int
    images: list                    # per letter (automaton) or per generator (sympy group): image lists
    element_images: dict            # group element (image tuple on the original points) -> image list
    subgroup_orders: list           # |H_i| of the stabilisers used, in point order
    orbit_sizes: list               # [G : H_i]
    group_order: int = 0
    letter_elements: list = field(default_factory=list)   # per letter: the group element (original image tuple)

    def __iter__(self):
        yield self.degree
        yield self.images

    def image_of(self, element) -> list:
        return self.element_images[tuple(int(v) for v in element)]


def as_finite_group(G) -> tuple[FiniteGroup, list[int], int]:
    """``(FiniteGroup, generator element indices, natural degree)`` for an FSA (group automaton), a sympy
    ``PermutationGroup`` or a :class:`FiniteGroup`."""
    if isinstance(G, FiniteGroup):
        return G, G.small_generating_set(), G.degree
    if hasattr(G, "delta") and hasattr(G, "alphabet"):
        M = transition_monoid(G)
        if not M.is_group:
            raise InputError(f"the transition monoid of {G.name or 'the automaton'} is not a group: "
                             f"some letter is not a permutation of the states")
        FG = FiniteGroup.from_monoid(M)
        return FG, [int(M.cayley[0, a]) for a in range(M.n_letters)], FG.degree
    try:
        from sympy.combinatorics import PermutationGroup
    except ImportError:  # pragma: no cover
        PermutationGroup = None
    if PermutationGroup is not None and isinstance(G, PermutationGroup):
        d = G.degree
        gens = [list(g.array_form) + list(range(len(g.array_form), d)) for g in G.generators]
        FG = FiniteGroup.from_generators(gens or [list(range(d))], d)
        idx = [FG.monoid.index(g) for g in gens]
        return FG, idx, d
    raise InputError(f"expected a group automaton (FSA) or a sympy PermutationGroup, got {type(G).__name__}")


def _best_collection(G: FiniteGroup, natural: int):
    classes = conjugacy_classes_of_subgroups(G)
    N = G.order
    if N == 1:
        return [classes[0]]
    best_for_core: dict = {}
    for c in classes:
        if c.core.sum() == N:        # core = G: the action is trivial and helps nothing
            continue
        k = np.packbits(c.core).tobytes()
        if k not in best_for_core or c.index < best_for_core[k].index:
            best_for_core[k] = c
    cand = sorted(best_for_core.values(), key=lambda c: (c.index, -int(c.core.sum())))
    # cores as Python-int bitsets (bit x set iff element x is in the core; bit 0 = identity)
    bits = [int.from_bytes(np.packbits(c.core[::-1]).tobytes(), "big") >> ((-N) % 8) for c in cand]
    best = [natural + 1 if natural >= 1 else 10 ** 9, None]

    def dfs(inter, cost, chosen):
        # set-cover branching: some chosen core must miss the least non-identity element e of the intersection
        if inter == 1:
            if cost < best[0]:
                best[0], best[1] = cost, list(chosen)
            return
        low = inter & ~1
        e = low & -low
        for j, c in enumerate(cand):          # sorted by index: stop at the first that cannot improve
            if cost + c.index >= best[0]:
                break
            if bits[j] & e:
                continue
            chosen.append(c)
            dfs(inter & bits[j], cost + c.index, chosen)
            chosen.pop()

    dfs((1 << N) - 1, 0, [])
    if best[1] is None:   # cannot happen for a faithful given representation; keep the error explicit
        raise InputError("no faithful collection of coset actions found (internal error)")
    return sorted(best[1], key=lambda c: (c.index, -c.order))


def minimal_faithful_permutation_degree(G) -> int:
    """The least ``n`` with ``G`` isomorphic to a subgroup of ``S_n`` (1 for the trivial group, as GAP).

    Abelian groups use Johnson's formula (1971): for ``G = prod Z_{p_i^{a_i}}`` (primary decomposition) the degree
    is ``sum p_i^{a_i}``; the tests check it against the lattice search. Other groups: the lattice search of
    :func:`minimal_faithful_permutation_representation`.
    """
    FG, _, natural = as_finite_group(G)
    if FG.order == 1:
        return 1
    if FG.is_abelian:
        total = 0
        for d in abelian_invariants(FG):
            for p, e in _factor(d).items():
                total += p ** e
        return total
    return int(sum(c.index for c in _best_collection(FG, natural)))


def _factor(n: int) -> dict:
    out, p = {}, 2
    while n > 1:
        while n % p == 0:
            out[p] = out.get(p, 0) + 1
            n //= p
        p += 1
    return out


def _power(G: FiniteGroup, x: int, k: int) -> int:
    y = 0
    for _ in range(k):
        y = int(G.table[y, x])
    return y


def _abelian_basis(G: FiniteGroup) -> list[int] | None:
    """Elements ``b_1..b_s`` of prime-power orders with ``G = <b_1> x ... x <b_s>`` (a primary basis), or None.

    Per prime p, greedily add an element of largest order whose cyclic subgroup meets the span so far trivially
    (for a cyclic p-group ``<x>`` that is: the order-p element ``x^{|x|/p}`` is outside the span), so every
    step is a direct product. Greedy choice can in principle get stuck (span not a direct summand); then None is
    returned and the caller falls back to the subgroup-lattice search. The result is checked: the product of the
    orders must be ``|G|``.
    """
    orders = G.element_orders
    N = G.order
    basis = []
    n = N
    p = 2
    primes = []
    while n > 1:
        if n % p == 0:
            primes.append(p)
            while n % p == 0:
                n //= p
        p += 1
    for p in primes:
        target = 1
        while N % (target * p) == 0:
            target *= p
        cand = [x for x in np.argsort(-orders, kind="stable").tolist()
                if orders[x] > 1 and _is_power_of(int(orders[x]), p)]
        span = np.zeros(N, dtype=bool)
        span[0] = True
        while span.sum() < target:
            pick = None
            for x in cand:
                if not span[_power(G, x, int(orders[x]) // p)]:
                    pick = x
                    break
            if pick is None:
                return None
            members = np.nonzero(span)[0]
            y = pick
            while y != 0:
                span[G.table[members, y]] = True
                y = int(G.table[y, pick])
            basis.append(pick)
    if int(np.prod([int(orders[b]) for b in basis], dtype=object) if basis else 1) != N:
        return None
    return basis


def _is_power_of(n: int, p: int) -> bool:
    while n % p == 0:
        n //= p
    return n == 1


def _abelian_stabilisers(G: FiniteGroup):
    """For a primary basis b_i: H_i = <b_j : j != i>; G/H_i is cyclic of order ``|b_i|`` and the H_i meet in 1."""
    basis = _abelian_basis(G)
    if basis is None:
        return None
    out = []
    for i in range(len(basis)):
        others = basis[:i] + basis[i + 1:]
        H = G.generate(others)
        out.append(np.nonzero(H)[0])
    return out


def minimal_faithful_permutation_representation(G, *, method: str = "auto") -> PermutationRepresentation:
    """The minimal faithful permutation degree of ``G`` and an explicit representation of that degree.

    ``G`` is an FSA whose transition monoid is a group, a sympy ``PermutationGroup`` or a :class:`FiniteGroup`.
    See the module docstring for the method and the numbering of points. The trivial group gets degree 1
    (GAP's convention). ``method``: ``"lattice"`` always runs the subgroup-lattice search; ``"auto"`` (default)
    uses, for abelian groups, the action on the cosets of the complements of a primary basis (degree
    ``sum p_i^{a_i}``, Johnson's minimum; no lattice needed, so large abelian groups work), else the lattice.
    """
    if method not in ("auto", "lattice"):
        raise InputError(f"unknown method {method!r}: expected 'auto' or 'lattice'")
    FG, gen_idx, natural = as_finite_group(G)
    N = FG.order
    if N == 1:
        images_all = np.zeros((1, 1), dtype=np.int64)
        chosen_orders, sizes = [1], [1]
    else:
        stabilisers = _abelian_stabilisers(FG) if (method == "auto" and FG.is_abelian) else None
        if stabilisers is None:
            stabilisers = [c.elements for c in _best_collection(FG, natural)]
        blocks = []
        chosen_orders, sizes = [], []
        for H in stabilisers:
            coset_of = np.full(N, -1, dtype=np.int64)
            reps = []
            for y in range(N):
                if coset_of[y] < 0:
                    coset_of[FG.table[H, y]] = len(reps)
                    reps.append(y)
            # block[g, p] = coset of reps[p] * g
            block = coset_of[FG.table[np.asarray(reps)][:, :]].T     # (N, n_cosets)
            blocks.append(block)
            chosen_orders.append(int(len(H)))
            sizes.append(len(reps))
        offsets = np.cumsum([0] + sizes[:-1])
        images_all = np.concatenate([b + off for b, off in zip(blocks, offsets)], axis=1)
    degree = int(images_all.shape[1])
    element_images = {tuple(int(v) for v in FG.perms[i]): images_all[i].tolist() for i in range(N)}
    # faithful + homomorphism sanity (cheap, exact): distinct images and g_i g_j -> image_i then image_j
    if len({tuple(r) for r in images_all.tolist()}) != N:
        raise AssertionError("constructed action is not faithful")
    images = [images_all[g].tolist() for g in gen_idx]
    return PermutationRepresentation(degree=degree, images=images, element_images=element_images,
                                     subgroup_orders=chosen_orders, orbit_sizes=sizes, group_order=N,
                                     letter_elements=[tuple(int(v) for v in FG.perms[g]) for g in gen_idx])
