"""Paper 001's group constructions in DeltaProduct layers (S_n with n_h = n - 1; S_4 / A_5 as 3-D rotations with
n_h = 2). The dihedral groups in two DeltaNet layers (001, Theorem 1) are in test_dihedral_two_layer.py, addition
mod m in two layers of reflections (000, Theorem 6) in test_modadd_reflections.py.

Every model is certified by the exact BFS of lrnnkit.certify against the automaton (the oracle), with the float64
executor cross-check on 4 random words of 10^4 steps.
"""
import numpy as np
import pytest

from lrnnkit.automata.sources import load_source
from lrnnkit.certify import certify
from lrnnkit.constructions import compile, get
from lrnnkit.constructions import deltaproduct_groups as DG
from lrnnkit.model import exact_identity, exact_matmul


def _certified(model, fsa, float_steps=10_000):
    c = certify(model, fsa, float_steps=float_steps)
    assert c.certified, (c.reason, c.counterexample, c.expected, c.got)
    if float_steps:
        assert c.float_check["mismatches"] == 0, c.float_check
    assert c.eigenvalues_in_unit_interval
    return c


@pytest.mark.parametrize("name", ["S3", "S4", "S5", "A4"])
def test_deltaproduct_symmetric_exact_nh(name):
    fsa = load_source(f"group:{name}")
    model = compile(fsa, construction="deltaproduct-symmetric")
    _certified(model, fsa)
    n = model.widths[0]
    assert all(len(t.factors) == n - 1 for t in model.layers[0].transitions)


def test_rotation3d_s4():
    fsa = load_source("group:S4")
    model = compile(fsa, construction="rotation-3d")
    _certified(model, fsa)
    L = model.layers[0]
    assert model.widths == [3] and L.max_factors() == 2
    for t in L.transitions:
        assert all(f.beta_exact == 2 for f in t.factors)
        assert abs(np.linalg.det(t.A) - 1) < 1e-12                      # a rotation (float64, 1e-12)


def test_rotation_groups_exact():
    # the matrices are orthogonal with determinant 1 (exact), closed, of the right orders, and every non-identity
    # element is exactly the product of the two reflections the construction uses
    for G, order in ((DG.cube_group(), 24), (DG.icosahedral_group(), 60)):
        assert len(set(G)) == order
        for M in G[:12]:
            Ml = [list(r) for r in M]
            assert exact_matmul([list(c) for c in zip(*Ml)], Ml) == exact_identity(3)
            if M != DG._eye3():
                u, w = DG.two_reflections(M)
                assert exact_matmul(w.matrix_exact(), u.matrix_exact()) == Ml


def test_rotation3d_not_applicable():
    assert get("rotation-3d").reason_not_applicable(load_source("group:S3"))
    assert get("rotation-3d").reason_not_applicable(load_source("group:A4"))   # order 12


@pytest.mark.slow
def test_rotation3d_a5():
    fsa = load_source("group:A5")
    model = compile(fsa, construction="rotation-3d")
    _certified(model, fsa, float_steps=10_000)
    assert model.widths == [3] and model.layers[0].max_factors() == 2
