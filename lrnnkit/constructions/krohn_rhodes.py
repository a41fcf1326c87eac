"""Any automaton as a multi-layer LRNN through a Krohn-Rhodes (holonomy) cascade (paper 000, Theorem 4, proof in
Appendix C.3-C.4).

Statement (000, Theorem 4, as printed): every FSA ``A = (Sigma, Q, q0, delta)`` is implemented by a finite
precision LRNN with ``s <= 2^|Q|`` layers of the form (1), each of width ``n <= |Q|``, ``A: -> M^n_n([-1, 1])``
(products of at most n GH matrices) and ``B: -> N^n``. The proof cascades permutation-reset automata (000,
Theorem 5): a permutation letter becomes a permutation matrix, a product of reflections ``G(2, e_i - e_j)``
(a permutation with c cycles on m points uses m - c of them); a reset letter becomes ``A = 0 = prod_i (I - e_i
e_i^T)`` (m GH factors with beta = 1) and ``B`` = the one-hot target.

The cascade here is the holonomy decomposition (lrnnkit.automata.holonomy): level l is a permutation-reset
automaton on the tiles of the representatives at depth l + 1; the cascade state is a code (one coordinate per
level) of a tile chain, decoded to the automaton state.

**What the layers read, and why the lag is 1.** In the cascade product (000, Definition 1)
``delta''((q, q'), w) = (delta(q, w), delta'(q', (q, w)))`` the lower component reads the *old* state q of the
higher one together with the current letter; the holonomy lift is the same (level l's map depends on the old
coordinates above l). The printed proof (C.4) instead feeds layer i with ``y^(i-1)_t``, which holds the *new* state
``delta^(i-1)(q0, w_1..w_t)`` of the layer above: that is a different product, and in general the old state
cannot be recovered from the new one and the letter (a reset forgets it). So this construction reads the higher
levels with a token shift (lag 1, docs/conventions.rst allows short causal windows): at step t level l sees ``x_t`` and the
levels above at step t - 1 (before the sequence start, the BOS pad stands for the initial code). The printed
wiring (lag 0) is kept as the construction ``krohn-rhodes-as-printed``; its certification fails with a
counterexample (see :func:`printed_counterexample`). Without token shifts the same fix fits eq. (1) by one
extra "delay" layer per level (state [e_{y_t}; e_{y_{t-1}}], A = swap-blocks x projection, a product of GH
factors); we use the token shift, which costs nothing.

**Layers.** Reading every higher level at lag 1 would make the input tables as large as the product of the level
sizes. Instead what the lower levels need from the higher coordinates, the *chain state* (see
:func:`cascade_table`: the current set of the old tile chain and of the new chain of every letter), is carried by
*chain-state layers*: for the levels l = 1..h (h = number of levels)

* level layer ``L_l`` (width m_l = number of points of level l, one-hot state): reads the model input (lag 0) and
  the chain-state layer of level l - 1 (lag 1; for l = 2 that is ``L_1`` itself, whose coordinate determines the
  chain state); its symbol is the level map (a holonomy permutation as m - c reflections, a constant as m
  beta=1 factors plus B = e_target); its decoder is the nearest one-hot (the coordinate c_l);
* chain-state layer ``K_l`` (2 <= l <= h - 1, width 1): reads ``K_{l-1}`` (or ``L_1``) and ``L_l`` at lag 0; its
  symbol is the index j of the new chain state; A = 0 (one GH factor, beta = 1), B = j; decoder: nearest integer
  (W = j, c = -j^2 / 2);
* the readout reads the last chain state and ``L_h`` (lag 0) and maps them to the automaton's output label.

So the model has h + max(h - 2, 0) layers; the level widths are the holonomy level sizes. Table entries of
unreachable (chain state, letter) pairs are 0: the certifier only visits reachable pairs.

**Refinement** (``refine=True``): a level with one representative whose holonomy group H is solvable and
transitive on its k tiles, and whose composition series H = H_0 > ... > H_r = 1 has sum [H_{i-1} : H_i] < k, is
compiled as r sub-layers, one per composition factor, acting on right cosets (see :func:`_refinement`): e.g. a
Z_6 level of width 6 becomes widths 2 + 3, Z_8 becomes 2 + 2 + 2. Sub-layer i reads the input, the chain state
above the level (lag 1) and sub-layers 1..i-1 (lag 1); the chain-state layer (or readout) after the level reads
all sub-layers (lag 0; after a refined first level a chain-state layer is added too).

Theorem 4's bounds are compared in :func:`compile_report`: the number of holonomy levels is at most the number of
classes of images (< :math:`2^{|Q|}`); a level's width (tiles of its representatives) can exceed ``|Q|`` when several
representatives share a depth (``split="depth"``, SgpDec's levels) or when a set has more than ``|Q|`` tiles;
``split="class"`` gives each class its own level. ``depth_rule`` picks the level of each class: "sgpdec" (default,
SgpDec >= 0.9.8's direct depth, as SgpDec 1.2.0 prints) or "sgpdec-0.9.7" (heights); both certify.
"""
from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np

from ..automata.holonomy import DEPTH_RULES, Holonomy, holonomy_decomposition
from ..errors import InputError, SizeLimitError
from ..model import Decoder, GHFactor, Layer, Model, Read, TableMap, Transition
from .registry import Construction, get, register
from ..automata.holonomy import refinement_report
from ..certify import certify

NAME = "krohn-rhodes"
PRINTED = "krohn-rhodes-as-printed"
MAX_REACHABLE_CODES = 200_000

__all__ = ["build", "build_as_printed", "compile_report", "reflection_factors", "reset_factors", "cascade_table",
           "printed_counterexample", "NAME", "PRINTED"]


# --------------------------------------------------------------------------- GH factor builders
def _swap(i: int, j: int, m: int) -> GHFactor:
    u = [Fraction(0)] * m
    u[i], u[j] = Fraction(1), Fraction(-1)
    return GHFactor.exact(2, u)


def reflection_factors(perm) -> list[GHFactor]:
    """A permutation (image list, point q -> perm[q]; matrix P[perm[q], q] = 1) as m - c reflections
    G(2, e_i - e_j), applied first to last: a cycle c_0 -> c_1 -> ... -> c_{k-1} is (c_0 c_1), (c_0 c_2), ...,
    (c_0 c_{k-1})."""
    m = len(perm)
    seen = [False] * m
    out = []
    for s in range(m):
        if seen[s]:
            continue
        cyc = [s]
        seen[s] = True
        x = perm[s]
        while x != s:
            cyc.append(x)
            seen[x] = True
            x = perm[x]
        for j in range(1, len(cyc)):
            out.append(_swap(cyc[0], cyc[j], m))
    return out


def reset_factors(m: int) -> list[GHFactor]:
    """``0 = prod_i (I - e_i e_i^T)``: m GH factors with beta = 1 (000, Appendix C.4)."""
    out = []
    for i in range(m):
        u = [Fraction(0)] * m
        u[i] = Fraction(1)
        out.append(GHFactor.exact(1, u))
    return out


# --------------------------------------------------------------------------- the reachable cascade
def cascade_table(fsa, hd: Holonomy, *, max_codes: int = MAX_REACHABLE_CODES) -> dict:
    """The cascade restricted to the codes reachable from a code of the start state.

    Returns ``codes`` (list; ``codes[0]`` is the start code), ``next[i][a]`` (index of the successor code),
    ``keys[b][i]`` (the *chain state* of code i after its first b coordinates, see below) and
    ``maps[(level, key, a)]`` = the level map (canonical form) of letter a at a code whose chain state before that
    level is ``key``.

    Chain state. The lift (holonomy module docstring, item 8) reads the coordinates top down and needs, before
    level b, only the first old set of level >= b and, for every letter s, the first set of level >= b of the new
    chain of s: ``key_b = (P, Q_s1, ..., Q_sk)`` (set indices). The level-b map is a function of key_b, and
    key_{b+1} a function of key_b and coordinate b. Carrying key_b instead of the whole prefix (c_1..c_b) keeps
    the tables small (a random 10-state automaton: at most ~200 keys against ~4000 prefixes). Both functional
    dependencies, and the action property on every reachable transition, are asserted here."""
    start = hd.code_of(fsa.start)
    gens = hd.generators
    memos = [dict() for _ in gens]
    index = {start: 0}
    codes = [start]
    nxt: list = []
    delta = fsa.delta.tolist()
    point = {start: hd.decode(start)}
    acts_of: list = []
    i = 0
    while i < len(codes):
        code = codes[i]
        p = point[code]
        row = []
        arow = []
        for a, g in enumerate(gens):
            acts = hd.lift_actions(g, code, memos[a])
            new = hd.act(acts, code)
            q = point.get(new)
            if q is None:
                q = point[new] = hd.decode(new)
            if q != delta[p][a]:
                raise AssertionError(f"holonomy lift broke the action at code {code}, letter {a}")
            j = index.get(new)
            if j is None:
                j = len(codes)
                index[new] = j
                codes.append(new)
                if len(codes) > max_codes:
                    raise SizeLimitError(f"{NAME}: more than {max_codes} reachable cascade states "
                                         f"({hd.n_levels} levels, level sizes {hd.level_size})")
            row.append(j)
            arow.append(acts)
        nxt.append(row)
        acts_of.append(arow)
        i += 1
    # chain states
    h = hd.n_levels
    levs = [hd.level_of_set(j) for j in range(len(hd.sets))]
    # firsts[ci][b] = the first set of code ci's chain with level >= b (one sweep per chain)
    firsts = []
    for c in codes:
        chain = hd.decode_chain(c)
        fb = []
        j = 0
        for bnd in range(h + 1):
            while levs[chain[j]] < bnd:
                j += 1
            fb.append(chain[j])
        firsts.append(fb)
    keys = [[(firsts[ci][bnd],) + tuple(firsts[nxt[ci][a]][bnd] for a in range(len(gens)))
             for ci in range(len(codes))] for bnd in range(h + 1)]
    maps: dict = {}
    canon: dict = {}
    for ci in range(len(codes)):
        for a in range(len(gens)):
            for lev, act in enumerate(acts_of[ci][a]):
                key = (lev, keys[lev][ci], a)
                ck = (lev, act)
                k = canon.get(ck)
                if k is None:
                    k = canon[ck] = _canon_map(hd, lev, act)
                prev = maps.setdefault(key, k)
                if prev is not k and prev != k:   # impossible by the lift's construction
                    raise AssertionError(f"level {lev} map is not a function of the chain state {keys[lev][ci]}")
    return {"codes": codes, "next": nxt, "keys": keys, "maps": maps, "start": 0, "point": point}


def _canon_map(hd: Holonomy, lev: int, act) -> tuple:
    """A level map as ("const", point) or ("perm", image list on all points of the level)."""
    if act[0] == "const":
        return act
    _, c, perm = act
    full = list(range(hd.level_size[lev]))
    o = hd.offset[c]
    for k, x in enumerate(perm):
        full[o + k] = o + x
    return ("perm", tuple(full))


# --------------------------------------------------------------------------- the model
def _one_hot(m: int, p: int) -> list:
    v = [Fraction(0)] * m
    v[p] = Fraction(1)
    return v


def _transition(key: tuple, m: int) -> Transition:
    """The layer transition of a level map. A is written down directly (a permutation matrix, or 0) instead of
    multiplying the factors out exactly (O(m^3) Fractions per factor); tests check that the factors multiply to
    A exactly, and the certifier re-checks the float product."""
    if key[0] == "const":
        A_ex = [[Fraction(0)] * m for _ in range(m)]
        B_ex = _one_hot(m, key[1])
        return Transition(np.zeros((m, m)), np.array([float(x) for x in B_ex]), reset_factors(m), A_ex, B_ex)
    perm = key[1]
    A_ex = [[Fraction(0)] * m for _ in range(m)]
    A = np.zeros((m, m))
    for q, r in enumerate(perm):
        A_ex[r][q] = Fraction(1)
        A[r, q] = 1.0
    return Transition(A, np.zeros(m), reflection_factors(perm), A_ex, [Fraction(0)] * m)


def _prefix_transition(j: int) -> Transition:
    """Width-1 reset to the value j: A = 0 = G(1, e_1), B = j."""
    return Transition(np.zeros((1, 1)), np.array([float(j)]), reset_factors(1), [[Fraction(0)]], [Fraction(j)])


def _functional(pairs, what: str) -> dict:
    """dict from (x, y) pairs, asserting that y is a function of x."""
    out: dict = {}
    for x, y in pairs:
        if out.setdefault(x, y) != y:   # impossible: the lift is a transducer over the levels
            raise AssertionError(f"{NAME}: {what} is not a function of its inputs at {x}")
    return out


def _sym(sym_of: dict, syms: list, key) -> int:
    s = sym_of.get(key)
    if s is None:
        s = sym_of[key] = len(syms)
        syms.append(key)
    return s


def _sym_name(key) -> str:
    return f"const {key[1]}" if key[0] == "const" else "perm " + ",".join(map(str, key[1]))


def _level_map(cas, kvals, kidx, lev, vals, state_src, lag):
    """The level map for the values read above a level: (letter,) or (letter, chain-state source value);
    the BOS pad (lag 1) stands for the start code's chain state. None for unreachable combinations."""
    a = vals[0]
    if lev == 0:
        return cas["maps"].get((0, kvals[0][kidx[0][0]], a))
    val2state = state_src[lev - 1][1]
    v = vals[1]
    st_ = kidx[lev][0] if (lag and v == len(val2state)) else val2state[v]
    if st_ is None:
        return None
    return cas["maps"].get((lev, kvals[lev][st_], a))


# --------------------------------------------------------------------------- refinement into simple factors
MAX_REFINE_ORDER = 5000


def _refinement(hd: Holonomy, lev: int) -> dict | None:
    """Coset coordinates of a level's holonomy group along a composition series, when that lowers the width.

    Applies to a level with one representative whose holonomy group H is transitive on its k tiles and
    solvable (sympy's composition_series), with sum_i [H_{i-1} : H_i] < k and ``|H|`` <= MAX_REFINE_ORDER. A point p
    is represented by a group element g with base.g = p (base = tile 0). Write g = h_1 t_1 with t_1 in a fixed
    transversal of the right cosets of H_1 in H_0, then h_1 = h_2 t_2 (t_2 a transversal element of H_2 in
    H_1), ...: g = t_r ... t_2 t_1 ("first t_r"); coordinate i is the index of the right coset H_i t_i. Right multiplication by h updates coordinate 1 by the coset action of h and passes
    u_1 = t_1 h t_1'^{-1} in H_1 down, and so on: a cascade of permutation groups on H_{i-1} / H_i (the
    composition factors) whose maps depend only on the coordinates above (Krohn-Rhodes for groups). A reset to
    the point p resets every coordinate to those of a fixed g_p with base.g_p = p."""
    cl = hd.level_classes[lev]
    if len(cl) != 1:
        return None
    c = cl[0]
    k = len(hd.tiles[c])
    gens = hd.schreier[c]
    if not gens:
        return None
    from sympy.combinatorics import Permutation, PermutationGroup
    G = PermutationGroup([Permutation(list(p), size=k) for p in gens])
    if G.order() > MAX_REFINE_ORDER or not G.is_transitive() or not G.is_solvable:
        return None
    series = G.composition_series()
    idx = [int(series[i].order() // series[i + 1].order()) for i in range(len(series) - 1)]
    if sum(idx) >= k:
        return None
    elems = [tuple(g.array_form) for g in series[0].generate()]
    ident = tuple(range(k))

    def mul(x, y):   # first x, then y
        return tuple(y[i] for i in x)

    def inv(x):
        out = [0] * k
        for i, v in enumerate(x):
            out[v] = i
        return tuple(out)

    sub_elems = [set(tuple(g.array_form) for g in S.generate()) for S in series]
    # right cosets H_i t inside H_{i-1}, with a transversal (first element in a fixed order)
    coset_of: list = []      # coset_of[i][g] for g in H_i-1... index
    reps: list = []
    for i in range(1, len(series)):
        Hi = sub_elems[i]
        parent = sorted(sub_elems[i - 1])
        cof: dict = {}
        rp: list = []
        for g in parent:
            if g in cof:
                continue
            j = len(rp)
            rp.append(g)
            for hh in Hi:
                cof[mul(hh, g)] = j
        coset_of.append(cof)
        reps.append(rp)
    coords: dict = {}
    for g in elems:
        cur, xs = g, []
        for i in range(len(idx)):
            j = coset_of[i][cur]
            xs.append(j)
            cur = mul(cur, inv(reps[i][j]))
        assert cur == ident
        coords[g] = tuple(xs)
    point_of_coords = {xs: g[0] for g, xs in coords.items()}
    element_of_point: dict = {}
    for g in sorted(elems):
        element_of_point.setdefault(g[0], g)
    return {"indices": idx, "coords": coords, "point_of_coords": point_of_coords,
            "element_of_point": element_of_point, "reps": reps, "coset_of": coset_of, "mul": mul, "inv": inv,
            "k": k}


def _sub_map(ref: dict, i: int, above: list, key: tuple) -> tuple:
    """The map of coordinate i of a refined level, given the old coordinates above it in the level and the
    level map (a tile permutation h, or a reset to a tile)."""
    if key[0] == "const":
        return ("const", ref["coords"][ref["element_of_point"][key[1]]][i])
    mul, inv, reps, coset_of = ref["mul"], ref["inv"], ref["reps"], ref["coset_of"]
    u = tuple(key[1])
    for j in range(i):
        t = reps[j][above[j]]
        tu = mul(t, u)
        t2 = reps[j][coset_of[j][tu]]
        u = mul(tu, inv(t2))          # t u = u' t'  with u' in H_j:  u' = t u t'^{-1}
    return ("perm", tuple(coset_of[i][mul(reps[i][x], u)] for x in range(len(reps[i]))))


def build(fsa, split: str = "depth", *, token_shift: bool = True, refine: bool = False,
          max_codes: int = MAX_REACHABLE_CODES, depth_rule: str = "sgpdec", **options) -> Model:
    """Compile ``fsa`` through its holonomy cascade (module docstring). ``split``: "depth" (one level per
    depth, SgpDec) or "class" (one level per class of images). ``depth_rule``: "sgpdec" (SgpDec >= 0.9.8's
    direct depth, the default) or "sgpdec-0.9.7" (heights), see lrnnkit.automata.holonomy. ``token_shift=False``
    builds the printed wiring (000, C.4: lower layers read the NEW states above; not a correct cascade in
    general).

    Long: the cascade's layers are wired level by level over tables the levels share (codes, keys, the readout);
    one pass top to bottom keeps the wiring of 000, C.4 readable in the order the paper states it."""
    if options:
        raise InputError(f"{NAME}: unknown option(s) {sorted(options)} "
                         "(options: split, token_shift, refine, max_codes, depth_rule)")
    if split not in ("depth", "class"):
        raise InputError(f"{NAME}: split must be 'depth' or 'class', got {split!r}")
    if depth_rule not in DEPTH_RULES:
        raise InputError(f"{NAME}: depth_rule must be one of {', '.join(DEPTH_RULES)}, got {depth_rule!r}")
    hd = holonomy_decomposition(fsa, levels=split, depth_rule=depth_rule)
    labels = list(fsa.output_alphabet)
    lab_index = {s: i for i, s in enumerate(labels)}
    name = PRINTED if not token_shift else NAME
    k = fsa.n_letters
    h = hd.n_levels
    if h == 0:   # one state: a constant automaton
        layer = Layer("gh", 1, [Transition.from_factors([], 1)], np.array([1.0]),
                      TableMap([Read("input", 0)], [k], np.zeros(k, dtype=np.int64), 1),
                      Decoder.nearest([[Fraction(1)]], ["q0"]), [Fraction(1)], symbol_names=["identity"],
                      coords=["the only state"], name="trivial level")
        readout = TableMap([Read(0, 0)], [1], [lab_index[fsa.outputs[0]]], len(labels))
        return Model(list(fsa.alphabet), [layer], readout, labels, name=f"{name}({fsa.name})",
                     notes={"levels": 0, "level_sizes": []})
    cas = cascade_table(fsa, hd, max_codes=max_codes)
    codes, keys = cas["codes"], cas["keys"]
    start = codes[0]
    # kvals[b] = distinct chain states after b levels, and the index of every code's chain state
    kvals: list = []
    kidx: list = []
    for bnd in range(h + 1):
        vals = sorted(set(keys[bnd]))
        kvals.append(vals)
        pos = {v: j for j, v in enumerate(vals)}
        kidx.append([pos[v] for v in keys[bnd]])

    layers: list = []
    lag = 1 if token_shift else 0
    # state_src[l] = (layer index, list: output value of that layer -> chain-state index after levels 0..l)
    state_src: list = []
    refined_levels: dict = {}
    level_labels = [lab_index[fsa.outputs[cas["point"][c]]] for c in codes]
    for lev in range(h):
        m = hd.level_size[lev]
        ref = _refinement(hd, lev) if refine else None
        reads_above, sizes_above, key_of_above = [Read("input", 0)], [k], []
        if lev > 0:
            src_layer, val2state = state_src[lev - 1]
            nv = len(val2state)
            reads_above.append(Read(src_layer, lag))
            sizes_above.append(nv + (1 if lag else 0))
        if ref is None:
            # one level layer, one-hot over the m points
            sym_of: dict = {}
            syms: list = []
            table = np.zeros(int(np.prod(sizes_above)), dtype=np.int64)
            for flat, vals in enumerate(itertools.product(*[range(z) for z in sizes_above])):
                key = _level_map(cas, kvals, kidx, lev, vals, state_src, lag)
                if key is not None:
                    table[flat] = _sym(sym_of, syms, key)
            if not syms:
                _sym(sym_of, syms, ("perm", tuple(range(m))))
            tm = TableMap(reads_above, sizes_above, table, len(syms))
            trans = [_transition(key, m) for key in syms]
            H0 = _one_hot(m, start[lev])
            dec = Decoder.nearest([_one_hot(m, p) for p in range(m)], [str(p) for p in range(m)])
            layers.append(Layer("gh", m, trans, np.array([float(x) for x in H0]), tm, dec, H0,
                                symbol_names=[_sym_name(key) for key in syms],
                                coords=[hd.describe_point(lev, p) for p in range(m)], name=f"level {lev + 1}"))
            coord_layers, coord_sizes = [len(layers) - 1], [m]

            def coord_fn(vals):
                return vals[0]
        else:
            # refined level: one sub-layer per composition factor, on the right cosets H_i \ H_{i-1}
            refined_levels[lev] = ref["indices"]
            g0 = ref["element_of_point"][start[lev]]
            x0 = ref["coords"][g0]
            sub_layers: list = []
            for i, ni in enumerate(ref["indices"]):
                reads = list(reads_above) + [Read(j, lag) for j in sub_layers]
                sizes = list(sizes_above) + [ref["indices"][j] + (1 if lag else 0) for j in range(i)]
                sym_of, syms = {}, []
                table = np.zeros(int(np.prod(sizes)), dtype=np.int64)
                for flat, vals in enumerate(itertools.product(*[range(z) for z in sizes])):
                    key = _level_map(cas, kvals, kidx, lev, vals[:len(sizes_above)], state_src, lag)
                    if key is None:
                        continue
                    above = [x0[j] if lag and v == ref["indices"][j] else v
                             for j, v in enumerate(vals[len(sizes_above):])]
                    table[flat] = _sym(sym_of, syms, _sub_map(ref, i, above, key))
                if not syms:
                    _sym(sym_of, syms, ("perm", tuple(range(ni))))
                tm = TableMap(reads, sizes, table, len(syms))
                H0 = _one_hot(ni, x0[i])
                dec = Decoder.nearest([_one_hot(ni, p) for p in range(ni)], [str(p) for p in range(ni)])
                layers.append(Layer("gh", ni, [_transition(key, ni) for key in syms],
                                    np.array([float(x) for x in H0]), tm, dec, H0,
                                    symbol_names=[_sym_name(key) for key in syms],
                                    coords=[f"level {lev + 1}, factor {i + 1} (order {ni}), coset {p}"
                                            for p in range(ni)], name=f"level {lev + 1}.{i + 1}"))
                sub_layers.append(len(layers) - 1)
            coord_layers, coord_sizes = sub_layers, list(ref["indices"])

            def coord_fn(vals, ref=ref):
                return ref["point_of_coords"].get(tuple(vals))
        # the chain state after this level (or the readout after the last one)
        if lev < h - 1:
            if lev == 0 and ref is None:
                f = _functional(((codes[ci][0], kidx[1][ci]) for ci in range(len(codes))), "chain state 1")
                state_src.append((coord_layers[0], [f.get(c) for c in range(m)]))
                continue
            f = _functional((((kidx[lev][ci], codes[ci][lev]), kidx[lev + 1][ci]) for ci in range(len(codes))),
                            f"chain state {lev + 1}")
            reads = ([Read(state_src[lev - 1][0], 0)] if lev > 0 else []) + [Read(j, 0) for j in coord_layers]
            sizes = ([len(state_src[lev - 1][1])] if lev > 0 else []) + coord_sizes
            nstates = len(kvals[lev + 1])
            ktab = np.zeros(int(np.prod(sizes)), dtype=np.int64)
            for flat, vals in enumerate(itertools.product(*[range(z) for z in sizes])):
                prev = state_src[lev - 1][1][vals[0]] if lev > 0 else kidx[0][0]
                c = coord_fn(vals[1:] if lev > 0 else vals)
                if prev is not None and c is not None:
                    ktab[flat] = f.get((prev, c), 0)
            ktrans = [_prefix_transition(j) for j in range(nstates)]
            j0 = kidx[lev + 1][0]
            kdec = Decoder.exact([[Fraction(j)] for j in range(nstates)],
                                 [-Fraction(j * j, 2) for j in range(nstates)], [f"s{j}" for j in range(nstates)])
            layers.append(Layer("gh", 1, ktrans, np.array([float(j0)]), TableMap(reads, sizes, ktab, nstates), kdec,
                                [Fraction(j0)], symbol_names=[f"chain state {j}" for j in range(nstates)],
                                coords=[f"index of the chain state after levels 1..{lev + 1}"],
                                name=f"chain state {lev + 1}"))
            state_src.append((len(layers) - 1, list(range(nstates))))
        else:
            # readout: (chain state before the last level, last coordinate) -> the point's output label
            f = _functional((((kidx[lev][ci], codes[ci][lev]), level_labels[ci]) for ci in range(len(codes))),
                            "readout")
            reads = ([Read(state_src[lev - 1][0], 0)] if lev > 0 else []) + [Read(j, 0) for j in coord_layers]
            sizes = ([len(state_src[lev - 1][1])] if lev > 0 else []) + coord_sizes
            tab = np.zeros(int(np.prod(sizes)), dtype=np.int64)
            for flat, vals in enumerate(itertools.product(*[range(z) for z in sizes])):
                prev = state_src[lev - 1][1][vals[0]] if lev > 0 else kidx[0][0]
                c = coord_fn(vals[1:] if lev > 0 else vals)
                if prev is not None and c is not None:
                    tab[flat] = f.get((prev, c), 0)
            readout = TableMap(reads, sizes, tab, len(labels))
    notes = {"levels": h, "level_sizes": list(hd.level_size), "split": split, "depth_rule": depth_rule,
             "token_shift": token_shift,
             "refined_levels": {str(l_ + 1): v for l_, v in refined_levels.items()},
             "reachable_codes": len(codes), "images": len(hd.sets),
             "holonomy": hd.summary()}
    return Model(list(fsa.alphabet), layers, readout, labels, name=f"{name}({fsa.name})",
                 notes=notes)


def build_as_printed(fsa, split: str = "depth", **options) -> Model:
    """The wiring of the printed proof (000, Appendix C.4): layer i reads the outputs y^(i-1)_t of the layer
    above at the SAME step (lag 0), i.e. the new states of the higher levels. Kept for the record; it fails
    certification on automata whose cascade has two or more levels (see :func:`printed_counterexample`)."""
    return build(fsa, split, token_shift=False, **options)


# --------------------------------------------------------------------------- reports
def compile_report(fsa, model: Model | None = None, *, split: str = "depth") -> dict:
    """Layers, widths and factors per token of the compiled model, against Theorem 4's bounds (at most :math:`2^{|Q|}`
    layers, width at most ``|Q|``) and, for group automata, against the one-layer construction of Theorem 3."""
    if model is None:
        model = build(fsa, split)
    n = fsa.n_states
    level_layers = [L for L in model.layers if L.name.startswith("level") or L.name == "trivial level"]
    fac = [L.max_factors() for L in model.layers]
    rep = {
        "automaton_states": n,
        "levels": int(model.notes.get("levels", len(level_layers))),
        "layers": len(model.layers),
        "level_widths": [L.width for L in level_layers],
        "widths": model.widths,
        "factors_per_token": fac,
        "max_factors_per_token": max(fac),
        "reachable_codes": model.notes.get("reachable_codes"),
        "theorem4": {
            "layer_bound": 2 ** n, "width_bound": n,
            "layers_within_bound": len(model.layers) <= 2 ** n,
            "level_widths_within_bound": all(L.width <= n for L in level_layers),
            "factor_bound": n,
            "factors_within_bound": max(fac) <= n,
        },
        "group_construction": None,
        "refinement": None,
    }
    if level_layers and model.notes.get("levels", 0):
        hd = holonomy_decomposition(fsa, levels=model.notes.get("split", split),
                                    depth_rule=model.notes.get("depth_rule", "sgpdec"))
        rr = refinement_report(hd)
        refined = [sum(c["refined_points"] if c["lowers_width"] else c["points"] for c in lev) for lev in rr]
        rep["refinement"] = {"level_widths_if_refined": refined,
                             "lowers_width": any(r < w for r, w in zip(refined, hd.level_size)),
                             "components": rr,
                             "note": "composition-series refinement of the holonomy groups; build(..., refine=True) "
                                     "compiles it for single-representative levels with a transitive solvable group"}
    perms = [fsa.delta[:, a] for a in range(fsa.n_letters)]
    if all(sorted(p.tolist()) == list(range(n)) for p in perms):
        # Theorem 3: one layer, the letters' permutation matrices (its registered construction may use a smaller
        # faithful representation; this is the natural one on the states)
        moved = [n - _n_cycles(p) for p in perms]
        rep["group_construction"] = {"layers": 1, "width": n, "max_factors_per_token": max(moved)}
        try:
            g = get("householder-permutation").build(fsa)
            rep["group_construction"] = {"layers": len(g.layers), "width": g.widths[0],
                                         "max_factors_per_token": g.layers[0].max_factors(),
                                         "construction": "householder-permutation"}
        except Exception:  # the Theorem 3 module may refuse (e.g. unreachable states); keep the natural one
            pass
    return rep


def _n_cycles(p) -> int:
    p = [int(x) for x in p]
    seen = [False] * len(p)
    c = 0
    for s in range(len(p)):
        if not seen[s]:
            c += 1
            x = s
            while not seen[x]:
                seen[x] = True
                x = p[x]
    return c


def printed_counterexample(fsa, split: str = "depth") -> dict:
    """Certify the printed wiring (lag 0) and the corrected one (lag 1) on ``fsa``; returns both verdicts and
    the shortest failing word of the printed one (None if it happens to pass)."""
    bad = certify(build_as_printed(fsa, split), fsa, float_steps=200)
    good = certify(build(fsa, split), fsa, float_steps=200)
    return {"printed_certified": bad.certified, "counterexample": bad.counterexample, "expected": bad.expected,
            "got": bad.got, "corrected_certified": good.certified}


_THIS = register(Construction(
    name=NAME, paper="000", statement="Theorem 4",
    applies_to="any automaton",
    build=build, applicable=None,
    layers="h level layers + max(h - 2, 0) chain-state layers, h = depth of the holonomy cascade (<= number of image "
           "classes < 2^|Q|)",
    width="level l: number of tiles of the representatives at depth l (split='class': tiles of one set)",
    factors_per_token="level l: m_l (reset: A = 0 as m_l beta=1 factors) or m - cycles reflections; "
                      "chain-state layers: 1",
    priority=-10,
    notes="holonomy decomposition (SgpDec algorithm); lower levels read the higher levels with a token shift "
          "(lag 1), as the cascade product requires; the printed proof's lag-0 wiring is krohn-rhodes-as-printed",
    options={"split": "'depth' (SgpDec levels) or 'class' (one level per class of images)",
             "token_shift": "True (correct); False = the printed wiring",
             "refine": "split solvable holonomy groups into composition factors where that lowers the width",
             "depth_rule": "'sgpdec' (SgpDec >= 0.9.8 direct depth, default) or 'sgpdec-0.9.7' (heights)"},
))

# the documentation's instance (lrnnkit.showcase.docgen): a cascade of three levels, a reset level and the groups Z_2
# and Z_3 (mod-3 arithmetic with signs), rather than the one-level automaton the ranking would pick
_THIS.example = "mod-arith:3"

register(Construction(
    name=PRINTED, paper="000", statement="Theorem 4",
    applies_to="any automaton (incorrect in general: see krohn-rhodes)",
    build=build_as_printed, applicable=None,
    layers="as krohn-rhodes", width="as krohn-rhodes", factors_per_token="as krohn-rhodes",
    priority=-100, variant_of=NAME,
    notes="the proof of 000 Theorem 4 (Appendix C.4) feeds each layer the NEW state of the layer above (lag 0); "
          "the cascade product needs the old one. Fails certification on cascades with >= 2 levels.",
    options={"split": "'depth' or 'class'", "depth_rule": "'sgpdec' or 'sgpdec-0.9.7'"},
))
