"""Paper 001 (Theorem 1: dihedral groups in two DeltaNet layers; S_n with n_h = n - 1; S_4 / A_5 as 3-D rotations
with n_h = 2) and paper 000 Theorem 6 (addition mod m with two layers of reflections).

Every model is certified by the exact BFS of lrnnkit.certify against the automaton (the oracle), with the float64
executor cross-check on 4 random words of 10^4 steps. The printed dihedral angles are kept as their own
construction, and must FAIL with the minimal counterexample ``s0`` (a finding, see dihedral_two_layer.py).
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


@pytest.mark.parametrize("m", range(3, 9))
def test_dihedral_two_layers_certify(m):
    fsa = load_source(f"group:D{m}")
    model = compile(fsa, construction="dihedral-deltanet")
    _certified(model, fsa)
    L1, L2 = model.layers
    assert (L1.kind, L2.kind) == ("diagonal", "gh") and model.widths == [2, 2]
    for t in L1.transitions:
        assert sorted(t.diag.tolist()) == [-1.0, 1.0]                 # a in {1, -1}^2
    for t in L2.transitions:
        assert len(t.factors) == 1 and t.factors[0].beta_exact == 2    # one reflection per token
        assert abs(np.linalg.det(t.A) + 1) < 1e-12                     # det = -1 (float64, 1e-12)


@pytest.mark.parametrize("m", range(2, 9))
def test_dihedral_as_printed_fails_on_s0(m):
    fsa = load_source(f"group:D{m}")
    c = certify(compile(fsa, construction="dihedral-deltanet-as-printed"), fsa, float_steps=0)
    assert not c.certified
    assert c.counterexample == ["s0"] and c.expected == "s0"
    assert get("dihedral-deltanet-as-printed").variant_of == "dihedral-deltanet"


@pytest.mark.parametrize("m", range(2, 13))
def test_theorem6_modular_addition(m):
    fsa = load_source(f"group:Z{m}")
    model = compile(fsa, construction="modadd-reflections")
    c = _certified(model, fsa)
    assert c.reachable_states == (2 * m if m > 1 else 2)
    L1, L2 = model.layers
    assert model.widths == [1, 2]
    assert all(t.A_exact == [[-1]] for t in L1.transitions)            # A: N -> {-1}
    for t in L2.transitions:
        assert len(t.factors) == 1 and t.factors[0].beta_exact == 2


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


@pytest.mark.slow
@pytest.mark.parametrize("m", range(9, 13))
def test_dihedral_large(m):
    fsa = load_source(f"group:D{m}")
    _certified(compile(fsa, construction="dihedral-deltanet"), fsa)
