"""The refinement report of a holonomy decomposition (:mod:`lrnnkit.automata.holonomy.decomposition`): per level and
representative, the composition factors of its holonomy group and the width a refinement into simple factors would
need (paper 000, Theorem 5 asks for permutation-reset components; refining a group component along a composition
series gives simple groups, the Krohn-Rhodes primes). A report only: the compiler does not refine.
"""
from __future__ import annotations

import math

from .decomposition import Holonomy

__all__ = ["refinement_report"]


def refinement_report(hd: Holonomy) -> list:
    """Per level, per representative: the holonomy group's composition factors (sympy's composition series)
    and the width a refinement into simple factors would need, next to the unrefined width (the tiles).

    Refining a group component H (acting on k tiles) along a composition series H = H_0 > H_1 > ... > H_r = 1
    replaces it by r levels acting on the coset spaces H_{i-1}/H_i (simple factors), of total width
    sum_i [H_{i-1} : H_i]; it lowers the width when that sum is below k (e.g. Z_6 on 6 points: 2 + 3 = 5; Z_8:
    2 + 2 + 2 = 6), and raises it for S_k (2 + k!/2). This is a report only: the compiler does not refine
    (resets of a refined component need a transitive action; see the module docstring of krohn_rhodes)."""
    from sympy.combinatorics import Permutation, PermutationGroup
    out = []
    for cl in hd.level_classes:
        row = []
        for c in cl:
            k = len(hd.tiles[c])
            gens = hd.schreier[c]
            if not gens:
                row.append({"points": k, "group_order": 1, "composition_factors": [], "refined_points": k,
                            "lowers_width": False})
                continue
            G = PermutationGroup([Permutation(list(p)) for p in gens])
            order = int(G.order())
            if G.is_solvable:
                series = G.composition_series()
                idx = [int(series[i].order() // series[i + 1].order()) for i in range(len(series) - 1)]
            elif order == math.factorial(k):            # S_k (k >= 5): S_k > A_k > 1
                idx = [2, order // 2]
            elif 2 * order == math.factorial(k):        # A_k, simple for k >= 5
                idx = [order]
            else:  # sympy's composition_series needs a solvable group; other non-solvable groups: not refined
                row.append({"points": k, "group_order": order, "composition_factors": None,
                            "transitive": bool(G.is_transitive()), "refined_points": None, "lowers_width": False})
                continue
            refined = sum(idx)
            row.append({"points": k, "group_order": order, "composition_factors": idx,
                        "transitive": bool(G.is_transitive()), "refined_points": refined,
                        "lowers_width": refined < k})
        out.append(row)
    return out
