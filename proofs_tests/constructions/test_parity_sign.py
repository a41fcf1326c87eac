"""Parity in width one (lrnnkit.constructions.parity_sign; paper 000, Section 4.1): a sign flip (``h <- -h``) or
an affine counter, built by the module itself; automata whose transition group is larger than Z_2 are refused."""
import pytest

from lrnnkit.automata.sources import load_source
from lrnnkit.certify import certify
from lrnnkit.constructions import compile, get
from lrnnkit.constructions import parity_sign as PS
from lrnnkit.errors import InputError
from proofs_tests.constructions.test_permutation_reflections import _certified


@pytest.mark.parametrize("build,name", [(PS.build_sign, "parity-sign"), (PS.build_affine, "parity-affine")])
@pytest.mark.parametrize("src", ["parity", "group:Z2", "counter:2"])
def test_width_one_certifies(build, name, src):
    fsa = load_source(src)
    model = build(fsa)
    assert get(name).build.__wrapped__ is build   # the registry wraps it to stamp the provenance
    assert certify(model, fsa, float_steps=0).certified
    assert model.widths == [1]
    A = sorted(t.A_exact[0][0] for t in model.layers[0].transitions)
    assert set(A) <= {-1, 1} and (build is PS.build_affine or -1 in A)


@pytest.mark.parametrize("src", ["group:Z3", "flipflop", "group:S3"])
def test_larger_groups_are_refused(src):
    with pytest.raises(InputError):
        PS.build_sign(load_source(src))


def test_options_are_refused():
    with pytest.raises(InputError, match="unknown option"):
        PS.build_affine(load_source("parity"), scale=2)


# --------------------------------------------------------------------------- compiled models
@pytest.mark.parametrize("construction", ["parity-sign", "parity-affine"])
@pytest.mark.parametrize("src", ["parity", "group:Z2", "counter:2"])
def test_parity_width_one(construction, src):
    fsa = load_source(src)
    model = compile(fsa, construction=construction)
    _certified(model, fsa)
    assert model.widths == [1] and model.layers[0].max_factors() == 1
    for t in model.layers[0].transitions:
        assert t.A_exact[0][0] in (1, -1)


def test_parity_auto_is_width_one():
    assert compile(load_source("parity")).widths == [1]
