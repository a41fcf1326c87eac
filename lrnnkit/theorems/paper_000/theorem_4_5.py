"""Paper 000: 000:theorem-4, 000:theorem-4.bounds, 000:theorem-4-proof-wiring, 000:theorem-5.

See the package docstring (lrnnkit/theorems/paper_000/__init__.py) for the paper and conventions."""
from __future__ import annotations

import itertools
from fractions import Fraction as F

from ...automata.sources import load_source
from ...certify import certify
from ...constructions import registry as R
from .._exact import basis_vector, gh
from .._exact import mv, prod
from ..registry import CheckResult, entry
from ._common import PAPER, swap_vector, transpositions
from ...automata.holonomy import check_all, holonomy_decomposition, members
from ...executor import ExactModel


_KR_FSAS = ["parity", "flipflop", "even-pairs", "counter:3", "cycle-nav:3", "transformations:[[1,2,0],[0,0,2]]",
            "transformations:[[1,0,2],[0,0,1]]", "transformations:[[1,0,2,3],[1,2,3,0],[0,1,0,1]]"]


def pr_layer_ok(letters: list, N: int) -> bool:
    """App. C.4 layer for a permutation-reset automaton: permutation letters -> product of swap reflections
    (<= N - 1 factors), constant letters -> A = prod_i (I - e_i e_i^T) = 0 (N factors, beta = 1), B = e_target;
    H0 = e_0. True iff the one-hot state tracks the automaton on every reachable state (exact)."""
    E = [basis_vector(q, N) for q in range(N)]
    layer = []
    for p in letters:
        if len(set(p)) == N:
            sw = transpositions(p)
            A = prod([gh(2, swap_vector(i, j, N)) for i, j in sw], N)
            Bv = (F(0),) * N
            nf = len(sw)
        else:
            A = prod([gh(1, E[i]) for i in range(N)], N)
            Bv = E[p[0]]
            nf = N
        if nf > N:
            return False
        layer.append((A, Bv))
    seen, todo = {0}, [0]
    while todo:
        q = todo.pop()
        for (A, Bv), p in zip(layer, letters):
            if tuple(a + b for a, b in zip(mv(A, E[q]), Bv)) != E[p[q]]:
                return False
            if p[q] not in seen:
                seen.add(p[q])
                todo.append(p[q])
    return True


def brute_force_agrees(model, fsa, max_len: int) -> tuple:
    """Independent of lrnnkit.certify: step the model exactly (lrnnkit.executor.ExactModel, the model's own
    semantics) along every word of length <= max_len (depth-first, sharing prefixes) and compare its decoded label
    after every step with the FSA's output label of the state reached. Returns (words checked, first mismatch or
    None)."""
    em = ExactModel(model)
    amap = [list(model.alphabet).index(a) for a in fsa.alphabet]
    labels, outs, delta = model.output_labels, fsa.outputs, fsa.delta
    count = 0
    stack = [(em.initial(), fsa.start, [])]
    while stack:
        M, q, word = stack.pop()
        count += 1
        if len(word) == max_len:
            continue
        for a in range(fsa.n_letters):
            M2, y, _ = em.step(M, amap[a])
            q2 = int(delta[q, a])
            if y < 0 or labels[y] != outs[q2]:
                return count, {"word": [fsa.alphabet[b] for b in word + [a]], "expected": outs[q2],
                               "got": None if y < 0 else labels[y]}
            stack.append((M2, q2, word + [a]))
    return count, None


@entry("000:theorem-4", perturb={"construction": "krohn-rhodes-as-printed"})
def check_theorem_4(profile: str = "quick", construction: str = "krohn-rhodes") -> CheckResult:
    for N in (1, 2, 3):
        maps = list(itertools.product(range(N), repeat=N))
        pr = [m for m in maps if len(set(m)) in (1, N)]
        for L in (1, 2):
            for letters in itertools.combinations_with_replacement(pr, L):
                if not pr_layer_ok(list(letters), N):
                    return CheckResult("falsified", "permutation-reset layer fails", counterexample=list(letters))
    srcs = list(_KR_FSAS)
    if profile == "deep":
        maps = [list(m) for m in itertools.product(range(3), repeat=3)]
        srcs += [f"transformations:[{a},{b}]".replace(" ", "") for a, b in itertools.combinations(maps, 2)]
    words = 0
    for src in srcs:
        fsa = load_source(src)
        model = R.compile(fsa, construction)
        cert = certify(model, float_steps=0)
        if not (cert.certified and cert.eigenvalues_in_unit_interval):
            return CheckResult("falsified", f"{src}: not certified ({cert.reason})",
                               counterexample={"source": src, "word": cert.counterexample})
        if src in _KR_FSAS:
            n, bad = brute_force_agrees(model, fsa, 6 if profile == "quick" else 8)
            words += n
            if bad:
                return CheckResult("falsified", f"{src}: the compiled model disagrees with the FSA (brute force)",
                                   counterexample={"source": src, **bad})
    return CheckResult("holds", f"per-layer construction exact on all permutation-reset automata (<= 3 states, "
                                f"<= 2 letters); {len(srcs)} automata certified end to end; {len(_KR_FSAS)} of them "
                                f"also agree with the FSA on all {words} words up to length "
                                f"{6 if profile == 'quick' else 8} (exact, without the certifier)")


def _cascade_runs(top: list, bottom: dict, word: list, wiring: str) -> list:
    """States of a two-level cascade (000, Definition 1) on a word. ``top[w]``: map of the first automaton;
    ``bottom[(q, w)]``: map of the second. wiring 'cascade' reads the OLD top state (Definition 1), 'printed' the
    NEW one (App. C.4: w^(2)_t = y^(1)_t = delta^(1)(q0, w_1..w_t))."""
    q, r, out = 0, 0, []
    for w in word:
        q2 = top[w][q]
        r = bottom[(q if wiring == "cascade" else q2, w)][r]
        q = q2
        out.append((q, r))
    return out


@entry("000:theorem-4-proof-wiring", perturb={"lag": 0})
def check_theorem_4_wiring(profile: str = "quick", lag: int = 1) -> CheckResult:
    top = {0: [1, 1]}
    bottom = {(0, 0): [1, 0], (1, 0): [0, 1]}
    a = _cascade_runs(top, bottom, [0], "cascade")
    b = _cascade_runs(top, bottom, [0], "printed")
    if a == b:
        return CheckResult("holds", "printed wiring agrees on the minimal example")
    pr2 = [(0, 1), (1, 0), (0, 0), (1, 1)]       # 2-state permutation-reset maps
    L = 6 if profile == "quick" else 8
    for t0, t1 in itertools.product(pr2, repeat=2):
        for bots in itertools.product(pr2, repeat=4):
            bottom = {(q, w): bots[2 * q + w] for q in (0, 1) for w in (0, 1)}
            top = {0: t0, 1: t1}
            for word in itertools.product((0, 1), repeat=L):
                c = _cascade_runs(top, bottom, list(word), "cascade")
                # corrected: token shift = the layer reads the previous output (the old top state)
                q, r, ok = 0, 0, True
                for k, w in enumerate(word):
                    prev = (c[k - 1][0] if k else 0) if lag else top[w][q]
                    r = bottom[(prev, w)][r]
                    q = top[w][q]
                    ok &= (q, r) == c[k]
                if not ok:
                    return CheckResult("falsified", "token-shift wiring differs from the cascade",
                                       counterexample={"word": list(word)})
    return CheckResult("holds-as-corrected", f"printed wiring gives {b}, cascade {a} on 'a'; token-shift wiring equals "
                       f"the cascade on all words of length {L} for all 2-state permutation-reset pairs",
                       counterexample={"cascade": a, "printed": b}, corrected="token shift (lag 1)")


# ------------------------------------------------------------------ Theorems 4 (bounds) and 5: the width bound
#: the 4-point automaton on which lrnnkit's holonomy decomposition has a level of 6 points (> ``|Q|`` = 4): letters
#: (0 1), (0 1 2 3) and the rank-2 idempotent [0, 1, 0, 1]; its top class X has the six 2-subsets as tiles.
S4_IDEMPOTENT = [[1, 0, 2, 3], [1, 2, 3, 0], [0, 1, 0, 1]]


def s4_idempotent_cascade():
    """An explicit permutation-reset cascade with levels of 3, 2, 2 states (<= ``|Q|`` = 4) emulating
    :data:`S4_IDEMPOTENT` (written by hand for this check, independent of lrnnkit.automata.holonomy).

    Cascade states are the ordered pairs (q, r), q != r, of points, read through three coordinates: the perfect
    matching of {0, 1, 2, 3} that contains {q, r} (3 values), which of the matching's two pairs it is (2), and the
    order of q and r (2). W(q, r) = q. A permutation g lifts to (q, r) -> (g q, g r); the idempotent c lifts to
    (q, r) -> (c q, 1 - c q) (c's image is {0, 1}). Returns (states, encode, lifts, W)."""
    matchings = [((0, 1), (2, 3)), ((0, 2), (1, 3)), ((0, 3), (1, 2))]
    states = [(q, r) for q in range(4) for r in range(4) if q != r]

    def encode(x):
        q, r = x
        pair = tuple(sorted((q, r)))
        m = next(i for i, M in enumerate(matchings) if pair in M)
        return (m, matchings[m].index(pair), int(q > r))

    def lift(f):
        if len(set(f)) == 4:
            return lambda x: (f[x[0]], f[x[1]])
        return lambda x: (f[x[0]], 1 - f[x[0]])
    return states, encode, [lift(f) for f in S4_IDEMPOTENT], (lambda x: x[0])


def cascade_check(states, encode, lifts, W, fmaps) -> str | None:
    """Brute-force check (000, Definition 1 / Theorem 5) that ``encode`` presents ``states`` as a cascade of
    permutation-reset automata emulating the transformations ``fmaps`` through ``W``: for every letter and level i,
    the new level-i value is a function of the OLD values of levels 1..i, and for fixed old levels 1..i-1 it is a
    permutation or a constant map of level i; encode is injective; W(lift(x)) = f(W(x)); W is onto.
    Returns None if all hold, else the first violation."""
    codes = {encode(x): x for x in states}
    if len(codes) != len(states):
        return "encode is not injective"
    nlev = len(next(iter(codes)))
    sizes = [len({c[i] for c in codes}) for i in range(nlev)]
    for a, (lf, f) in enumerate(zip(lifts, fmaps)):
        for x in states:
            if W(lf(x)) != f[W(x)]:
                return f"letter {a}: W(lift(x)) != f(W(x)) at {x}"
        for i in range(nlev):
            fn = {}
            for c, x in codes.items():
                new = encode(lf(x))[i]
                if fn.setdefault(c[:i + 1], new) != new:
                    return f"letter {a}, level {i}: not a function of the old levels 1..{i + 1}"
            for hi in {c[:i] for c in codes}:
                dom = [k for k in fn if k[:i] == hi]
                vals = {fn[k] for k in dom}
                # injective on the level values that occur (extends to a permutation) or constant (a reset)
                if len(vals) not in (1, len(dom)):
                    return f"letter {a}, level {i}, above {hi}: neither a permutation nor a reset"
    if {W(x) for x in states} != set(range(len(fmaps[0]))):
        return "W is not onto"
    return None


def small_holonomy_widths(n: int, letters: int) -> tuple:
    """Every transformation automaton on n points with 1..letters letters: the largest level of lrnnkit's holonomy
    decomposition with one level per class (``levels="class"``) and the most levels. Returns (count, widest,
    most_levels, witness)."""
    maps = [list(m) for m in itertools.product(range(n), repeat=n)]
    count, widest, most, witness = 0, 0, 0, None
    for k in range(1, letters + 1):
        for gs in itertools.combinations(maps, k):
            hd = holonomy_decomposition([list(g) for g in gs], n, levels="class")
            count += 1
            w = max(hd.level_size, default=0)
            if w > widest:
                widest, witness = w, [list(g) for g in gs]
            most = max(most, hd.n_levels)
    return count, widest, most, witness


_T5_OPEN = ("Open for |Q| >= 4: whether some automaton has no permutation-reset cascade with every level <= |Q| states "
            "(and <= 2^|Q| levels). Not settled by the holonomy decomposition, which can exceed |Q| from |Q| = 4 on "
            "(Sperner: a class of k points can have C(k, k/2) > k tiles); the one such automaton examined "
            "(S4_IDEMPOTENT) does have a cascade meeting the bound. The bound is the cited theorem's (Maler & "
            "Pnueli 1994); no exhaustive search over cascades for |Q| = 4 was run (the space of cascades is too large).")


def _t5_evidence(profile: str) -> tuple:
    """Shared by 000:theorem-5 and 000:theorem-4.bounds: (problem or None, evidence text, details)."""
    n, L = 3, 2
    count, widest, most, wit = small_holonomy_widths(n, L)
    if widest > n or most > 2 ** n:
        return (f"holonomy (one level per class) on {wit}: a level of {widest} > {n} points or {most} levels", "",
                {"witness": wit})
    if profile == "deep":
        maps = [list(m) for m in itertools.product(range(n), repeat=n)]
        for gs in itertools.combinations(maps, 2):
            res = check_all(holonomy_decomposition([list(g) for g in gs], n, levels="class"))
            if not all(bool(v) for v in res.values()):
                return f"holonomy self-checks fail on {list(gs)}: {res}", "", {}
    hd = holonomy_decomposition(S4_IDEMPOTENT, 4, levels="class")
    states, encode, lifts, W = s4_idempotent_cascade()
    bad = cascade_check(states, encode, lifts, W, S4_IDEMPOTENT)
    if bad:
        return f"the hand-written cascade for {S4_IDEMPOTENT} fails: {bad}", "", {}
    sizes = [len({encode(x)[i] for x in states}) for i in range(3)]
    ev = (f"|Q| <= 3 decided: all {count} automata on 3 points with 1..{L} letters have a holonomy cascade (one "
          f"level per class) with levels of <= {widest} <= |Q| points and <= {most} <= 2^|Q| levels (proof for every "
          f"|Q| <= 3 and any alphabet: a class's tiles are an antichain of proper subsets of a <= 3-set, so at most 3; "
          f"one level per image class gives <= 2^|Q| levels){'; deep: holonomy action/emulation/cascade checks pass on all pairs' if profile == 'deep' else ''}. "
          f"|Q| = 4: holonomy puts {max(hd.level_size)} points on a level of {S4_IDEMPOTENT}, yet a hand-written "
          f"permutation-reset cascade with levels of {sizes} states emulates it (brute-force check, independent of "
          f"the holonomy code). {_T5_OPEN}")
    return None, ev, {"holonomy_level_size": list(hd.level_size), "cascade_level_sizes": sizes}


def tile_indicator_widths(hd) -> tuple:
    """Tile-indicator states for the one-level-per-class holonomy cascade ``hd``: the level of a class with
    representative X keeps its tile T as the indicator 1_T in R^{``|X|``}. A permutation of the tiles that is induced by a
    bijection sigma of X acts as the permutation matrix P_sigma (1_{sigma(T)} = P_sigma 1_T; Prop. 1.2c: a product of
    <= ``|X|`` - 1 swap reflections); a reset to T is A = 0 = prod_i (I - e_i e_i^T), B = 1_T in N^{``|X|``}. Distinct tiles
    have distinct indicators, so a linear read-out recovers the tile. Returns (widest ``|X|``, number of levels, None)
    when every Schreier generator of every class is induced by a bijection of its X (then so is every element of
    the holonomy group), else (.., .., the class and generator that is not)."""
    widest = 0
    for c, gens in hd.schreier.items():
        X = members(hd.sets[hd.rep[c]])
        tiles = [frozenset(members(t)) for t in hd.tiles[c]]
        widest = max(widest, len(X))
        for pi in gens:
            if not any(all(frozenset(dict(zip(X, img))[q] for q in T) == tiles[pi[i]] for i, T in enumerate(tiles))
                       for img in itertools.permutations(X)):
                return widest, hd.n_levels, {"class": c, "generator": list(pi), "X": X}
    return widest, hd.n_levels, None


@entry("000:theorem-4.bounds", perturb={"width_slack": -1})
def check_theorem_4_bounds(profile: str = "quick", width_slack: int = 0) -> CheckResult:
    import random

    cases = [(n, [list(g) for g in gs]) for n in (2, 3) for k in (1, 2)
             for gs in itertools.combinations(itertools.product(range(n), repeat=n), k)]
    rng = random.Random(4)
    cases += [(4, [[rng.randrange(4) for _ in range(4)] for _ in range(rng.choice([1, 2, 3]))])
              for _ in range(60 if profile == "quick" else 3000)]
    cases.append((4, S4_IDEMPOTENT))
    widest_seen = 0
    for n, gens in cases:
        widest, levels, bad = tile_indicator_widths(holonomy_decomposition(gens, n, levels="class"))
        widest_seen = max(widest_seen, widest)
        if bad is not None or widest > n + width_slack or levels > 2 ** n:
            return CheckResult("falsified", f"{gens}: indicator width {widest}, {levels} levels (bound {n + width_slack}"
                               f", {2 ** n}); generator not induced by a bijection: {bad}",
                               counterexample={"n": n, "generators": gens, "width": widest, "levels": levels})
    hd = holonomy_decomposition(S4_IDEMPOTENT, 4, levels="class")
    return CheckResult("holds", f"{len(cases)} automata (every one on 2, 3 points with <= 2 letters, random ones on 4 "
                                f"points, S4_IDEMPOTENT): tile-indicator layers of width <= |Q| (widest {widest_seen}) "
                                f"and <= 2^|Q| layers; S4_IDEMPOTENT: tiles per level {list(hd.level_size)}, indicator "
                                "width 4", details={"S4_IDEMPOTENT_level_size": list(hd.level_size)})


def prime_cycle_witness(n: int, bound: int) -> dict | None:
    """A lower bound on the level width: a letter permuting ``p`` of the ``n`` states cyclically, ``p`` prime and
    ``p > bound``, or None. Its one-letter automaton (start in the cycle) has the cyclic group Z_p in its transition
    monoid; every group dividing a cascade of permutation-reset automata with <= ``bound`` states divides an iterated
    wreath product of subgroups of S_bound (Krohn-Rhodes), whose order has no prime factor above ``bound``: no such
    cascade emulates it."""
    for img in itertools.permutations(range(n)):
        seen = set()
        for q in range(n):
            if q in seen:
                continue
            cyc, x = [], q
            while x not in cyc:
                cyc.append(x)
                x = img[x]
            seen.update(cyc)
            p = len(cyc)
            if p > bound and all(p % d for d in range(2, p)):
                return {"states": n, "letter": list(img), "cycle": cyc, "prime": p, "level_bound": bound}
    return None


@entry("000:theorem-5", perturb={"width_bound": 2})
def check_theorem_5(profile: str = "quick", width_bound: int | None = None) -> CheckResult:
    """``width_bound``: the bound on every level's states for ``|Q|`` = 3 (the printed ``|Q|``); the perturbation ``|Q|`` - 1,
    which the 3-cycle refutes (:func:`prime_cycle_witness`)."""
    cx = prime_cycle_witness(3, 3 if width_bound is None else width_bound)
    if cx is not None:
        return CheckResult("falsified", f"a letter cycling {cx['prime']} states (prime > the level bound "
                                        f"{cx['level_bound']}) needs a level with a group of order divisible by it",
                           counterexample=cx)
    bad, ev, det = _t5_evidence(profile)
    if bad:   # the decided part failed: not a verdict to record, an error to look at
        raise RuntimeError(f"{PAPER} Theorem 5 small cases: {bad}")
    return CheckResult("open", ev, details=det)
