"""lrnnkit.layers.mamba: Mamba's selective block with 000's eigenvalue range, against a loop written from the
equations alone (Gu & Dao, 2023, Algorithm 2; 003, App. D.1), values and gradients in float64; its transitions in
the range it is given; mamba_ssm's initialisation; bad settings refused in one line."""
import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.nn import functional as F

from lrnnkit.errors import InputError
from lrnnkit.layers.mamba import DT_MAX, DT_MIN, MambaMixer
from lrnnkit.ops._triton import INTERPRET


def _loop(m: MambaMixer, u: torch.Tensor) -> torch.Tensor:
    """The block as a sequential loop over time with its (d_inner, N) state, from the module's equations; the
    convolution as a left-padded depthwise conv1d, everything in u's dtype."""
    Bsz, T, _ = u.shape
    xz = u @ m.in_proj.weight.T
    x, z = xz[..., :m.d_inner], xz[..., m.d_inner:]
    k = m.conv.weight.shape[-1]
    x = F.silu(F.conv1d(F.pad(x.transpose(1, 2), (k - 1, 0)), m.conv.weight, m.conv.bias,
                        groups=m.d_inner).transpose(1, 2))
    p = x @ m.x_proj.weight.T
    dt, Bm, C = p[..., :m.dt_rank], p[..., m.dt_rank:m.dt_rank + m.d_state], p[..., m.dt_rank + m.d_state:]
    delta = F.softplus(dt @ m.dt_proj.weight.T + m.dt_proj.bias)
    A = -torch.exp(m.A_log)
    h = torch.zeros(Bsz, m.d_inner, m.d_state, dtype=u.dtype)
    ys = []
    for t in range(T):
        a = torch.exp(delta[:, t, :, None] * A)
        if m.neg:
            a = 2 * a - 1
        h = a * h + (delta[:, t] * x[:, t])[..., None] * Bm[:, t, None, :]
        ys.append((h * C[:, t, None, :]).sum(-1) + m.D * x[:, t])
    y = torch.stack(ys, 1) * F.silu(z)
    return y @ m.out_proj.weight.T


@pytest.mark.parametrize("eig", [(0.0, 1.0), (-1.0, 1.0)])
@pytest.mark.parametrize("backend", ["scan", "naive", pytest.param("fused", marks=pytest.mark.skipif(
    not INTERPRET, reason="CPU tensors: the kernels in the Triton interpreter (compiled: "
                          "proofs_tests/ops/diagonal/test_selective.py on CUDA)"))])
def test_the_block_is_its_equations(eig, backend, monkeypatch):
    """Outputs and every parameter's gradient of both backends (the doubling scan in torch here, the sequential
    kernel reference) and of the block on the fused selective-scan kernels (what CUDA runs; the Triton interpreter
    here) against the loop, float64 with the weights perturbed off their initialisation, tolerance 1e-10
    (re-associated sums of 11 steps of O(1) terms)."""
    if backend == "fused":
        from lrnnkit.layers import mamba
        from lrnnkit.ops.diagonal.selective import selective_scan_fused
        monkeypatch.setattr(mamba, "selective_scan", selective_scan_fused)
    torch.manual_seed(0)
    m = MambaMixer(6, eig, d_state=3, backend="naive" if backend == "naive" else "scan").double()
    with torch.no_grad():
        for p in m.parameters():
            p.add_(0.3 * torch.randn_like(p))
    u = torch.randn(2, 11, 6, dtype=torch.float64)
    got, want = m(u), _loop(m, u)
    torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-10)
    g = torch.randn_like(got)
    fast = torch.autograd.grad((got * g).sum(), list(m.parameters()))
    ref = torch.autograd.grad((_loop(m, u) * g).sum(), list(m.parameters()))
    for (name, _), a, b in zip(m.named_parameters(), fast, ref):
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-10, msg=lambda s: f"{name}: {s}")


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**31 - 1), st.booleans())
def test_transitions_lie_in_the_range(seed, neg):
    """Every state's transition is exp(-Delta exp(A_log)) in (0, 1) (Mamba) or twice that less one in (-1, 1)
    (000's extension), for any input and weights; the two ranges' transitions are related by a = 2 s - 1 exactly."""
    torch.manual_seed(seed)
    m = MambaMixer(4, (-1.0, 1.0) if neg else (0.0, 1.0), d_state=2).double()
    with torch.no_grad():
        for p in m.parameters():
            p.mul_(1 + torch.rand_like(p))
    u = 3 * torch.randn(1, 5, 4, dtype=torch.float64)
    with torch.no_grad():
        a = m.transitions(u)
    assert a.shape == (1, 5, m.d_inner * m.d_state, 1, 1)
    lo = -1.0 if neg else 0.0
    assert float(a.min()) >= lo and float(a.max()) <= 1.0
    m.neg = not neg
    with torch.no_grad():
        b = m.transitions(u)
    s = b if neg else a
    torch.testing.assert_close(a if neg else b, 2 * s - 1, rtol=0, atol=1e-15)


def test_the_initialisation_is_mamba_ssms():
    """A_log[c, n] = log(n + 1) on every channel, D = 1, no projection bias but dt's, and the time steps
    softplus(b_dt) log-uniform in [1e-3, 1e-1] (inside that range, spread over most of it)."""
    torch.manual_seed(1)
    m = MambaMixer(32, d_state=16)
    want = torch.log(torch.arange(1, 17, dtype=torch.float32))
    assert torch.equal(m.A_log, want.repeat(64, 1)) and torch.equal(m.D, torch.ones(64))
    assert m.in_proj.bias is None and m.x_proj.bias is None and m.out_proj.bias is None
    dt = F.softplus(m.dt_proj.bias.detach().double())
    assert float(dt.min()) >= DT_MIN * (1 - 1e-5) and float(dt.max()) <= DT_MAX * (1 + 1e-5)
    logs = torch.log(dt)
    assert float(logs.max() - logs.min()) > 0.6 * (math.log(DT_MAX) - math.log(DT_MIN))
    assert m.dt_rank == 2 and m.d_inner == 64


@pytest.mark.parametrize("kw,msg", [({"width": 0}, "width"), ({"d_state": 1.5}, "d_state"),
                                    ({"expand": True}, "expand"), ({"backend": "chunk"}, "backend")])
def test_bad_settings_are_refused(kw, msg):
    args = {"width": 4, **kw}
    with pytest.raises(InputError, match=f"MambaMixer: {msg}"):
        MambaMixer(**args)


def test_bench_mamba_step_smoke(tmp_path):
    """benchmarks/bench_mamba_step.py --smoke --batched on the CPU: the device check (float32 against float64,
    relative error under 1e-5: single-precision rounding over 10 steps), the batched-vs-alone check, and a time
    for every arm of each group, written to the JSON."""
    import json

    from benchmarks import bench_mamba_step
    out = tmp_path / "m.json"
    assert bench_mamba_step.main(["--smoke", "--only", "003-state-tracking", "--seconds", "0.05", "--batched",
                                  "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert all(e["out"] < 1e-5 and e["grad"] < 1e-5 for e in doc["errors"].values())
    assert doc["batched_check"]["ok"]
    arms = bench_mamba_step.ARMS + bench_mamba_step.BATCHED
    assert sorted(r["layer"] for r in doc["rows"]) == sorted(arms * 2)
    assert all(r["ms_per_step"] > 0 for r in doc["rows"])


def test_bench_mamba_step_merge_writes_the_blocks_steps_under_the_paper_labels(tmp_path):
    """benchmarks/bench_mamba_step.py --merge: a step file measured under the one-state layer's labels
    (``Mamba-like diagonal [..]``) gives the cost table rows under the paper-scale labels (``Mamba [..]``); a group
    of one run takes its one run's step as its batched one; a group measured alone only (no batched arm, several
    runs) is left out; the ``diagonal`` arm is not the block's and is ignored."""
    import json

    from benchmarks import bench_mamba_step
    step = {"measured_utc": "t", "rows": [
        {"experiment": "000-z60", "label": "Mamba-like diagonal [-1,1]", "layer": "mamba", "batch": 512, "width": 128,
         "layers": 2, "train_len": [32, 32], "ms_per_step": 2.5, "graph": "captured"},
        {"experiment": "000-z60", "label": "Mamba-like diagonal [-1,1]", "layer": "diagonal", "batch": 512,
         "width": 128, "layers": 2, "train_len": [32, 32], "ms_per_step": 1.0, "graph": "captured"},
        {"experiment": "000-parity", "label": "Mamba-like diagonal [0,1]", "layer": "mamba", "batch": 1024,
         "runs": 12, "width": 128, "layers": 2, "train_len": [3, 40], "ms_per_step": 5.5, "graph": "captured"},
        {"experiment": "003-state-tracking", "label": "A5 Mamba-like diagonal [0,1] 2L", "layer": "mamba",
         "batch": 128, "runs": 3, "width": 512, "layers": 2, "train_len": [16, 16], "ms_per_step": 1.6},
        {"experiment": "003-state-tracking", "label": "A5 Mamba-like diagonal [0,1] 2L", "layer": "mamba batched",
         "batch": 128, "runs": 3, "width": 512, "layers": 2, "train_len": [16, 16], "ms_per_step": 4.0}]}
    sp, cp = tmp_path / "s.json", tmp_path / "c.json"
    sp.write_text(json.dumps(step))
    cp.write_text(json.dumps({"experiments": {"000-z60": {"rows": []}}}))
    got = bench_mamba_step.merge(str(sp), str(cp))
    assert sorted(got) == ["000-z60 / Mamba [-1,1] (new row)", "003-state-tracking / A5 Mamba [0,1] 2L (new row)"]
    cost = json.loads(cp.read_text())["experiments"]
    z60, = cost["000-z60"]["rows"]
    assert z60["label"] == "Mamba [-1,1]" and z60["layer"] == "mamba" and z60["ms_per_step"] == 2.5
    assert z60["batched"] == {"runs": 1, "ms_per_step": 2.5}
    a5, = cost["003-state-tracking"]["rows"]
    assert a5["ms_per_step"] == 1.6 and a5["batched"] == {"runs": 3, "ms_per_step": 4.0}
    assert "000-parity" not in cost
