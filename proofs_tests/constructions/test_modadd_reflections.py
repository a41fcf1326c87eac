"""Addition mod m in two layers of reflections (lrnnkit.constructions.modadd_reflections; paper 000, Theorem 6 and
App. D), built by the module itself on automata whose transition group is cyclic, certified by exact BFS."""
import pytest

from lrnnkit.automata.sources import load_source
from lrnnkit.certify import certify
from lrnnkit.constructions import compile, get
from lrnnkit.constructions import modadd_reflections as MA
from lrnnkit.errors import InputError
from proofs_tests.constructions.test_deltaproduct_groups import _certified


@pytest.mark.parametrize("src", ["group:Z3", "group:Z5", "counter:4", "cycle-nav:3"])
def test_build_certifies(src):
    fsa = load_source(src)
    model = MA.build(fsa)
    c = certify(model, fsa, float_steps=0)
    assert c.certified, (c.reason, c.counterexample)
    assert len(model.layers) == 2 and all(L.max_factors() <= 1 for L in model.layers)


@pytest.mark.parametrize("m", range(2, 9))
def test_theta_is_an_odd_multiple(m):
    """000, App. D: theta(i, 1) = 1 - 2i and theta(i, 0) = 2i + 1 (multiples of pi/m), odd for every i."""
    for i in range(m):
        assert MA.theta(i, 1, m) == 1 - 2 * i and MA.theta(i, 0, m) == 2 * i + 1


def test_build_is_the_registered_construction_and_refuses_non_cyclic_groups():
    assert get("modadd-reflections").build.__wrapped__ is MA.build
    with pytest.raises(InputError):
        MA.build(load_source("group:S3"))
    with pytest.raises(InputError, match="unknown option"):
        MA.build(load_source("group:Z3"), width=3)


# --------------------------------------------------------------------------- compiled models
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
