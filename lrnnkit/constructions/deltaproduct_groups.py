"""Group word problems in ONE DeltaProduct layer (paper 001, Section 3 "Theoretical Expressivity" and Section 5.1).

* ``deltaproduct-symmetric`` (001, Section 3, citing 000 Theorem 3): ``S_n`` (and any group automaton whose
  transition group embeds in ``S_n``) in one layer with ``n_h = n - 1`` Householder factors per token: the
  permutation matrices of :mod:`.permutation_reflections`, padded with ``beta = 0`` factors so that every token
  carries exactly ``n_h = n - 1`` factors, as a DeltaProduct_{n-1} layer does.
* ``rotation-3d`` (001, Section 5.1): ``S_4`` and ``A_5`` in one layer of width 3 with ``n_h = 2``: they are the
  rotation groups of the cube and of the icosahedron, and every rotation of R^3 is the product of two reflections
  (Cartan-Dieudonne). Matrices: the cube group = the 24 signed permutation matrices of determinant 1 (rational);
  the icosahedral group = the closure of the cyclic coordinate shift and
  ``(1/2) [[1, -phi, 1/phi], [phi, 1/phi, -1], [1/phi, 1, phi]]`` with ``phi = 1 + zeta_5 + zeta_5^4`` the golden
  ratio (exact in Q(sqrt 5) subset Q(zeta_5); the paper gives no coordinates, these are ours). For a rotation
  ``R != I``: ``u = (R - I) x`` is orthogonal to the axis and ``w = u + R u`` bisects ``u`` and ``R u`` (for a
  half-turn, ``w = a x u`` with ``a = (R + I) y`` on the axis); then ``R = G(2, w) G(2, u)``. Both vectors are
  rescaled by a power of phi so that ``u^T u`` and ``w^T w`` are rational (lrnnkit.model stores exact GH factors
  with rational squared norm); the product is checked exactly. ``H_0 = (1, 2, 5)`` has a free orbit, so the
  nearest-reference decoder over the ``|G|`` states recovers the prefix product. The automaton's transition group is
  matched to the matrix group by an explicit isomorphism (images of its generators, checked on the whole group).
"""
from __future__ import annotations

import itertools
from fractions import Fraction
from functools import lru_cache

import numpy as np

from ..exact import Cyc, zeta
from ..model import GHFactor, Layer, Model, Transition
from ..model.linalg import exact_matmul, exact_matvec
from . import _support as S
from . import permutation_reflections as PR
from .registry import Construction, Cost, register

SYM = "deltaproduct-symmetric"
ROT = "rotation-3d"


# ---------------------------------------------------------------------------------------------- S_n, n_h = n - 1
def _sym_cost(n: int) -> Cost:
    """The householder-permutation layer of width n, every token padded to n_h = max(n - 1, 1) factors."""
    return Cost((n,), max(n - 1, 1))


def build_symmetric(fsa, **options) -> Model:
    model = PR.build(fsa, **options)
    L = model.layers[0]
    n = L.width
    nh = max(n - 1, 1)
    e0 = [Fraction(1)] + [Fraction(0)] * (n - 1)
    new = []
    for t in L.transitions:
        facs = list(t.factors) + [GHFactor.exact(0, e0)] * (nh - len(t.factors))
        new.append(Transition.from_factors(facs, n))
    L.transitions = new
    model.name = f"{SYM}({fsa.name})"
    model.notes["n_h"] = nh
    return model


register(Construction(
    name=SYM, paper="001", statement="Section 3 (S_n with n_h = n - 1)",
    applies_to="automata whose transition monoid is a group (S_n and its subgroups)",
    build=build_symmetric, applicable=S.not_group_reason, layers="1",
    width="n = least degree of a faithful permutation representation",
    factors_per_token="exactly n_h = n - 1 (transposition reflections, padded with beta = 0)",
    priority=1, cost=lambda fsa: _sym_cost(PR.cost(fsa).widths[0])))


# ---------------------------------------------------------------------------------------------- 3-D rotations
def _mm(A, B):
    return tuple(tuple(x for x in r) for r in exact_matmul([list(r) for r in A], [list(r) for r in B]))


def _eye3():
    return tuple(tuple(Fraction(int(i == j)) for j in range(3)) for i in range(3))


def _closure(gens, limit=200):
    I = _eye3()
    elems = {I: 0}
    order = [I]
    i = 0
    while i < len(order):
        x = order[i]
        for g in gens:
            y = _mm(g, x)
            if y not in elems:
                elems[y] = len(order)
                order.append(y)
                if len(order) > limit:
                    raise AssertionError("rotation group closure too large")
        i += 1
    return order


@lru_cache(maxsize=None)
def cube_group() -> tuple:
    """The 24 rotations of the cube (signed permutation matrices with determinant 1)."""
    out = []
    for perm in itertools.permutations(range(3)):
        inv = sum(1 for a in range(3) for b in range(a + 1, 3) if perm[a] > perm[b])
        for signs in itertools.product((1, -1), repeat=3):
            if (-1) ** inv * signs[0] * signs[1] * signs[2] == 1:
                out.append(tuple(tuple(Fraction(signs[i]) if perm[i] == j else Fraction(0) for j in range(3))
                                 for i in range(3)))
    I = _eye3()
    out.sort(key=lambda M: M != I)
    return tuple(out)


def golden():
    return 1 + zeta(5, 1) + zeta(5, 4)


@lru_cache(maxsize=None)
def icosahedral_group() -> tuple:
    """The 60 rotations of the icosahedron, exact in Q(sqrt 5) subset Q(zeta_5)."""
    phi = golden()
    iphi = phi - 1
    h = Fraction(1, 2)
    F0, F1 = Fraction(0), Fraction(1)
    g1 = ((F0, F0, F1), (F1, F0, F0), (F0, F1, F0))
    g2 = ((h, -h * phi, h * iphi), (h * phi, h * iphi, -h), (h * iphi, h, h * phi))
    for g in (g1, g2):
        gt = tuple(zip(*g))
        assert _mm(gt, g) == _eye3(), "icosahedral generator not orthogonal"
    return tuple(_closure([g1, g2]))


H0_3D = (Fraction(1), Fraction(2), Fraction(5))


def _dot(a, b):
    acc = Fraction(0)
    for x, y in zip(a, b):
        acc = acc + x * y
    return acc


def _rationalize(v):
    """A multiple of v by phi^k (``|k|`` <= 2) or 1 with rational squared norm, or None."""
    phi = golden()
    iphi = phi - 1
    for lam in (Fraction(1), phi, iphi, phi * phi, iphi * iphi):
        w = tuple(lam * x for x in v)
        if not isinstance(_dot(w, w), Cyc):
            return w
    return None


def two_reflections(R) -> list[GHFactor]:
    """``[G(2, u), G(2, w)]`` with ``G(2, w) G(2, u) = R`` exactly, for a rotation R != I of R^3."""
    basis = [tuple(Fraction(int(i == j)) for j in range(3)) for i in range(3)]
    extra = [tuple(a + b for a, b in zip(basis[i], basis[j])) for i in range(3) for j in range(i + 1, 3)]
    extra += [tuple(a - b for a, b in zip(basis[i], basis[j])) for i in range(3) for j in range(i + 1, 3)]
    Rl = [list(r) for r in R]
    for x in basis + extra:
        Rx = exact_matvec(Rl, x)
        u = tuple(a - b for a, b in zip(Rx, x))
        if all(c == 0 for c in u):
            continue
        Ru = exact_matvec(Rl, u)
        w = tuple(a + b for a, b in zip(u, Ru))
        if all(c == 0 for c in w):                           # half-turn: w = a x u, a on the axis
            for y in basis:
                a = tuple(p + q for p, q in zip(exact_matvec(Rl, y), y))
                if any(c != 0 for c in a):
                    break
            w = (a[1] * u[2] - a[2] * u[1], a[2] * u[0] - a[0] * u[2], a[0] * u[1] - a[1] * u[0])
        ur, wr = _rationalize(u), _rationalize(w)
        if ur is None or wr is None:
            continue
        fu, fw = GHFactor.exact(2, list(ur)), GHFactor.exact(2, list(wr))
        if exact_matmul(fw.matrix_exact(), fu.matrix_exact()) == Rl:
            return [fu, fw]
        if exact_matmul(fu.matrix_exact(), fw.matrix_exact()) == Rl:
            return [fw, fu]
    raise AssertionError(f"no rational-norm pair of reflections found for {R!r}")


def _regular_perms(mats) -> tuple[np.ndarray, int]:
    """Matrix group -> permutations of its free orbit through H_0 (p_M[i] = index of M R_i H_0)."""
    pts = [tuple(exact_matvec([list(r) for r in M], list(H0_3D))) for M in mats]
    idx = {p: i for i, p in enumerate(pts)}
    if len(idx) != len(mats):
        raise AssertionError("orbit of H_0 is not free")
    perms = np.array([[idx[tuple(exact_matvec([list(r) for r in M], list(p)))] for p in pts] for M in mats],
                     dtype=np.int64)
    return perms, pts


@lru_cache(maxsize=None)
def _matrix_group(which: str):
    mats = cube_group() if which == "S4" else icosahedral_group()
    perms, pts = _regular_perms(mats)
    orders = []
    ident = np.arange(len(mats))
    for p in perms:
        q, k = p.copy(), 1
        while not np.array_equal(q, ident):
            q, k = p[q], k + 1
        orders.append(k)
    return mats, perms, pts, orders


def rotation_structure(fsa):
    """``(states, G, letter_elem, mats, rho_index)``: an isomorphism of the transition group onto the cube group
    (order 24) or the icosahedral group (order 60); ``rho_index[g]`` = matrix index of group element g."""
    r = S.group_of(fsa)
    if isinstance(r, str):
        return r
    states, perms, G, gen_letters, letter_elem = r
    which = {24: "S4", 60: "A5"}.get(G.order)
    if which is None:
        return f"the transition group has order {G.order}; rotation-3d needs S_4 (24) or A_5 (60)"
    mats, mperms, _, morders = _matrix_group(which)
    gen_orders = [G.element_order(G.index[g.tobytes()]) for g in G.gens]
    cands = [[j for j in range(len(mats)) if morders[j] == o] for o in gen_orders]
    for combo in itertools.product(*cands):
        images = mperms[list(combo)]
        if S.check_homomorphism(G, images) is None:
            rho = S.group_rep_images(G, images)
            i0 = 0                                         # mats[0] is the identity
            rho_index = [int(p[i0]) for p in rho]
            return states, G, letter_elem, mats, rho_index
    return f"the transition group of order {G.order} is not isomorphic to the rotation group of the " \
           f"{'cube (S_4)' if which == 'S4' else 'icosahedron (A_5)'}"


_rot_reason = S.reason_of(rotation_structure)


def build_rotation(fsa, **options) -> Model:
    r = S.structure_or_refuse(ROT, rotation_structure, fsa, options)
    states, G, letter_elem, mats, rho_index = r
    cache: dict = {}
    trans = []
    for a in range(fsa.n_letters):
        j = rho_index[letter_elem[a]]
        if j not in cache:
            cache[j] = [] if j == 0 else two_reflections(mats[j])
        trans.append(Transition.from_factors(cache[j], 3))
    q0 = states.index(fsa.start)
    refs, names, table = [], [], []
    for g in range(G.order):
        M = mats[rho_index[g]]
        refs.append(exact_matvec([list(r) for r in M], list(H0_3D)))
        names.append(f"R{rho_index[g]}")
        table.append(S.output_index(fsa, states[int(G.elements[g][q0])]))
    dec = S.nearest_decoder(refs, names)
    layer = Layer("gh", 3, trans, np.array([float(x) for x in H0_3D]), S.input_identity(fsa), dec,
                  list(H0_3D), symbol_names=list(fsa.alphabet), coords=["x", "y", "z"],
                  name="cube rotations" if G.order == 24 else "icosahedral rotations")
    labels = S.output_labels(fsa)
    return Model(list(fsa.alphabet), [layer], S.readout_from_layer(0, table, G.order, len(labels)), labels,
                 name=f"{ROT}({fsa.name})",
                 notes={"group_order": G.order})


register(Construction(
    name=ROT, paper="001", statement="Section 5.1 (S_4, A_5 with n_h = 2)",
    applies_to="automata whose transition group is S_4 or A_5",
    build=build_rotation, applicable=_rot_reason, layers="1", width="3",
    factors_per_token="2 reflections (0 for the identity)", priority=8, cost=lambda fsa: Cost((3,), 2),
    notes="cube / icosahedron rotation matrices (exact, Q(sqrt 5) for A_5), each rotation = two reflections"))
