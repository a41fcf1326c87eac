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
levels with a token shift (lag 1, DESIGN.md allows short causal windows): at step t level l sees ``x_t`` and the
levels above at step t - 1 (before the sequence start, the BOS pad stands for the initial code). The printed
wiring (lag 0) is kept as the construction ``krohn-rhodes-as-printed``; its certification fails with a
counterexample (see :func:`printed_counterexample`). Without token shifts the same fix fits eq. (1) by one
extra "delay" layer per level (state [e_{y_t}; e_{y_{t-1}}], A = swap-blocks x projection, a product of GH
factors); we use the token shift, which costs nothing.

**Layers.** Reading every higher level at lag 1 would make the input tables as large as the product of the level
sizes. Instead the prefix (c_1, ..., c_l) of the code is carried by *prefix layers*: for the levels
l = 1..h (h = number of levels)

* level layer ``L_l`` (width m_l = number of points of level l, one-hot state): reads the model input (lag 0) and
  the prefix layer of level l - 1 (lag 1; for l = 2 that is ``L_1`` itself); its symbol is the level map (a
  holonomy permutation as m - c reflections, a constant as m beta=1 factors plus B = e_target); its decoder is the
  nearest one-hot (the coordinate c_l);
* prefix layer ``K_l`` (2 <= l <= h - 1, width 1): reads ``K_{l-1}`` (or ``L_1``) and ``L_l`` at lag 0, its
  symbol is the index j of the new prefix among the reachable prefixes; A = 0 (one GH factor, beta = 1),
  B = j; decoder: nearest integer (W = j, c = -j^2 / 2);
* the readout reads the last prefix and ``L_h`` (lag 0) and maps the code to the automaton's output label.

So the model has h + max(h - 2, 0) layers; the level widths are the holonomy level sizes. Table entries of
unreachable (prefix, letter) pairs are 0: the certifier only visits reachable pairs.

Theorem 4's bounds are compared in :func:`compile_report`: the number of holonomy levels is at most the number of
classes of images (< 2^|Q|); a level's width (tiles of its representatives) can exceed |Q| when several
representatives share a depth (``split="depth"``, SgpDec's levels) or when a set has more than |Q| tiles;
``split="class"`` gives each class its own level.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..automata.holonomy import Holonomy, holonomy_decomposition
from ..errors import InputError, SizeLimitError
from ..model import Decoder, GHFactor, Layer, Model, Read, TableMap, Transition
from .registry import Construction, register

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
    """The cascade restricted to the codes reachable from a code of the start state: ``codes`` (list),
    ``next[i][a]`` (index of the successor code), ``maps[(level, prefix, a)]`` = level map (canonical key),
    ``start`` (index 0). Asserts the action property on every reachable transition."""
    start = hd.code_of(fsa.start)
    gens = hd.generators
    memos = [dict() for _ in gens]
    index = {start: 0}
    codes = [start]
    nxt: list = []
    maps: dict = {}
    delta = fsa.delta.tolist()
    point = {start: hd.decode(start)}
    i = 0
    while i < len(codes):
        code = codes[i]
        p = point[code]
        row = []
        for a, g in enumerate(gens):
            acts = hd.lift_actions(g, code, memos[a])
            new = hd.act(acts, code)
            q = point.get(new)
            if q is None:
                q = point[new] = hd.decode(new)
            if q != delta[p][a]:
                raise AssertionError(f"holonomy lift broke the action at code {code}, letter {a}")
            for lev, act in enumerate(acts):
                key = (lev, code[:lev], a)
                k = _canon_map(hd, lev, act)
                prev = maps.setdefault(key, k)
                if prev != k:
                    raise AssertionError(f"holonomy lift is not a cascade at level {lev}, prefix {code[:lev]}")
            j = index.get(new)
            if j is None:
                j = len(codes)
                index[new] = j
                codes.append(new)
                if len(codes) > max_codes:
                    raise SizeLimitError(f"{NAME}: more than {max_codes} reachable cascade states "
                                         f"({hd.n_levels} levels, level sizes {hd.level_size})")
            row.append(j)
        nxt.append(row)
        i += 1
    return {"codes": codes, "next": nxt, "maps": maps, "start": 0}


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


def build(fsa, split: str = "depth", *, token_shift: bool = True, max_codes: int = MAX_REACHABLE_CODES,
          **options) -> Model:
    """Compile ``fsa`` through its holonomy cascade (module docstring). ``split``: "depth" (one level per
    depth, SgpDec) or "class" (one level per class of images). ``token_shift=False`` builds the printed wiring
    (000, C.4: lower layers read the NEW states above; not a correct cascade in general)."""
    if options:
        raise InputError(f"{NAME}: unknown option(s) {sorted(options)} (options: split, token_shift, max_codes)")
    if split not in ("depth", "class"):
        raise InputError(f"{NAME}: split must be 'depth' or 'class', got {split!r}")
    hd = holonomy_decomposition(fsa, levels=split)
    labels = list(fsa.output_alphabet)
    lab_index = {s: i for i, s in enumerate(labels)}
    name = PRINTED if not token_shift else NAME
    prov = {"construction": name, "paper": "000", "statement": "Theorem 4", "automaton": fsa.to_dict(),
            "automaton_hash": fsa.content_hash()}
    k = fsa.n_letters
    h = hd.n_levels
    if h == 0:   # one state: a constant automaton
        layer = Layer("gh", 1, [Transition.from_factors([], 1)], np.array([1.0]),
                      TableMap([Read("input", 0)], [k], np.zeros(k, dtype=np.int64), 1),
                      Decoder.nearest([[Fraction(1)]], ["q0"]), [Fraction(1)], symbol_names=["identity"],
                      coords=["the only state"], name="trivial level")
        readout = TableMap([Read(0, 0)], [1], [lab_index[fsa.outputs[0]]], len(labels))
        return Model(list(fsa.alphabet), [layer], readout, labels, name=f"{name}({fsa.name})", provenance=prov,
                     notes={"levels": 0, "level_sizes": []})
    cas = cascade_table(fsa, hd, max_codes=max_codes)
    codes = cas["codes"]
    start = codes[0]
    prefixes = []        # prefixes[l] = sorted reachable prefixes of length l + 1
    pindex = []
    for lev in range(h):
        ps = sorted({c[:lev + 1] for c in codes})
        prefixes.append(ps)
        pindex.append({p: j for j, p in enumerate(ps)})

    layers: list = []
    # source of the prefix of length l+1: (layer index, list value -> prefix or None)
    prefix_src: list = []
    for lev in range(h):
        m = hd.level_size[lev]
        # symbols: the level maps
        sym_of: dict = {}
        syms: list = []

        def sym(key):
            s = sym_of.get(key)
            if s is None:
                s = sym_of[key] = len(syms)
                syms.append(key)
            return s

        if lev == 0:
            table = np.array([sym(cas["maps"][(0, (), a)]) for a in range(k)], dtype=np.int64)
            reads, sizes = [Read("input", 0)], [k]
        else:
            src_layer, val2prefix = prefix_src[lev - 1]
            nv = len(val2prefix)
            lag = 1 if token_shift else 0
            size = nv + (1 if lag else 0)
            table = np.zeros((k, size), dtype=np.int64)
            for a in range(k):
                for v in range(size):
                    p = start[:lev] if v == nv else val2prefix[v]
                    key = cas["maps"].get((lev, p, a)) if p is not None else None
                    table[a, v] = sym(key) if key is not None else 0
            if not syms:
                sym(("perm", tuple(range(m))))
            reads, sizes = [Read("input", 0), Read(src_layer, lag)], [k, size]
        tm = TableMap(reads, sizes, table.reshape(-1), len(syms))
        trans = [_transition(key, m) for key in syms]
        names = [f"const {key[1]}" if key[0] == "const" else "perm " + ",".join(map(str, key[1])) for key in syms]
        H0 = _one_hot(m, start[lev])
        dec = Decoder.nearest([_one_hot(m, p) for p in range(m)], [str(p) for p in range(m)])
        L_idx = len(layers)
        layers.append(Layer("gh", m, trans, np.array([float(x) for x in H0]), tm, dec, H0, symbol_names=names,
                            coords=[hd.describe_point(lev, p) for p in range(m)], name=f"level {lev + 1}"))
        # the prefix of length lev+1
        if lev == 0:
            prefix_src.append((L_idx, [(p,) if (p,) in pindex[0] else None for p in range(m)]))
        elif lev < h - 1:
            src_layer, val2prefix = prefix_src[lev - 1]
            P = prefixes[lev]
            ktab = np.zeros((len(val2prefix), m), dtype=np.int64)
            for v, p in enumerate(val2prefix):
                if p is None:
                    continue
                for c in range(m):
                    ktab[v, c] = pindex[lev].get(p + (c,), 0)
            ktm = TableMap([Read(src_layer, 0), Read(L_idx, 0)], [len(val2prefix), m], ktab.reshape(-1), len(P))
            ktrans = [_prefix_transition(j) for j in range(len(P))]
            j0 = pindex[lev][start[:lev + 1]]
            kdec = Decoder.exact([[Fraction(j)] for j in range(len(P))],
                                 [-Fraction(j * j, 2) for j in range(len(P))], [f"p{j}" for j in range(len(P))])
            K_idx = len(layers)
            layers.append(Layer("gh", 1, ktrans, np.array([float(j0)]), ktm, kdec, [Fraction(j0)],
                                symbol_names=[",".join(map(str, p)) for p in P],
                                coords=[f"index of the code prefix of levels 1..{lev + 1}"],
                                name=f"prefix {lev + 1}"))
            prefix_src.append((K_idx, list(P)))
    # readout
    code_set = set(codes)
    if h == 1:
        src_layer = 0
        m = hd.level_size[0]
        tab = [lab_index[fsa.outputs[hd.decode((c,))]] if (c,) in code_set else 0 for c in range(m)]
        readout = TableMap([Read(0, 0)], [m], tab, len(labels))
    else:
        src_layer, val2prefix = prefix_src[h - 2]
        m = hd.level_size[h - 1]
        tab = np.zeros((len(val2prefix), m), dtype=np.int64)
        for v, p in enumerate(val2prefix):
            if p is None:
                continue
            for c in range(m):
                code = p + (c,)
                if code in code_set:
                    tab[v, c] = lab_index[fsa.outputs[hd.decode(code)]]
        readout = TableMap([Read(src_layer, 0), Read(len(layers) - 1, 0)], [len(val2prefix), m], tab.reshape(-1),
                           len(labels))
    notes = {"levels": h, "level_sizes": list(hd.level_size), "split": split, "token_shift": token_shift,
             "reachable_codes": len(codes), "images": len(hd.sets),
             "holonomy": hd.summary()}
    return Model(list(fsa.alphabet), layers, readout, labels, name=f"{name}({fsa.name})", provenance=prov,
                 notes=notes)


def build_as_printed(fsa, split: str = "depth", **options) -> Model:
    """The wiring of the printed proof (000, Appendix C.4): layer i reads the outputs y^(i-1)_t of the layer
    above at the SAME step (lag 0), i.e. the new states of the higher levels. Kept for the record; it fails
    certification on automata whose cascade has two or more levels (see :func:`printed_counterexample`)."""
    return build(fsa, split, token_shift=False, **options)


# --------------------------------------------------------------------------- reports
def compile_report(fsa, model: Model | None = None, *, split: str = "depth") -> dict:
    """Layers, widths and factors per token of the compiled model, against Theorem 4's bounds (at most 2^|Q|
    layers, width at most |Q|) and, for group automata, against the one-layer construction of Theorem 3."""
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
    }
    perms = [fsa.delta[:, a] for a in range(fsa.n_letters)]
    if all(sorted(p.tolist()) == list(range(n)) for p in perms):
        # Theorem 3: one layer, the letters' permutation matrices (its registered construction may use a smaller
        # faithful representation; this is the natural one on the states)
        moved = [n - _n_cycles(p) for p in perms]
        rep["group_construction"] = {"layers": 1, "width": n, "max_factors_per_token": max(moved)}
        try:
            from .registry import get
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
    from ..certify import certify
    bad = certify(build_as_printed(fsa, split), fsa, float_steps=200)
    good = certify(build(fsa, split), fsa, float_steps=200)
    return {"printed_certified": bad.certified, "counterexample": bad.counterexample, "expected": bad.expected,
            "got": bad.got, "corrected_certified": good.certified}


register(Construction(
    name=NAME, paper="000", statement="Theorem 4",
    applies_to="any automaton",
    build=build, applicable=None,
    layers="h level layers + max(h - 2, 0) prefix layers, h = depth of the holonomy cascade (<= number of image "
           "classes < 2^|Q|)",
    width="level l: number of tiles of the representatives at depth l (split='class': tiles of one set)",
    factors_per_token="level l: m_l (reset: A = 0 as m_l beta=1 factors) or m - cycles reflections; prefix "
                      "layers: 1",
    priority=-10,
    notes="holonomy decomposition (SgpDec algorithm); lower levels read the higher levels with a token shift "
          "(lag 1), as the cascade product requires; the printed proof's lag-0 wiring is krohn-rhodes-as-printed",
    options={"split": "'depth' (SgpDec levels) or 'class' (one level per class of images)",
             "token_shift": "True (correct); False = the printed wiring"},
))

register(Construction(
    name=PRINTED, paper="000", statement="Theorem 4",
    applies_to="any automaton (incorrect in general: see krohn-rhodes)",
    build=build_as_printed, applicable=None,
    layers="as krohn-rhodes", width="as krohn-rhodes", factors_per_token="as krohn-rhodes",
    priority=-100, variant_of=NAME,
    notes="the proof of 000 Theorem 4 (Appendix C.4) feeds each layer the NEW state of the layer above (lag 0); "
          "the cascade product needs the old one. Fails certification on cascades with >= 2 levels.",
    options={"split": "'depth' or 'class'"},
))
