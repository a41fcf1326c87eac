"""The dihedral construction's own pieces (lrnnkit.constructions.dihedral_two_layer; paper 001, Theorem 1 and App.
B): the dihedral structure of an automaton's transition group, checked against its transitions, the reflection
factors, the one place the printed angles differ from the corrected ones, and the compiled models (corrected:
certified by exact BFS and float64 long words; printed: fails, with the minimal counterexample ``s0``)."""
import numpy as np
import pytest

from lrnnkit.automata.sources import load_source
from lrnnkit.certify import certify
from lrnnkit.constructions import dihedral_two_layer as DT
from lrnnkit.constructions import compile, get
from lrnnkit.errors import InputError
from proofs_tests.constructions.test_deltaproduct_groups import _certified


@pytest.mark.parametrize("m", range(3, 8))
def test_the_structure_names_each_letter(m):
    fsa = load_source(f"group:D{m}")
    states, mm, kind, index, elem_of = DT.dihedral_structure(fsa)
    assert mm == m
    where = {q: i for i, q in enumerate(states)}
    for a in range(fsa.n_letters):
        assert kind[a] in ("r", "s") and 0 <= index[a] < m
        assert np.asarray(elem_of[(kind[a], index[a])]).tolist() == [where[int(fsa.delta[q, a])] for q in states]
    # r_i r_j = r_{i+j}: rotations compose by adding indices (first r_i, then r_j: image list r_j[r_i])
    r = {i: np.asarray(elem_of[("r", i)]) for i in range(m) if ("r", i) in elem_of}
    for i in r:
        for j in r:
            if (i + j) % m in r:
                assert r[j][r[i]].tolist() == r[(i + j) % m].tolist()


@pytest.mark.parametrize("src,reason", [("group:Z3", "odd order"), ("group:A4", "")])
def test_non_dihedral_groups_get_a_reason(src, reason):
    r = DT.dihedral_structure(load_source(src))
    assert isinstance(r, str) and reason in r


@pytest.mark.parametrize("m", range(2, 9))
def test_reflection_factor_fixes_its_line(m):
    """H(k pi/m) is the reflection in the line at angle k pi/(2m): it fixes that line's direction and negates its
    normal (float64, 1e-12)."""
    for k in range(-2 * m, 4 * m):
        H = DT.reflection_factor(k, m).matrix()
        a = k * np.pi / (2 * m)
        d, n = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
        assert np.allclose(H @ d, d, atol=1e-12) and np.allclose(H @ n, -n, atol=1e-12)


@pytest.mark.parametrize("m", [3, 5, 8])
def test_printed_and_corrected_angles_differ_only_on_reflections(m):
    """The correction swaps the parity bit of the angle of the letters s_i, and leaves r_i alone."""
    for i in range(m):
        for p in (0, 1):
            assert DT.theta("r", i, p, m, True) == DT.theta("r", i, p, m, False)
            assert DT.theta("s", i, p, m, True) == DT.theta("s", i, 1 - p, m, False)


def test_build_is_the_registered_construction():
    fsa = load_source("group:D4")
    assert get("dihedral-deltanet").build.__wrapped__ is DT.build
    assert certify(DT.build(fsa), fsa, float_steps=0).certified
    with pytest.raises(InputError, match="unknown option"):
        DT.build(fsa, depth=2)


# --------------------------------------------------------------------------- compiled models
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


@pytest.mark.slow
@pytest.mark.parametrize("m", range(9, 13))
def test_dihedral_large(m):
    fsa = load_source(f"group:D{m}")
    _certified(compile(fsa, construction="dihedral-deltanet"), fsa)
