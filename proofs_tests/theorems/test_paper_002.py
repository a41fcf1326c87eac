"""Targeted tests for paper 002's statements (lrnnkit/theorems/paper_002/), beyond the registry-wide test."""
from fractions import Fraction as F

import numpy as np
import pytest
import sympy
from hypothesis import given, strategies as st

from lrnnkit.theorems import paper_002 as p2
from lrnnkit.theorems._exact import exact_matmul as mm
from lrnnkit.theorems.paper_002.section_4 import _mod_arith_value


def test_proposition_1_symbolic_identity():
    """x_{0-1} - x_{1-0} = x_{0-0-1} - x_{0-1-0} = (A^2 - I)(u_0 - u_1) for a generic 2x2 A (sympy proof)."""
    A = sympy.Matrix(2, 2, sympy.symbols("a0:4"))
    u = {c: sympy.Matrix(sympy.symbols(f"u_{name}_0 u_{name}_1"))
         for c, name in zip(p2.CHARS, ("zero", "minus", "one"))}
    z = sympy.Matrix(sympy.symbols("z0:2"))

    def run(w, x):
        for c in w:
            x = A * x + u[c]
        return x
    d1 = (run("0-1", z) - run("1-0", z)).expand()
    d2 = (run("0-0-1", z) - run("0-1-0", z)).expand()
    assert (d1 - d2).expand() == sympy.zeros(2, 1)
    assert (d1 - (A * A - sympy.eye(2)) * (u["0"] - u["1"])).expand() == sympy.zeros(2, 1)
    # the identity is not vacuous: the difference is a nonzero polynomial
    assert d1 != sympy.zeros(2, 1)


def test_dense_subtraction_model_states():
    """The 2x2 input-dependent (value, sign) model stores the value of each of the proofs' strings."""
    mats, adds, z = p2.dense_subtraction_model()
    s = p2.four_strings(mats, adds, z)
    assert s["0-1"] == [F(-1), F(-1)] and s["1-0"] == [F(1), F(-1)]
    assert s["0-0-1"] == s["0-1-0"] == [F(-1), F(-1)]
    assert p2.consistent_on_proof_strings(mats, adds, z)


def test_liquid_witness_is_noncommuting():
    mats, w, z, _ = p2.liquid_witness()
    P = mm(mm(mats["1"], mats["-"]), mats["0"])
    Q = mm(mm(mats["0"], mats["-"]), mats["1"])
    assert P != Q      # the escape from Proposition 2 needs non-commuting transitions
    assert p2.consistent_on_proof_strings(mats, w, z)


@given(st.text(alphabet="0-1", max_size=30))
def test_base4_encoding_is_injective(word):
    """decode(encode(w)) = w on random strings up to length 30 (the Section 2 counterexample's readout)."""
    x = F(0)
    for c in word:
        x = x / 4 + {"0": 1, "-": 2, "1": 3}[c]
    assert p2.base4_decode(x) == word


def test_subtraction_value():
    assert p2.subtraction_value("0-1") == -1 and p2.subtraction_value("1-0") == 1
    assert p2.subtraction_value("0-0-1") == p2.subtraction_value("0-1-0") == -1
    assert p2.subtraction_value("0-") is None and p2.subtraction_value("--") is None


def test_small_p_counterexample_by_hand():
    """The p = 6/5 block: columns satisfy 2 (11/20)^(6/5) <= 1, and A^k = (11/10)^(k-1) A (exact)."""
    A = p2.P12_BLOCK
    assert 32 * 11 ** 6 <= 20 ** 6
    # independent float check of the column 6/5-norm (tolerance: well inside, 0.98 < 1)
    assert (2 * 0.55 ** 1.2) ** (1 / 1.2) < 0.99
    P = A
    for k in range(2, 12):
        P = mm(A, P)
        assert P == [[F(11, 10) ** (k - 1) * x for x in r] for r in A]


def test_pscan_reproduces_printed_output():
    """Appendix A.2.2's printed sequential and parallel outputs (torch.manual_seed(1)) are reproduced by the
    transcribed scan run on the exact values of the float32 inputs (4 printed decimals: tolerance 5e-5)."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(1)
    A = torch.randn(1, 7, 2, 2)
    u = torch.randn(1, 7, 2)
    x0 = torch.randn(1, 2)
    to_obj = np.vectorize(lambda v: F(float(v)), otypes=[object])
    out = p2.pscan_printed(to_obj(A.double().numpy()), to_obj(u.double().numpy()), to_obj(x0.double().numpy()))
    seq = p2.sequential(to_obj(A.double().numpy()), to_obj(u.double().numpy()), to_obj(x0.double().numpy()))
    assert np.all(out == seq)
    printed = [[0.8310, -0.2477], [0.5167, -1.4218], [1.1399, 1.3024], [0.9628, 1.3150], [-1.5308, -1.6903],
               [-3.6631, 1.6082], [1.7805, 7.1659], [2.5068, -0.6256]]
    got = np.array(out[0], dtype=float)
    assert np.allclose(got, printed, atol=5e-5)


def test_pscan_round_count():
    """ceil(log2(L)) rounds: spt prints exactly 3 rounds for a length-8 generation."""
    assert len(p2.spt_rounds(7)) == 3
    assert len(p2.spt_rounds(15)) == 4


def test_mod_arith_precedence():
    assert _mod_arith_value(["2", "+", "3", "*", "4"], 5) == (2 + 12) % 5
    assert _mod_arith_value(["2", "*", "3", "-", "4"], 5) == (6 - 4) % 5
