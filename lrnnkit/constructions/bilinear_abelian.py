"""Abelian groups by 2-D rotation blocks in a shared (input-independent) basis (paper 004, Proposition
"complex abelian" and its proof in the appendix; the extraction lost the formulas, reconstructed here).

Statement (004): a linear RNN ``h_t = W(x_t) h_{t-1}`` whose orthogonal transition matrices share one
input-independent eigenbasis (so they are block-diagonal with 2 x 2 rotation blocks, up to a fixed change of
basis) can simulate any abelian group. Proof idea (004, appendix): Z_m is the rotation by ``2 pi x / m`` of one
block; a finite abelian group is a direct sum of cyclic groups, one block each.

Construction. Instead of computing a cyclic decomposition we use characters, which gives the same blocks: a
character ``chi: G -> Z_E`` (E = exponent of G) is a homomorphism; the block of chi rotates by
``2 pi chi(g) / E``. A set of characters whose kernels intersect trivially gives a faithful representation
``g -> blockdiag(R(2 pi chi_j(g) / E))``; characters are chosen greedily (each one shrinks the joint kernel), so the
number of blocks is at most the number of cyclic factors in a decomposition found this way (for Z_m one block,
for Z_2 x Z_2 two, ...). A character whose image has order <= 2 gets a 1 x 1 block ``+-1``. Characters are found by
trying generator images ``c_a in Z_E`` with ``ord(g_a) c_a = 0`` and checking well-definedness over the whole
group. ``H_0 = (1, 0, 1, 0, ...)``; the states of distinct elements differ (faithfulness), so the nearest-reference
decoder over the ``|G|`` states is exact. Layer kind "block_diagonal"; exact entries cos/sin in cyclotomic fields.
"""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

from ..errors import InputError
from ..model import Layer, Model, Transition
from . import _support as S
from .registry import Construction, Cost, register
from ..exact import to_float

NAME = "bilinear-abelian-rotations"
MAX_CANDIDATES = 200_000


def _character(G: S.PermGroup, c, E: int):
    """chi values on all elements for generator images c (in Z_E), or None if not well defined."""
    chi = [None] * G.order
    chi[0] = 0
    for i in range(G.order):
        for a in range(len(G.gens)):
            j = int(G.mult_gen[i, a])
            v = (chi[i] + c[a]) % E
            if chi[j] is None:
                chi[j] = v
            elif chi[j] != v:
                return None
    return chi


def abelian_characters(G: S.PermGroup):
    """(E, list of characters as value lists) with trivially intersecting kernels; None if G is not abelian."""
    if not G.is_abelian():
        return None
    if G.order == 1:
        return 1, []
    orders = [G.element_order(G.index[g.tobytes()]) for g in G.gens]
    E = 1
    for o in orders:
        E = math.lcm(E, o)
    choices = [[x for x in range(E) if (x * o) % E == 0] for o in orders]
    total = 1
    for ch in choices:
        total *= len(ch)
    if total > MAX_CANDIDATES:
        raise InputError(f"{NAME}: {total} character candidates (more than {MAX_CANDIDATES}); group too large")
    chars = []
    for c in itertools.product(*choices):
        chi = _character(G, c, E)
        if chi is not None and any(chi):
            chars.append(chi)
    kernel = set(range(G.order))
    chosen = []
    while len(kernel) > 1:
        best = max(chars, key=lambda chi: (-sum(1 for g in kernel if chi[g] == 0),
                                           -len({v for v in chi})))   # prefer small image (fewer... ties)
        newk = {g for g in kernel if best[g] == 0}
        if len(newk) == len(kernel):
            raise AssertionError("characters do not separate the group")
        chosen.append(best)
        kernel = newk
    return E, chosen


def _reason(fsa):
    r = S.group_of(fsa)
    if isinstance(r, str):
        return r
    if not r[2].is_abelian():
        return f"the transition group (order {r[2].order}) is not abelian"
    return None


def _cost(fsa) -> Cost:
    """Width = sum of the block sizes (2 per character of order > 2, 1 otherwise); not a GH layer."""
    E, chars = abelian_characters(S.group_of(fsa)[2])
    return Cost((sum(1 if all((2 * v) % E == 0 for v in chi) else 2 for chi in chars) or 1,), None, gh=False)


def build(fsa, **options) -> Model:
    if options:
        raise InputError(f"{NAME}: unknown option(s) {sorted(options)}")
    r = S.group_of(fsa)
    if isinstance(r, str):
        raise InputError(f"{NAME}: {r}")
    states, perms, G, _, letter_elem = r
    ch = abelian_characters(G)
    if ch is None:
        raise InputError(f"{NAME}: the transition group (order {G.order}) is not abelian")
    E, chars = ch
    # block j: size 1 if chi_j takes values in {0, E/2} only, else a 2 x 2 rotation
    sizes = [1 if all((2 * v) % E == 0 for v in chi) else 2 for chi in chars] or [1]
    width = sum(sizes)

    def block(chi_val: int, size: int):
        if size == 1:
            return [[Fraction(1) if chi_val == 0 else Fraction(-1)]]
        c, s = S.cos_frac(chi_val, E), S.sin_frac(chi_val, E)
        return [[c, -s], [s, c]]

    def element_blocks(g: int):
        if not chars:
            return [[[Fraction(1)]]]
        return [block(chi[g], sz) for chi, sz in zip(chars, sizes)]

    def blockdiag(blocks):
        A = [[Fraction(0)] * width for _ in range(width)]
        o = 0
        for b in blocks:
            for i in range(len(b)):
                for j in range(len(b)):
                    A[o + i][o + j] = b[i][j]
            o += len(b)
        return A

    trans = []
    for a in range(fsa.n_letters):
        bl = element_blocks(letter_elem[a])
        A_ex = blockdiag(bl)
        t = Transition.from_exact(A_ex)
        t.blocks = [np.array([[to_float(x) for x in r] for r in b]) for b in bl]
        trans.append(t)
    H0 = []
    for sz in sizes:
        H0 += [Fraction(1)] + [Fraction(0)] * (sz - 1)
    q0 = states.index(fsa.start)
    refs, names, table = [], [], []
    for g in range(G.order):
        A = blockdiag(element_blocks(g))
        refs.append([sum((A[i][j] * H0[j] for j in range(width)), Fraction(0)) for i in range(width)])
        names.append(S.perm_name(G.elements[g]))
        table.append(S.output_index(fsa, states[int(G.elements[g][q0])]))
    dec = S.nearest_decoder(refs, names)
    layer = Layer("block_diagonal", width, trans, np.array([float(x) for x in H0]), S.input_identity(fsa), dec,
                  H0, symbol_names=list(fsa.alphabet), name="rotation blocks")
    labels = S.output_labels(fsa)
    return Model(list(fsa.alphabet), [layer], S.readout_from_layer(0, table, G.order, len(labels)), labels,
                 name=f"{NAME}({fsa.name})",
                 notes={"exponent": E, "block_sizes": sizes})


register(Construction(
    name=NAME, paper="004", statement="Proposition (abelian groups, shared eigenbasis)",
    applies_to="automata whose transition group is abelian", build=build, applicable=_reason, layers="1",
    width="sum of block sizes (2 per cyclic factor of order > 2, 1 per factor of order 2)",
    factors_per_token="n/a (block-diagonal rotations)", priority=-5, cost=_cost))
