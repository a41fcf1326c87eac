"""Paper 002, Section 3.3: the block-diagonal LRNN with column p-norm normalization (eq. 6). Which exact weights
survive the normalization, and exact certified settings for Sum(5), EvenPair(5), ModArith(5)."""
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, strategies as st

from lrnnkit.automata.sources import load_source
from lrnnkit.certify import certify
from lrnnkit.constructions import compile
from lrnnkit.constructions import block_diagonal_normalized as BD


@pytest.mark.parametrize("src", ["group:Z5", "even-pairs:5", "mod-arith:5", "counter:5"])
@pytest.mark.parametrize("p", [1.0, 1.2, 2.0])
def test_tasks_certify_after_normalization(src, p):
    fsa = load_source(src)
    model = compile(fsa, construction="block-diagonal-normalized", p=p)
    c = certify(model, fsa, float_steps=10_000)
    assert c.certified and c.float_check["mismatches"] == 0, (c.reason, c.counterexample)
    for t in model.layers[0].transitions:
        assert np.array_equal(BD.normalize_columns(t.A, p), t.A)


@given(st.permutations(range(5)), st.lists(st.sampled_from([1, -1]), min_size=5, max_size=5),
       st.sampled_from([1.0, 1.2, 1.5, 2.0, 3.0]))
def test_signed_permutations_survive(perm, signs, p):
    A = np.zeros((5, 5))
    A[list(perm), range(5)] = signs
    assert np.array_equal(BD.normalize_columns(A, p), A)


@pytest.mark.parametrize("m", [3, 5, 6, 8, 12])
def test_rotations_shrink_for_p_below_2(m):
    # rotation blocks of the Z_m constructions: column p-norm (|cos|^p + |sin|^p)^(1/p) > 1 for p < 2
    th = 2 * np.pi / m
    R = np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])
    Rn = BD.normalize_columns(R, 1.2)
    assert np.linalg.norm(Rn, 2) < 1 - 1e-3                 # strictly contracted: no finite-state orbit survives
    assert np.allclose(BD.normalize_columns(R, 2.0), R, atol=1e-15)
    # exact p = 1 check on the rational rotation of the 3-4-5 triangle
    R345 = [[Fraction(3, 5), Fraction(-4, 5)], [Fraction(4, 5), Fraction(3, 5)]]
    assert not BD.survives_exact(R345, 1) and BD.survives_exact(R345, 2)


def test_quarter_turn_survives():
    assert BD.survives_exact([[0, -1], [1, 0]], 1)
