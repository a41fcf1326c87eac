"""The output stage of the chunked GH kernels (lrnnkit.ops.gh.wy_output, kernel 3, the split forward): from the
chunk states S_n and U', O = diag(gamma) Q S_0 + ((Q K^T) * Gamma, lower incl. diagonal) U'. S_n, U' and G are the
torch reference's (proofs_tests/ops/gh/_wy_stages.py), so the stage is checked alone, against the outputs of
lrnnkit.ops.gh.reference.chunk_gh_torch (float64; bound TOL stated in _wy_stages.py)."""
import pytest

from lrnnkit.ops.gh.wy_output import _output_pass
from proofs_tests.ops.gh._wy_stages import TOL, Case, rel


@pytest.mark.parametrize("gate", [False, True])
def test_outputs_from_the_chunk_states_match_torch(gate):
    cs = Case(gate)
    qf, kf, _, _, _ = cs.flat
    d = cs.c.dev
    o = _output_pass(cs.c, qf, kf, cs.G.to(d) if gate else None, cs.S.to(d), cs.Un.to(d), cs.scale_t)
    o_ref = cs.autograd()[0]
    assert rel(o, cs.O) < TOL and rel(o.reshape(o_ref.shape), o_ref) < TOL
