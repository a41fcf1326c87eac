"""The cyclic-rotation construction's own pieces (lrnnkit.constructions.cyclic_rotation; paper 000, Section 4.2):
the cyclic structure of an automaton's transition group, checked against the automaton's transitions, the two
reflections whose product is a rotation, and the compiled models (certified by exact BFS, float64 long words)."""
import numpy as np
import pytest

from lrnnkit.automata.sources import load_source
from lrnnkit.certify import certify
from lrnnkit.constructions import cyclic_rotation as CR
from lrnnkit.constructions import compile, get
from proofs_tests.constructions.test_permutation_reflections import _certified, _is_orthogonal_float


@pytest.mark.parametrize("src", ["group:Z5", "group:Z6", "counter:7", "cycle-nav:5"])
def test_each_letter_is_the_stated_power_of_the_generator(src):
    fsa = load_source(src)
    states, m, exponents, g = CR.cyclic_structure(fsa)
    where = {q: i for i, q in enumerate(states)}
    assert sorted(np.unique(g).tolist()) == list(range(len(states)))
    for a in range(fsa.n_letters):
        p = np.arange(len(states))
        for _ in range(exponents[a]):
            p = g[p]
        assert p.tolist() == [where[int(fsa.delta[q, a])] for q in states], (src, a)
    assert 0 <= min(exponents) and max(exponents) < m


@pytest.mark.parametrize("src,reason", [("group:S3", "not abelian"),
                                        ("transformations:[[1,0,3,2],[2,3,0,1]]", "abelian but not cyclic"),
                                        ("flipflop", "")])
def test_non_cyclic_groups_get_a_reason(src, reason):
    r = CR.cyclic_structure(load_source(src))
    assert isinstance(r, str) and reason in r
    assert get("cyclic-rotation").reason_not_applicable(load_source(src))


@pytest.mark.parametrize("m", range(2, 10))
def test_two_reflections_make_the_rotation(m):
    """G_2 G_1 = rotation by 2 pi e / m (float64: cos/sin rounded once, two reflections: 1e-12)."""
    for e in range(-m, 2 * m):
        fs = CR.rotation_factors(e, m)
        if e % m == 0:
            assert fs == []
            continue
        assert len(fs) == 2 and all(f.beta_exact == 2 for f in fs)
        th = 2 * np.pi * e / m
        R = fs[1].matrix() @ fs[0].matrix()
        assert np.allclose(R, [[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]], atol=1e-12), (e, m)


def test_build_is_the_registered_construction():
    fsa = load_source("group:Z4")
    assert get("cyclic-rotation").build.__wrapped__ is CR.build
    assert certify(CR.build(fsa), fsa, float_steps=0).certified


# --------------------------------------------------------------------------- compiled models
@pytest.mark.parametrize("m", range(2, 13))
def test_cyclic_rotation_certifies(m):
    fsa = load_source(f"group:Z{m}")
    model = compile(fsa, construction="cyclic-rotation")
    _certified(model, fsa)
    L = model.layers[0]
    assert model.widths == [2] and L.max_factors() == 2
    for t in L.transitions:
        assert all(f.beta_exact == 2 for f in t.factors)
        assert _is_orthogonal_float(t.A) and abs(np.linalg.det(t.A) - 1) < 1e-12   # a rotation
    # Section 4.2: the generator letter "1" is the rotation by 2 pi / m
    t1 = L.transitions[fsa.alphabet.index("1")]
    th = 2 * np.pi / m
    # float64 rounding of cos/sin and two reflections: 1e-12
    assert np.allclose(t1.A, [[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]], atol=1e-12)


@pytest.mark.parametrize("src", ["counter:7", "cycle-nav:5", "counter:12"])
def test_cyclic_rotation_on_non_group_presets(src):
    fsa = load_source(src)
    _certified(compile(fsa, construction="cyclic-rotation"), fsa)
