"""The gradient stages of the chunked GH kernels (lrnnkit.ops.gh.wy_grad): kernel 5 (dq and the non-WY part of
dk), kernel 6 (the WY backward: dk, dv, dbeta, dg), 5+6 fused and 5+6 reading each tile once, each against
float64 autograd of lrnnkit.ops.gh.reference.chunk_gh_torch. T, G, S_n and U' are the torch reference's; dS_n and
dY come from the reverse state pass (checked in test_wy_state.py). Bound TOL: proofs_tests/ops/gh/_wy_stages.py."""
import pytest
import torch

from lrnnkit.ops.gh.wy_grad import _dqk_wy_once_pass, _dqk_wy_pass, _dqkwg_pass, _wy_bwd_pass
from lrnnkit.ops.gh.wy_state import _state_bwd_pass
from proofs_tests.ops.gh._wy_stages import F64, TOL, Case, rel


@pytest.mark.parametrize("fuse", [False, True, "once"])
@pytest.mark.parametrize("gate", [False, True])
def test_gradients_match_autograd(gate, fuse):
    cs = Case(gate)
    c, d = cs.c, cs.c.dev
    qf, kf, vf, bf, _ = cs.flat
    _, _, dq_r, dk_r, dv_r, db_r, dg_r, _ = cs.autograd()
    Gc = cs.G.to(d) if gate else None
    tm, h, vn = cs.T.to(d), cs.S.to(d), cs.Un.to(d)
    L = kf.shape[0]
    dof = cs.do.to(d).reshape(-1, c.H, c.V)
    new = lambda *shape: torch.empty(*shape, dtype=F64, device=d)  # noqa: E731
    dh, dy, _ = _state_bwd_pass(c, qf, kf, bf, tm, Gc, dof, cs.dht.to(d), h, vn, new(L, c.H, c.V), False,
                                cs.scale_t)
    dq, dk, dv, db = new(c.Ltok, c.H, c.K), new(L, c.H, c.K), new(L, c.H, c.V), new(L, c.H)
    dg = new(c.Ltok, c.H) if gate else None
    if fuse == "once":
        _dqk_wy_once_pass(c, qf, kf, vf, bf, Gc, tm, h, dh, vn, dy, dof, dq, dk, dv, db, dg, cs.scale_t, True)
    elif fuse:
        _dqk_wy_pass(c, qf, kf, vf, bf, Gc, tm, h, dh, vn, dy, dof, dq, dk, dk, dv, db, dg, cs.scale_t, True)
    else:
        dx, dGp, NKB = _dqkwg_pass(c, qf, kf, Gc, h, dh, vn, dy, dof, dq, dk, cs.scale_t)
        assert rel(dq.reshape(dq_r.shape), dq_r) < TOL            # dq is final after kernel 5
        _wy_bwd_pass(c, kf, vf, bf, Gc, tm, dx, dy, dk, dGp, NKB, dk, dv, db, dg, True)
    got = {"dq": (dq, dq_r), "dk": (dk, dk_r), "dv": (dv, dv_r), "db": (db, db_r)}
    if gate:
        got["dg"] = (dg, dg_r)
    errs = {n: rel(a.reshape(r.shape), r) for n, (a, r) in got.items()}
    assert all(e < TOL for e in errs.values()), errs
