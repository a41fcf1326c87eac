"""Group automata in ONE layer of reflections (paper 000, Theorem 3 and its proof in Appendix C.2).

Statement (000, Theorem 3, as printed): every FSA ``A = (Sigma, Q, q0, delta)`` whose transition monoid ``T(A)``
is a group is implemented by a one-layer LRNN with ``A: Sigma -> M^n_{k-1}({-1, 1})``, where ``n`` is the least
degree of a faithful permutation representation of ``T(A)`` and ``k = max_w #{q : delta(q, w) != q}`` is the largest
number of states a single letter moves.

Construction (Appendix C.2): fix a faithful representation ``rho: T(A) -> S_n``; ``H_0 = (1, 2, ..., n)^T``,
``B = 0`` and ``A(w) = P(rho(delta_w))``, the permutation matrix (``P(p)[p[i], i] = 1``). A permutation with
cycles of lengths ``l_1, ..., l_c`` (``sum l_i`` moved points) is the product of ``sum (l_i - 1)`` transpositions,
and the transposition of ``i, j`` is the reflection ``G(2, e_i - e_j) = I - (e_i - e_j)(e_i - e_j)^T`` (000,
Proposition 1.2: a permutation matrix lies in ``M^n_{n-1}({-1, 1})``). The states ``P(rho(g)) H_0`` of distinct
group elements are distinct (``H_0`` has distinct entries and rho is faithful), so the nearest-reference decoder
over the ``|T(A)|`` reachable states recovers ``g``, hence the automaton state ``q0 . g`` (the paper leaves the
decoder abstract: "we do not consider the decoder (Theorem 3)", 000 Appendix A.1; the map ``g`` of its proof is
this decoder).

Factor count. This module uses exactly ``(moved points) - (cycles)`` reflections per letter of the representation
(the minimum: a product of r reflections fixes a subspace of codimension <= r, and ``P - I`` has rank
``moved - cycles``). The printed bound ``k - 1`` counts moved STATES of ``A``, not moved POINTS of the
representation; the two differ when ``|Q| > n``. ``printed_bound_check`` compares them for a compiled automaton.

Which minimal representation: ``lrnnkit.automata.embeddings.minimal_faithful_permutation_representation`` when it
is available; otherwise (and whenever the automaton's own action on its reachable states already has the least
degree found) the action of ``T(A)`` on the reachable states, restricted to a set of orbits that is still
faithful.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..automata.embeddings import minimal_faithful_permutation_representation
from ..automata.fsa import FSA
from ..errors import InputError
from ..model import GHFactor, Layer, Model, Transition
from . import _support as S
from .registry import Construction, Cost, register

NAME = "householder-permutation"


def transposition_factor(i: int, j: int, n: int) -> GHFactor:
    """The swap of coordinates i and j as a reflection: ``G(2, e_i - e_j)`` (000, Appendix C.1, P_ij)."""
    u = [Fraction(0)] * n
    u[i], u[j] = Fraction(1), Fraction(-1)
    return GHFactor.exact(2, u)


def permutation_transpositions(p) -> list[tuple[int, int]]:
    """Transpositions ``t_1, ..., t_r`` (applied first to last) whose product is the image list ``p``;
    ``r = moved points - cycles``. A cycle ``c_0 -> c_1 -> ... -> c_{l-1} -> c_0`` is ``(c_0 c_1)`` then
    ``(c_0 c_2)`` ... then ``(c_0 c_{l-1})``."""
    out = []
    for cyc in S.cycles(p):
        for j in range(1, len(cyc)):
            out.append((cyc[0], cyc[j]))
    return out


def permutation_factors(p) -> list[GHFactor]:
    """GH factors (beta = 2) whose product ``G_r ... G_1`` is the permutation matrix ``P(p)[p[i], i] = 1``."""
    n = len(p)
    return [transposition_factor(i, j, n) for i, j in permutation_transpositions(p)]


def permutation_transition(p) -> Transition:
    """The Transition of the permutation matrix ``P(p)`` with its transposition factors (exact 0/1 matrix built
    directly: multiplying the exact factor matrices costs O(r n^3) Fractions per letter)."""
    n = len(p)
    facs = permutation_factors(p)
    A_ex = [[Fraction(int(int(p[j]) == i)) for j in range(n)] for i in range(n)]
    A = np.zeros((n, n))
    A[np.asarray(p, dtype=np.int64), np.arange(n)] = 1.0
    return Transition(A, np.zeros(n), facs, A_ex, [Fraction(0)] * n)


def _orbits(gens: np.ndarray) -> list[list[int]]:
    n = gens.shape[1]
    seen = [False] * n
    orbs = []
    for s in range(n):
        if seen[s]:
            continue
        orb = [s]
        seen[s] = True
        k = 0
        while k < len(orb):
            x = orb[k]
            for g in gens:
                y = int(g[x])
                if not seen[y]:
                    seen[y] = True
                    orb.append(y)
            k += 1
        orbs.append(sorted(orb))
    return orbs


def _restrict(gens: np.ndarray, points: list[int]) -> np.ndarray:
    idx = {p: i for i, p in enumerate(points)}
    return np.array([[idx[int(g[p])] for p in points] for g in gens], dtype=np.int64).reshape(len(gens), len(points))


def natural_representation(G: S.PermGroup) -> np.ndarray:
    """The action of G on its points, restricted to a set of orbits that is still faithful (orbits are dropped
    greedily, largest first). Returns the images of G's generators. The trivial group gets degree 1."""
    if G.order == 1:
        return np.zeros((len(G.gens), 1), dtype=np.int64)
    orbs = _orbits(G.gens)
    keep = list(orbs)
    for orb in sorted(orbs, key=len, reverse=True):
        trial = [o for o in keep if o is not orb]
        if not trial:
            continue
        pts = sorted(p for o in trial for p in o)
        if S.check_homomorphism(G, _restrict(G.gens, pts)) is None:
            keep = trial
    pts = sorted(p for o in keep for p in o)
    return _restrict(G.gens, pts)


def _library_representation(G: S.PermGroup):
    """Images of G's generators under lrnnkit.automata.embeddings.minimal_faithful_permutation_representation
    (given the group by G's generators only: closing all letters of a word-problem automaton would cost
    ``|G|`` x ``|Sigma|`` products), or None for the trivial group given by no generators."""
    if len(G.gens) == 0:
        return None
    sub = FSA(tuple(f"g{i}" for i in range(len(G.gens))), np.asarray(G.gens).T.copy(), 0, name="generators")
    rep = minimal_faithful_permutation_representation(sub)
    return np.asarray(rep.images, dtype=np.int64).reshape(len(G.gens), rep.degree)


def minimal_representation(G: S.PermGroup) -> np.ndarray:
    """Images of G's generators under a faithful representation of least degree (checked faithful here)."""
    nat = natural_representation(G)
    lib = _library_representation(G) if nat.shape[1] > 2 else None
    if lib is not None and lib.shape[1] < nat.shape[1]:
        gen_images = lib
        why = S.check_homomorphism(G, gen_images)
        if why:
            raise AssertionError(f"minimal_faithful_permutation_representation returned a bad action: {why}")
        return gen_images
    return nat


def printed_bound_check(fsa) -> dict:
    """Compare the printed factor bound ``k - 1`` (k = most states moved by one letter, 000 Theorem 3) with the
    factors this construction uses. ``holds`` is False when some letter needs more than ``k - 1`` reflections."""
    model = build(fsa)
    k = max(int(np.sum(fsa.delta[:, a] != np.arange(fsa.n_states))) for a in range(fsa.n_letters))
    used = model.layers[0].max_factors()
    return {"k": k, "printed_bound": max(k - 1, 0), "used": used, "width": model.layers[0].width,
            "holds": used <= max(k - 1, 0)}


def cost(fsa) -> Cost:
    """Width n = degree of the minimal faithful representation; factors per token = max over letters of
    (moved points - cycles) of rho(letter) (the transposition factors of :func:`permutation_factors`). Computes
    the representation only (cached on the FSA), not the layer."""
    key = "lrnnkit.constructions.householder-permutation.cost"
    if key in fsa._cache:
        return fsa._cache[key]
    states, perms, G, gen_letters, letter_elem = S.group_of(fsa)
    gen_images = minimal_representation(G)
    rho = S.group_rep_images(G, gen_images)
    n = gen_images.shape[1]
    f = max((S.moved_points(rho[letter_elem[a]]) - len(S.cycles(rho[letter_elem[a]])) for a in range(fsa.n_letters)),
            default=0)
    fsa._cache[key] = c = Cost((int(n),), int(f))
    return c


def build(fsa, representation=None, **options) -> Model:
    """Compile a group automaton (000, Theorem 3). ``representation``: optional images of every letter as
    permutations of 0..n-1 (a faithful representation of T(A)); default: the minimal one found."""
    if options:
        raise InputError(f"{NAME}: unknown option(s) {sorted(options)}")
    r = S.group_of(fsa)
    if isinstance(r, str):
        raise InputError(f"{NAME}: {r}")
    states, perms, G, gen_letters, letter_elem = r
    if representation is not None:
        rep = np.asarray(representation, dtype=np.int64)
        if rep.ndim != 2 or rep.shape[0] != fsa.n_letters:
            raise InputError(f"{NAME}: representation must give one image list per letter, got shape {rep.shape}")
        if any(sorted(row) != list(range(rep.shape[1])) for row in rep.tolist()):
            raise InputError(f"{NAME}: representation rows must be permutations of 0..{rep.shape[1] - 1}")
        gen_images = rep[gen_letters]
        why = S.check_homomorphism(G, gen_images)
        if why:
            raise InputError(f"{NAME}: the given representation is not faithful: {why}")
    else:
        gen_images = minimal_representation(G)
    rho = S.group_rep_images(G, gen_images)
    n = gen_images.shape[1]
    if representation is not None:
        rep = np.asarray(representation, dtype=np.int64)
        for a in range(fsa.n_letters):
            if not np.array_equal(rho[letter_elem[a]], rep[a]):
                raise InputError(f"{NAME}: representation is not a homomorphism at letter {fsa.alphabet[a]!r}")
    transitions = [permutation_transition(rho[letter_elem[a]]) for a in range(fsa.n_letters)]
    H0 = [Fraction(i + 1) for i in range(n)]
    refs = []
    names = []
    table = []
    q0 = states.index(fsa.start)
    for gi in range(G.order):
        p = rho[gi]
        ref = [Fraction(0)] * n
        for i in range(n):
            ref[int(p[i])] = H0[i]
        refs.append(ref)
        names.append(S.perm_name(p))
        table.append(S.output_index(fsa, states[int(G.elements[gi][q0])]))
    dec = S.nearest_decoder(refs, names)
    layer = Layer("gh", n, transitions, np.array([float(x) for x in H0]), S.input_identity(fsa), dec, H0,
                  symbol_names=list(fsa.alphabet), coords=[f"point {i}" for i in range(n)],
                  name="permutation representation")
    labels = S.output_labels(fsa)
    readout = S.readout_from_layer(0, table, G.order, len(labels))
    return Model(list(fsa.alphabet), [layer], readout, labels, name=f"{NAME}({fsa.name})",
                 notes={"group_order": G.order, "representation_degree": n})


register(Construction(
    name=NAME, paper="000", statement="Theorem 3",
    applies_to="automata whose transition monoid is a group",
    build=build, applicable=S.not_group_reason,
    layers="1",
    width="n = least degree of a faithful permutation representation of T(A)",
    factors_per_token="max over letters of (moved points - cycles) of rho(letter) <= n - 1 "
                      "(printed: k - 1, k = most states moved by one letter)",
    priority=10, cost=cost,
    notes="H0 = (1..n), B = 0, A(w) = permutation matrix = product of transposition reflections G(2, e_i - e_j); "
          "nearest-reference decoder over the |T(A)| reachable states",
    options={"representation": "image list per letter of a faithful permutation representation"},
))
