"""The T pass of the chunked GH kernels (lrnnkit.ops.gh.wy_t, kernel 1): per chunk, the in-chunk cumulative
log-gate G and T = (I + A)^{-1}, A = strictly_lower(diag(b) K K^T * Gamma), against the same quantities computed in
torch (proofs_tests/ops/gh/_wy_stages.py; float64, bound TOL stated there)."""
import pytest

from lrnnkit.ops.gh.wy_t import _t_pass
from proofs_tests.ops.gh._wy_stages import TOL, Case, rel


@pytest.mark.parametrize("gate", [False, True])
def test_t_and_gates_match_torch(gate):
    cs = Case(gate)
    qf, kf, vf, bf, gf = cs.flat
    Gc, tm = _t_pass(cs.c, kf, bf, gf)
    assert tm.shape == cs.T.shape and rel(tm, cs.T) < TOL
    if gate:
        assert rel(Gc, cs.G) < TOL
    else:
        assert Gc is None
