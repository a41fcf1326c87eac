"""The state passes of the chunked GH kernels (lrnnkit.ops.gh.wy_state): forward (kernel 2) -- the chunk
states S_n, U' = T diag(b) (V - diag(gamma) K S_0), the final state and, in the one-pass form, the outputs; reverse
(kernel 4) -- the initial state's gradient. Inputs T and G from the torch reference of the T pass, so each pass is
checked alone; forward against the per-chunk torch equations, reverse against float64 autograd of
lrnnkit.ops.gh.reference.chunk_gh_torch (proofs_tests/ops/gh/_wy_stages.py; bound TOL stated there)."""
import pytest
import torch

from lrnnkit.ops.gh.wy_state import _state_bwd_pass, _state_pass
from proofs_tests.ops.gh._wy_stages import F64, TOL, Case, rel


def _gates(cs, gate):
    return cs.G.to(cs.c.dev) if gate else None


@pytest.mark.parametrize("one_pass", [False, True])
@pytest.mark.parametrize("gate", [False, True])
def test_forward_pass_matches_torch(gate, one_pass):
    """The split form stores S_n and U' (no outputs); the one-pass form writes the outputs (no S_n, U'); both the
    final state."""
    cs = Case(gate)
    qf, kf, vf, bf, _ = cs.flat
    o, ht, h, vn = _state_pass(cs.c, qf, kf, vf, bf, cs.T.to(cs.c.dev), _gates(cs, gate), cs.h0d, cs.scale_t,
                               one_pass, not one_pass, True)
    assert rel(ht, cs.final) < TOL
    if one_pass:
        assert h is None and vn is None and rel(o, cs.O) < TOL
    else:
        assert o is None and rel(h, cs.S) < TOL and rel(vn, cs.Un) < TOL


@pytest.mark.parametrize("gate", [False, True])
def test_reverse_pass_gives_the_initial_state_gradient(gate):
    cs = Case(gate)
    c = cs.c
    qf, kf, _, bf, _ = cs.flat
    dh0_ref = cs.autograd()[-1]
    dv = torch.empty(kf.shape[0], c.H, c.V, dtype=F64, device=c.dev)
    dof = cs.do.to(c.dev).reshape(-1, c.H, c.V)
    dh, dy, dh0 = _state_bwd_pass(c, qf, kf, bf, cs.T.to(c.dev), _gates(cs, gate), dof, cs.dht.to(c.dev),
                                  cs.S.to(c.dev), cs.Un.to(c.dev), dv, False, cs.scale_t)
    assert dh.shape == cs.S.shape and dy.shape == cs.Un.shape
    assert rel(dh0, dh0_ref) < TOL
