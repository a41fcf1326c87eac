"""Float weights against exact weights (lrnnkit.model.consistency): a float off its exact form by more than
CONSISTENCY_TOL (relative) is reported and canonicalize_floats puts the rounding back; a few ulps are not reported
(compiled files store float64 products of factors); an exact letter matrix that is not the product of its exact
factors is reported (paper 000, eq. 1 and Proposition 1)."""
from fractions import Fraction

import numpy as np

from lrnnkit.model.consistency import CONSISTENCY_TOL, canonicalize_floats, consistency_problems
from proofs_tests.test_certify import rotation_model


def test_a_consistent_model_has_no_problems():
    _, M = rotation_model(5)
    assert M.inconsistencies == [] and consistency_problems(M) == []


def test_a_float_beta_off_by_more_than_the_tolerance_is_reported_and_fixed():
    _, M = rotation_model(5)
    f = M.layers[0].transitions[1].factors[1]
    b = f.beta
    f.beta = b + 0.1 * CONSISTENCY_TOL * (1 + abs(b))         # within the tolerance: not reported
    assert consistency_problems(M) == []
    f.beta = b + 10 * CONSISTENCY_TOL * (1 + abs(b))          # past it: the beta, and the float product of the
    probs = consistency_problems(M)                           # factors against the float matrix A
    assert len(probs) == 2 and probs[0].startswith("layer 0 symbol 1 GH factor 1: float beta")
    assert probs[1] == "layer 0 symbol 1: the product of its GH factors is not its matrix A"
    assert canonicalize_floats(M) == probs[:1] and f.beta == b        # the product holds again once fixed
    assert consistency_problems(M) == []


def test_a_float_matrix_entry_off_is_reported_with_its_place():
    _, M = rotation_model(3)
    t = M.layers[0].transitions[1]
    t.A = t.A.copy()
    t.A[1, 0] += 1e-6
    probs = consistency_problems(M)
    assert any(p.startswith("layer 0 symbol 1 A: the float weights are not the rounding") and "at [1, 0]" in p
               for p in probs), probs


def test_an_exact_matrix_that_is_not_the_product_of_its_factors_is_reported():
    _, M = rotation_model(4)
    t = M.layers[0].transitions[1]
    t.A_exact = [list(r) for r in t.A_exact]
    t.A_exact[0][0] += Fraction(1, 10 ** 30)              # far below float resolution: the floats still agree
    assert np.allclose(t.A, np.array([[float(x) for x in r] for r in t.A_exact]))
    assert "layer 0 symbol 1: A_exact is not the product of its exact GH factors" in consistency_problems(M)
