"""The holonomy cascade (paper 000, Theorem 5; :mod:`lrnnkit.automata.holonomy.decomposition` states the
mathematics, items 6-8): :class:`Holonomy` holds one decomposition (image sets, classes, tiles, depths, levels), codes
the points by tile chains and lifts transformations to cascade transformations.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ...errors import InputError, SizeLimitError
from .image_sets import _image, _popcount, members

__all__ = ["Holonomy", "MAX_CODES"]

MAX_CODES = 500_000      # tile chains (cascade codes) enumerated by Holonomy.codes()


@dataclass
class Holonomy:
    """A holonomy decomposition (see the module docstring). Index 0 of :attr:`sets` is X."""
    n: int
    generators: list                 # int64 arrays
    letters: list                    # names of the generators
    sets: list                       # extended image set, bitmasks; sets[0] = X
    index: dict                      # bitmask -> position in sets
    is_image: list                   # sets[i] in I(S) (else an added singleton)
    cls: list                        # class id of every set
    classes: list                    # class id -> list of set indices
    rep: list                        # class id -> set index of its representative
    u: list                          # set index -> array (rep -> set)
    v: list                          # set index -> array (set -> rep)
    height: list                     # class id -> height
    depth: list                      # class id -> depth (X: 1); singleton classes: n_depths + 1
    tiles: dict                      # class id (non-singleton) -> list of tile bitmasks of the representative
    tile_index: dict                 # class id -> {tile mask: tile index}
    child: dict                      # set index (non-singleton) -> list of set indices T.u_P per tile T
    schreier: dict                   # class id -> list of tile permutations (tuples) generating the group
    group_order: dict                # class id -> order of the holonomy group
    level_mode: str                  # "depth" or "class"
    level_of_class: list             # class id -> level (0-based); singleton classes: n_levels
    level_classes: list              # level -> class ids (representatives) in it
    offset: dict                     # class id -> offset of its tiles within its level
    level_size: list                 # level -> number of points
    depth_rule: str = "sgpdec"       # "sgpdec" (SgpDec >= 0.9.8) or "sgpdec-0.9.7"
    _cache: dict = field(default_factory=dict, repr=False)

    # ------------------------------------------------------------------ structure
    @property
    def n_levels(self) -> int:
        return len(self.level_classes)

    @property
    def n_depths(self) -> int:
        return self.height[self.cls[0]] if self.n > 1 else 0

    def level_of_set(self, i: int) -> int:
        return self.level_of_class[self.cls[i]]

    def point_of_level(self, level: int, p: int) -> tuple[int, int]:
        """(class id, tile index) of point p of a level."""
        for c in self.level_classes[level]:
            k = p - self.offset[c]
            if 0 <= k < len(self.tiles[c]):
                return c, k
        raise InputError(f"level {level} has no point {p} (size {self.level_size[level]})")

    def describe_point(self, level: int, p: int) -> str:
        c, k = self.point_of_level(level, p)
        return f"level {level + 1}, rep {{{','.join(map(str, members(self.sets[self.rep[c]])))}}}, " \
               f"tile {{{','.join(map(str, members(self.tiles[c][k])))}}}"

    def summary(self) -> dict:
        """{"depth", "levels": [[{"points", "group_order"}, ...] per level]} (per representative)."""
        return {"depth": self.n_levels,
                "levels": [[{"points": len(self.tiles[c]), "group_order": int(self.group_order[c])}
                            for c in cl] for cl in self.level_classes]}

    # ------------------------------------------------------------------ codes
    def decode_chain(self, code: Sequence[int]) -> list[int] | None:
        """The tile chain (set indices P_1 = X, ..., {x}) a code stands for, or None if the code is invalid."""
        i = 0
        chain = [0]
        while _popcount(self.sets[i]) > 1:
            c = self.cls[i]
            k = code[self.level_of_class[c]] - self.offset[c]
            if not 0 <= k < len(self.tiles[c]):
                return None
            i = self.child[i][k]
            chain.append(i)
        return chain

    def decode(self, code: Sequence[int]) -> int:
        """The point a code stands for (InputError for an invalid code)."""
        ch = self.decode_chain(code)
        if ch is None:
            raise InputError(f"not a valid holonomy code: {tuple(code)}")
        return members(self.sets[ch[-1]])[0]

    def codes(self, max_codes: int = MAX_CODES) -> list[tuple]:
        """All codes (one per tile chain), in DFS order; irrelevant levels hold 0."""
        if "codes" not in self._cache:
            self._enumerate(max_codes)
        return self._cache["codes"]

    def _enumerate(self, max_codes: int) -> None:
        """codes() and the tree of tile chains behind it (cache "tree"): node 0 is the chain (X); a node's
        children are its chain extended by each tile, in tile order; the leaves are the codes (same DFS order)."""
        L = self.n_levels
        out: list = []
        node_set = [0]
        node_parent = [-1]
        kids: list = [[]]
        leaves: list = []
        stack = [(0, 0, (0,) * L)]
        while stack:
            i, nd, code = stack.pop()
            if _popcount(self.sets[i]) == 1:
                out.append(code)
                leaves.append(nd)
                if len(out) > max_codes:
                    raise SizeLimitError(f"holonomy decomposition has more than {max_codes} codes (tile chains); "
                                         f"{len(self.sets)} sets, {L} levels")
                continue
            c = self.cls[i]
            lev = self.level_of_class[c]
            ch = list(range(len(node_set), len(node_set) + len(self.child[i])))
            node_set.extend(self.child[i])
            node_parent.extend([nd] * len(ch))
            kids.extend([] for _ in ch)
            kids[nd] = ch
            for k in reversed(range(len(ch))):
                nc = list(code)
                nc[lev] = self.offset[c] + k
                stack.append((self.child[i][k], ch[k], tuple(nc)))
        self._cache["codes"] = out
        self._cache["tree"] = (node_set, node_parent, kids, leaves)

    def _vec(self) -> dict:
        """Integer arrays for the vectorized lift (:meth:`lift_matrix`), cached: the chain tree's node -> set,
        node -> level, children table, leaf -> code index, the tree's edges grouped by the parent's depth, and the
        bitmasks of the sets (sorted, for image lookup)."""
        v = self._cache.get("vec")
        if v is not None:
            return v
        self.codes()
        node_set, node_parent, kids, leaves = self._cache["tree"]
        ns = np.asarray(node_set, dtype=np.int64)
        set_level = np.array([self.level_of_class[c] for c in self.cls], dtype=np.int64)
        K = max((len(k) for k in kids), default=0)
        children = np.full((len(ns), max(K, 1)), -1, dtype=np.int64)
        for nd, ch in enumerate(kids):
            children[nd, :len(ch)] = ch
        leaf = np.asarray(leaves, dtype=np.int64)
        leaf_code = np.full(len(ns), -1, dtype=np.int64)
        leaf_code[leaf] = np.arange(len(leaf))
        tdepth = np.zeros(len(ns), dtype=np.int64)
        for nd in range(1, len(ns)):   # parents are created before their children
            tdepth[nd] = tdepth[node_parent[nd]] + 1
        par = np.asarray(node_parent, dtype=np.int64)
        edges = [np.nonzero(tdepth == d)[0] for d in range(1, int(tdepth.max()) + 1)] if len(ns) > 1 else []
        masks = np.array(self.sets, dtype=np.uint64) if self.n <= 63 else None
        msort = np.argsort(masks) if masks is not None else None
        member = (np.array([[m >> x & 1 for m in self.sets] for x in range(self.n)], dtype=np.uint64)
                  if masks is not None else None)
        nsets = len(self.sets)
        dense = np.full((nsets, nsets), -2, dtype=np.int32) if nsets <= 2048 else None   # <= 16 MiB
        v = self._cache["vec"] = {"node_set": ns, "node_level": set_level[ns], "set_level": set_level,
                                  "children": children, "leaf": leaf, "leaf_code": leaf_code, "parent": par,
                                  "edges": edges, "masks_sorted": masks[msort] if masks is not None else None,
                                  "mask_order": msort, "member": member, "first_tile": {}, "dense": dense}
        return v

    def set_images(self, S: np.ndarray) -> np.ndarray:
        """img[s, i] = index of the set sets[i].s (every image of a set of the extended image set is in it), for
        the rows s of S; vectorized over S (bitmasks as uint64, n <= 63)."""
        v = self._vec()
        S = np.asarray(S, dtype=np.int64)
        pow2 = np.left_shift(np.uint64(1), S.astype(np.uint64))
        m = np.zeros((len(S), len(self.sets)), dtype=np.uint64)
        for x in range(self.n):
            m |= pow2[:, x, None] * v["member"][x][None, :]
        ms = v["masks_sorted"]
        pos = np.minimum(np.searchsorted(ms, m), len(ms) - 1)
        if not (ms[pos] == m).all():   # impossible: I(S) is closed under S, singletons map to singletons
            raise AssertionError("holonomy: a set's image is outside the extended image set")
        return v["mask_order"][pos]

    def _first_tile(self, Q: int, A: int) -> int:
        """Index of the first tile T.u_Q of the set Q (tile order of its representative) containing the set A;
        -1 if none."""
        a = self.sets[A]
        for k, T in enumerate(self.child[Q]):
            if a & ~self.sets[T] == 0:
                return k
        return -1

    def _first_tiles(self, Q: np.ndarray, A: np.ndarray) -> np.ndarray:
        """:meth:`_first_tile` for arrays of set indices (a dense table filled on demand while ``|I|`` <= 2048)."""
        v = self._vec()
        nsets = len(self.sets)
        dense = v["dense"]
        if dense is not None:
            flat = dense.ravel()
            key = Q.astype(np.int32) * nsets + A
            k = flat[key]
            unknown = k == -2
            if unknown.any():
                for kk in np.unique(key[unknown]).tolist():
                    flat[kk] = self._first_tile(kk // nsets, kk % nsets)
                k = flat[key]
            return k
        ft = v["first_tile"]
        uk, inv = np.unique(Q.astype(np.int64) * nsets + A, return_inverse=True)
        vals = np.empty(len(uk), dtype=np.int64)
        for t, kk in enumerate(uk.tolist()):
            r = ft.get(kk)
            if r is None:
                r = ft[kk] = self._first_tile(kk // nsets, kk % nsets)
            vals[t] = r
        return vals[inv.reshape(Q.shape)]

    def lift_matrix(self, S: np.ndarray, *, chunk: int = 4_000_000) -> np.ndarray:
        """lift(s) for every row s of S as maps on codes(): an int array (``|S|``, codes), row r = lift_map(S[r]).

        Vectorized form of :meth:`lift_actions` (module docstring, item 8), sets as indices. Walking the new
        chain top down, at the new set Q (level e) with P_a the first old set of level >= e and A = P_a.s: if
        A = Q the level permutes, and the new tile is the one equal to P_{a+1}.s (that is the holonomy
        permutation u_{P_a} s v_Q applied to the old tile); otherwise A is a proper subset of Q and the level
        resets to the first tile of Q containing A. In both cases the new tile is "the first tile of Q containing
        a target set" (a tile contains no other tile), looked up in a table over pairs of sets.

        The new chain's set at the start of a level depends on the old chain only through its prefix down to the
        first set at that level or below, a node of the tree of tile chains. So the walk is done once per tree
        edge (parent -> child: the step at the parent's level, with P_a = parent and P_{a+1} = child, then resets
        at the levels the old chain jumps over), for all s at once, and the leaves give the new codes.
        AssertionError where the theory's invariants fail (the checks report it). Past 63 points: the loop."""
        S = np.asarray(S, dtype=np.int64)
        nc = len(self.codes())
        dt = np.int16 if nc < 2 ** 15 else np.int32
        if len(S) == 0:
            return np.zeros((0, nc), dt)
        if self.n > 63:   # bitmasks do not fit uint64: the reference loop
            return np.stack([self.lift_map(s) for s in S]).astype(dt)
        v = self._vec()
        ns, nlev, par = v["node_set"].astype(np.int32), v["node_level"].astype(np.int32), v["parent"]
        K = v["children"].shape[1]
        children = v["children"].astype(np.int32).ravel()
        nnodes = len(ns)
        out = np.empty((len(S), nc), dtype=dt)
        step = max(1, chunk // max(nnodes, len(self.sets)))   # H and img hold <= chunk entries

        def advance(nq, pa, nxt, e, img):
            """One step of the walk at level e (scalar, or one per row) for the new nodes nq (rows: tree edges,
            columns: elements s), P_a = set pa[row], P_{a+1} = set nxt[row] (None: the old chain has no set at
            level e); img[set, s] = index of set.s. Returns the new nodes."""
            act = nlev[nq] == e
            every = bool(act.all())
            if not every and not act.any():
                return nq
            Q = ns[nq]
            A = img[pa]
            if nxt is not None:
                isperm = A == Q
                if not every:
                    isperm &= act
                A = np.where(isperm, img[nxt], A)
            if every:
                nqa, Qa, Aa = nq.ravel(), Q.ravel(), A.ravel()
            else:
                nqa, Qa, Aa = nq[act], Q[act], A[act]
            k = self._first_tiles(Qa, Aa)
            if (k < 0).any():   # impossible by the theory (item 8): A is a proper subset of Q, or P_a.s = Q
                raise AssertionError("holonomy lift: no tile of the new set contains the image of the old set")
            new = children[nqa.astype(np.int64) * K + k]
            if nxt is not None:
                pm = isperm.ravel() if every else isperm[act]
                if not (ns[new[pm]] == Aa[pm]).all():
                    raise AssertionError("holonomy lift: a tile is not moved onto a tile")
            if every:
                return new.reshape(nq.shape)
            nq = nq.copy()
            nq[act] = new
            return nq

        for lo in range(0, len(S), step):
            Sc = S[lo:lo + step]
            m = len(Sc)
            img = np.ascontiguousarray(self.set_images(Sc).T.astype(np.int32))   # (sets, m)
            H = np.zeros((nnodes, m), dtype=np.int32)   # H[o, s]: new node at the start of o's level
            for kids in v["edges"]:
                p = par[kids]
                lp = nlev[p]
                lk = nlev[kids]
                e0 = int(lp[0]) if (lp == lp[0]).all() else lp[:, None]
                nq = advance(H[p], ns[p], ns[kids], e0, img)
                for e in range(int(lp.min()) + 1, int(lk.max())):
                    sel = np.nonzero((lp < e) & (e < lk))[0]   # the old chain jumps over level e on these edges
                    if len(sel):
                        nq[sel] = advance(nq[sel], ns[kids[sel]], None, e, img)
                H[kids] = nq
            res = v["leaf_code"][H[v["leaf"]]] if nnodes > 1 else np.zeros((1, m), np.int64)
            if (res < 0).any():   # impossible: the new chain ends in a singleton
                raise AssertionError("holonomy lift: the new chain does not end in a singleton")
            out[lo:lo + m] = res.T
        return out

    def lift_matrix_cached(self, S: np.ndarray) -> np.ndarray:
        """:meth:`lift_matrix` of S, kept for the last S seen (the checks of one S share it)."""
        key = ("liftmat", S.shape, hash(S.tobytes()))
        got = self._cache.get("liftmat")
        if got is None or got[0] != key or not np.array_equal(got[1], S):
            got = self._cache["liftmat"] = (key, S.copy(), self.lift_matrix(S))
        return got[2]

    def code_index(self) -> dict:
        if "code_index" not in self._cache:
            self._cache["code_index"] = {c: i for i, c in enumerate(self.codes())}
        return self._cache["code_index"]

    def decoded(self) -> np.ndarray:
        """decode() of every code, as an array aligned with codes()."""
        if "decoded" not in self._cache:
            self._cache["decoded"] = np.array([self.decode(c) for c in self.codes()], dtype=np.int64)
        return self._cache["decoded"]

    def code_of(self, x: int) -> tuple:
        """One code of the point x: the chain that always descends into the first tile containing x."""
        if not 0 <= x < self.n:
            raise InputError(f"point {x} out of range 0..{self.n - 1}")
        code = [0] * self.n_levels
        i = 0
        while self.sets[i].bit_count() > 1:
            c = self.cls[i]
            k = next(k for k, j in enumerate(self.child[i]) if self.sets[j] >> x & 1)
            code[self.level_of_class[c]] = self.offset[c] + k
            i = self.child[i][k]
        return tuple(code)

    def codes_of(self, x: int) -> list[tuple]:
        return [c for c, p in zip(self.codes(), self.decoded()) if p == x]

    # ------------------------------------------------------------------ lifting
    def _tile_perm(self, c: int, g: np.ndarray) -> tuple:
        """The permutation of tiles(R_c) induced by g (g maps R_c onto itself)."""
        ti = self.tile_index[c]
        g = g.tolist() if isinstance(g, np.ndarray) else g
        return tuple(ti[_image(T, g)] for T in self.tiles[c])

    def _fast(self) -> tuple:
        """Per-set lookup lists for the lift's inner loop: (size > 1, level, class, child lists, masks)."""
        f = self._cache.get("fast")
        if f is None:
            big = [m.bit_count() > 1 for m in self.sets]
            lev = [self.level_of_class[c] for c in self.cls]
            f = self._cache["fast"] = (big, lev)
        return f

    def lift_actions(self, s: np.ndarray, code: Sequence[int], memo: dict | None = None) -> list:
        """The level maps of lift(s) at the cascade state ``code``: one entry per level, either
        ``("perm", class id, tile permutation)`` or ``("const", point)``. They depend on s and the coordinates
        above the level only (module docstring, item 8). ``memo``: a dict reused across calls with the SAME s."""
        memo = {} if memo is None else memo
        if "s" not in memo:
            memo["s"] = np.asarray(s, dtype=np.int64)
            memo["sl"] = memo["s"].tolist()
        s = memo["s"]
        sl = memo["sl"]
        big, levs = self._fast()
        sets, cls, child, offset = self.sets, self.cls, self.child, self.offset
        # the old chain
        old = [0]
        i = 0
        while big[i]:
            c = cls[i]
            k = code[self.level_of_class[c]] - offset[c]
            ch = child[i]
            if not 0 <= k < len(ch):
                raise InputError(f"not a valid holonomy code: {tuple(code)}")
            i = ch[k]
            old.append(i)
        lev_old = [levs[j] for j in old]
        acts: list = [("const", 0)] * len(self.level_classes)
        Q = 0
        a = 0
        while big[Q]:
            c = cls[Q]
            e = levs[Q]
            while lev_old[a] < e:
                a += 1
            Pa = old[a]
            key = ("i", Pa)
            A = memo.get(key)
            if A is None:
                A = memo[key] = _image(sets[Pa], sl)
            if A == sets[Q]:
                if lev_old[a] != e or cls[Pa] != c:  # impossible by the theory (item 8); kept as a guard
                    raise AssertionError(f"holonomy lift: P.s = Q across classes ({Pa} -> {Q})")
                key = ("p", Pa, Q)
                perm = memo.get(key)
                if perm is None:
                    g = self.v[Q][s[self.u[Pa]]]          # u_{P_a}, then s, then v_Q
                    perm = memo[key] = self._tile_perm(c, g)
                k = perm[code[e] - offset[c]]
                acts[e] = ("perm", c, perm)
            else:
                key = ("c", A, Q)
                k = memo.get(key)
                if k is None:
                    B = _image(A, self.v[Q])
                    k = next((j for j, T in enumerate(self.tiles[c]) if B & ~T == 0), None)
                    if k is None:  # impossible: A is a proper subset of Q in I (item 8)
                        raise AssertionError(f"holonomy lift: no tile of {members(sets[Q])} contains "
                                             f"{members(A)}")
                    memo[key] = k
                acts[e] = ("const", offset[c] + k)
            Q = child[Q][k]
        return acts

    def act(self, acts: list, code: Sequence[int]) -> tuple:
        """Apply level maps to a code (a permutation moves the point within its representative's tiles)."""
        out = []
        for act, x in zip(acts, code):
            if act[0] == "const":
                out.append(act[1])
            else:
                _, c, perm = act
                k = x - self.offset[c]
                out.append(self.offset[c] + perm[k] if 0 <= k < len(perm) else x)
        return tuple(out)

    def lift_code(self, s: np.ndarray, code: Sequence[int], memo: dict | None = None) -> tuple:
        """lift(s) applied to a code."""
        return self.act(self.lift_actions(s, code, memo), code)

    def lift_map(self, s: np.ndarray) -> np.ndarray:
        """lift(s) as a map on codes(): array of code indices (AssertionError if a result is not a code)."""
        idx = self.code_index()
        memo: dict = {}
        out = np.empty(len(self.codes()), dtype=np.int64)
        for j, code in enumerate(self.codes()):
            new = self.lift_code(s, code, memo)
            if new not in idx:
                raise AssertionError(f"lift of {np.asarray(s).tolist()} maps code {code} to the non-code {new}")
            out[j] = idx[new]
        return out
