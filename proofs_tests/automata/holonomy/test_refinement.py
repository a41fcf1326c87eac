"""The refinement report (lrnnkit.automata.holonomy.refinement; paper 000 Theorem 5): composition factors of each
holonomy group and the width of a refinement into simple factors. Oracles: hand counts for cyclic and symmetric
groups, and the product of the factors against the group order found by the decomposition."""
import math

from hypothesis import given

from lrnnkit.automata.holonomy.decomposition import holonomy_decomposition
from lrnnkit.automata.holonomy.refinement import refinement_report
from proofs_tests.automata.holonomy.test_decomposition import cyclic_gens, full_transformation_gens, semigroups


def test_refinement_report():
    """Composition factors of each holonomy group (sympy): their product is the group order; Z_6 refines to
    widths 2 + 3 = 5 < 6 points, Z_8 to 2 + 2 + 2 = 6 < 8; S_4 (top level of T_4) to 2 + 3 + 2 + 2 = 9 > 4."""
    r = refinement_report(holonomy_decomposition(cyclic_gens(6)))
    assert r == [[{"points": 6, "group_order": 6, "composition_factors": r[0][0]["composition_factors"],
                   "transitive": True, "refined_points": 5, "lowers_width": True}]]
    assert sorted(r[0][0]["composition_factors"]) == [2, 3]
    assert refinement_report(holonomy_decomposition(cyclic_gens(8)))[0][0]["refined_points"] == 6
    top = refinement_report(holonomy_decomposition(full_transformation_gens(4)))[0][0]
    assert math.prod(top["composition_factors"]) == 24 and top["refined_points"] == 9 and not top["lowers_width"]


@given(semigroups(max_n=5))
def test_refinement_factors_multiply_to_group_order(gens):
    hd = holonomy_decomposition(gens)
    for lev in refinement_report(hd):
        for comp in lev:
            if comp["composition_factors"] is not None:
                assert math.prod(comp["composition_factors"]) == comp["group_order"]
            else:   # only non-solvable groups (order divisible by 60) other than S_k / A_k go unrefined
                assert comp["group_order"] % 60 == 0


def test_refinement_non_solvable():
    """S_5 on 5 points: S_5 > A_5 > 1, widths 2 + 60 (not lower); A_5 alone: one simple factor of order 60."""
    r = refinement_report(holonomy_decomposition([[1, 2, 3, 4, 0], [1, 0, 2, 3, 4]]))[0][0]
    assert r["composition_factors"] == [2, 60] and r["refined_points"] == 62 and not r["lowers_width"]
    r = refinement_report(holonomy_decomposition([[1, 2, 3, 4, 0], [1, 2, 0, 3, 4]]))[0][0]
    assert r["group_order"] == 60 and r["composition_factors"] == [60]
