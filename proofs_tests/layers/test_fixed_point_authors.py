"""The 003 authors' blocks beside lrnnkit's fixed-point layer (``benchmarks/bench_fixed_point.py --authors PATH``):
the substitutes for their GPU-only code against independent transcriptions (mamba_ssm's selective scan, Gu & Dao
2023, against its segment-sum closed form; the lrnnkit linear recurrence against their own eager ``linrec_ref``
and generic-mode ``linrec_hop``), their matrix-state FPMamba (003's "Bedouin", Fig. 3) loading, iterating and
training on CPU, and the protocol's smoke sizes running both models end to end on the same batches. The tests that
load their code need their files, exported by ``benchmarks/export_fp_rnn.py`` into ``benchmarks/.fp_rnn`` (their
repository, github.com/dr-faustus/fp-rnn at 4c28602, has no license, so they are not in this one), and einops,
which their blocks import; the selective-scan tests need neither."""
from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys

import pytest
import torch

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
AUTHORS = os.path.join(REPO, "benchmarks", ".fp_rnn")
BENCH = os.path.join(REPO, "benchmarks", "bench_fixed_point.py")


def _need_authors(rel: str = "models/fp_mamba_block.py"):
    if not os.path.isfile(os.path.join(AUTHORS, rel)):
        pytest.skip("the authors' files are absent: run benchmarks/export_fp_rnn.py on a git mirror of "
                    "github.com/dr-faustus/fp-rnn")
    if importlib.util.find_spec("einops") is None:
        pytest.skip("einops (imported by the authors' blocks) is not installed")


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_fixed_point_under_test", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _theirs(name: str) -> bool:
    return name == "models" or name.startswith("models.") or name == "causal_conv1d"


@pytest.fixture
def authors(bench):
    """The loaders substitute ``torch.compile`` and put a ``models`` package in ``sys.modules``: undone after."""
    compile_, saved = torch.compile, {k: v for k, v in sys.modules.items() if _theirs(k)}
    yield bench
    torch.compile = compile_
    for k in [k for k in sys.modules if _theirs(k)]:
        del sys.modules[k]
    sys.modules.update(saved)


# ---------------------------------------------------------------------------------------------- selective scan
def _closed_form(u, delta, A, B, C, D, z, delta_bias):
    """Mamba's selective scan (Gu & Dao 2023) as one sum over pairs s <= t, not a recurrence: with
    ``S_t = sum_{r <= t} delta_r`` (delta = softplus(delta + bias)),
    ``y_t[d] = sum_{s <= t} sum_n C_t[n] exp(A[d, n] (S_t - S_s)[d]) delta_s[d] B_s[n] u_s[d] + D[d] u_t[d]``,
    times ``z_t / (1 + exp(-z_t))``; float64; a part left out (None) is left out of the sum."""
    dl = torch.log1p(torch.exp(delta + (0 if delta_bias is None else delta_bias[:, None])))
    S = dl.cumsum(-1)
    L = u.shape[-1]
    causal = torch.ones(L, L, dtype=torch.bool).tril()                        # [t, s]: s <= t
    seg = torch.where(causal, S[..., :, None] - S[..., None, :], torch.zeros(()))
    K = torch.exp(seg[..., None] * A[None, :, None, None, :]) * causal[..., None]   # (B, D, t, s, N)
    y = torch.einsum("bdtsn,bnt,bns,bds->bdt", K, C, B, dl * u) + (0 if D is None else D[:, None] * u)
    return y if z is None else y * z / (1 + torch.exp(-z))


def _scan_inputs(Bsz, Dch, N, L, seed, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    r = lambda *s: torch.randn(*s, generator=g, dtype=dtype)  # noqa: E731
    ins = dict(u=r(Bsz, Dch, L), delta=r(Bsz, Dch, L), A=-torch.exp(r(Dch, N)), B=r(Bsz, N, L), C=r(Bsz, N, L),
               D=r(Dch), z=r(Bsz, Dch, L), delta_bias=r(Dch) - 2.0)
    return {k: v.requires_grad_() for k, v in ins.items()}


def _value_and_grads(f, ins, w):
    y = f(**ins)
    return y.detach(), torch.autograd.grad((y * w).sum(), list(ins.values()))


def _fused_core():
    """lrnnkit's fused selective-scan kernels, the CUDA path of the substitute (the Triton interpreter on CPU)."""
    from lrnnkit.ops._triton import INTERPRET
    if not INTERPRET:
        pytest.skip("the fused kernels run on CPU tensors only under TRITON_INTERPRET=1")
    from lrnnkit.ops.diagonal.selective import selective_scan_fused
    return selective_scan_fused


@pytest.mark.parametrize("impl", ["sequential", "lrnnkit", "lrnnkit-fused"])
@pytest.mark.parametrize("shape", [(2, 3, 4, 9), (1, 5, 16, 1), (3, 2, 3, 16)])
def test_selective_scan_substitute_is_mambas_scan(bench, impl, shape):
    """Output and the gradients of u, delta, A, B, C, D, z, delta_bias against the closed form, float64 (the
    substitutes keep float64 inputs in float64): tolerance 1e-9 relative to the largest entry, since both sides
    are sums of at most 16 x 16 O(1) terms in different association (the difference is a few ulps); a wrong sign,
    bias, gate, shift or transposed B/C is off by O(1). Shapes: (batch, channels, states, length) with one step
    and sixteen steps."""
    Bsz, Dch, N, L = shape
    ins = _scan_inputs(Bsz, Dch, N, L, seed=sum(shape))
    w = torch.randn(Bsz, Dch, L, dtype=torch.float64, generator=torch.Generator().manual_seed(7))
    if impl == "sequential":
        f = lambda **k: bench.selective_scan_sequential(**k, delta_softplus=True)  # noqa: E731
    else:
        core = _fused_core() if impl == "lrnnkit-fused" else None
        f = lambda **k: bench.selective_scan_lrnnkit(**k, delta_softplus=True, core=core)  # noqa: E731
    y, g = _value_and_grads(f, ins, w)
    y_ref, g_ref = _value_and_grads(lambda **k: _closed_form(**k), ins, w)
    assert y.dtype == torch.float64 and y.shape == (Bsz, Dch, L)
    rel = lambda a, b: float((a - b).abs().max() / b.abs().max().clamp_min(1e-300))  # noqa: E731
    assert rel(y, y_ref) < 1e-9
    for name, a, b in zip(ins, g, g_ref):
        assert rel(a, b) < 1e-9, name


def test_selective_scan_substitute_float32_and_options(bench):
    """float32 (what FPMamba feeds it): both substitutes within 2e-5 of the float64 closed form relative to the
    largest entry (float32's 6e-8 ulp over sums of 16 x 8 terms, with margin); a bf16 ``u`` (bf16 autocast) gives
    a bf16 ``y`` as mamba_ssm's kernel does; z, D and the bias may be left out; ``return_last_state`` and a fixed
    (D, N) B or C, which FPMamba's forward never asks for, are refused rather than computed some other way."""
    ins = _scan_inputs(2, 3, 8, 16, seed=3)
    ref = _closed_form(**ins).detach()
    f32 = {k: v.detach().float() for k, v in ins.items()}
    for f in (bench.selective_scan_sequential, bench.selective_scan_lrnnkit):
        y = f(**f32, delta_softplus=True)
        assert y.dtype == torch.float32
        assert float((y.double() - ref).abs().max() / ref.abs().max()) < 2e-5
    assert bench.selective_scan_lrnnkit(**dict(f32, u=f32["u"].bfloat16()), delta_softplus=True).dtype \
        == torch.bfloat16
    d = {k: v.detach() for k, v in ins.items()}
    bare = dict(d, z=None, D=None, delta_bias=None)
    b, c = d["B"][0, :, 0], d["C"][0, :, 0]                      # one B and C for every channel and step
    for f in (bench.selective_scan_sequential, bench.selective_scan_lrnnkit):
        torch.testing.assert_close(f(**bare, delta_softplus=True), _closed_form(**bare), rtol=1e-9, atol=1e-9)
        for kw in ({"return_last_state": True}, {"B": b.expand(3, 8)}, {"C": c.expand(3, 8)}):
            with pytest.raises(ValueError, match="not implemented"):
                f(**{**d, "delta_softplus": True, **kw})


# ---------------------------------------------------------------------------------------------- linear recurrence
@pytest.mark.parametrize("dim,reverse,shape", [(1, False, (3, 13, 5)), (1, True, (2, 9, 4)), (-1, False, (4, 11)),
                                               (0, False, (7, 2, 3)), (2, True, (2, 3, 6, 4))])
def test_lrnnkit_linrec_is_their_linrec(authors, dim, reverse, shape):
    """:func:`linrec_lrnnkit` (lrnnkit's diagonal scan) against their eager ``linrec_ref`` (a loop, with their
    hand-written backward) and their ``linrec_hop`` on torch's generic associative scan (FPRNN's path; fp-rnn at
    4c28602, ``models/ops/linrec.py``), float64, values and the gradients of inputs and coefficients, tolerance
    1e-12 (sums of at most 13 products of O(1) terms, re-associated). Coefficients in (0, 1), as FPRNN's sigmoid
    gates; every layout the argument ``dim`` allows, forward and reverse."""
    _need_authors("models/ops/linrec.py")
    authors.load_authors_fprnn(AUTHORS, scan="generic")
    linrec = sys.modules["models.ops.linrec"]
    g = torch.Generator().manual_seed(len(shape) + dim)
    x = torch.randn(*shape, dtype=torch.float64, generator=g).requires_grad_()
    a = torch.rand(*shape, dtype=torch.float64, generator=g).requires_grad_()
    w = torch.randn(*shape, dtype=torch.float64, generator=g)
    out = {}
    for name, f in (("ours", authors.linrec_lrnnkit), ("ref", linrec.linrec_ref), ("hop", linrec.linrec_hop)):
        y = f(inputs=x, coeffs=a, dim=dim, reverse=reverse)
        out[name] = (y.detach(), *torch.autograd.grad((y * w).sum(), (x, a)))
    for name in ("ref", "hop"):
        for mine, theirs in zip(out["ours"], out[name]):
            torch.testing.assert_close(mine, theirs, rtol=1e-12, atol=1e-12)
    assert out["ours"][0].dtype == torch.float64


def test_fprnn_scan_choice_changes_only_the_scan(authors):
    """Their FPRNN through ``load_authors_fprnn(scan=...)``: ``lrnnkit`` puts :func:`linrec_lrnnkit` in the
    block's module, ``generic`` their own ``linrec_hop``; one model in float64 gives the same output, iteration
    count and parameter gradients under both (tolerance 1e-10: the only difference is the scan's association)."""
    _need_authors("models/fp_rnn_block.py")
    torch.manual_seed(0)
    res = {}
    model = None
    for scan in ("generic", "lrnnkit"):
        FPRNN = authors.load_authors_fprnn(AUTHORS, scan=scan)
        mod = sys.modules["models.fp_rnn_block"]
        assert (getattr(mod.linrec_hop, "func", None) is authors.linrec_lrnnkit) == (scan == "lrnnkit")
        if model is None:
            model = FPRNN(d_model=8, d_mixer=None, mixer_rank=2, mixer_type="householderproduct", max_iter=6,
                          mixer_proj_rank=-1, mixer_h_dep=True, use_short_conv=True,
                          convergence_threshold=0.1).double()
            x = torch.randn(2, 7, 8, dtype=torch.float64)
        model.zero_grad()
        y = model(x)
        y.pow(2).sum().backward()
        res[scan] = (y.detach(), model.fixed_point_iter[-1],
                     [p.grad.clone() for p in model.parameters() if p.grad is not None])
    (y1, n1, g1), (y2, n2, g2) = res["generic"], res["lrnnkit"]
    assert n1 == n2 and len(g1) == len(g2) > 0
    torch.testing.assert_close(y2, y1, rtol=1e-10, atol=1e-10)
    for a, b in zip(g2, g1):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-10)


# ---------------------------------------------------------------------------------------------- FPMamba
def test_fpmamba_loads_iterates_and_trains_on_cpu(authors):
    """Their FPMamba (003's Bedouin) with 003's Fig. 3 arguments (:func:`fpmamba_kwargs`) at a tiny width:
    forward and backward on CPU, finite, every parameter but the unused ones reached by the gradient; each forward
    appends its iteration count to ``fixed_point_iter``, more than the one undamped step and at most the cap + 1
    in training; the lrnnkit and step-by-step scans give the same output in float64 (1e-10); and a training step
    lowers a fixed loss."""
    _need_authors()
    FPMamba = authors.load_authors_fpmamba(AUTHORS, scan="lrnnkit")
    assert sys.modules["models.fp_mamba_block"].selective_scan_fn is authors.selective_scan_lrnnkit
    torch.manual_seed(0)
    kw = authors.fpmamba_kwargs(width=8, r=2, max_iters=6)
    assert (kw["d_state"], kw["expand"], kw["mixer_rank"], kw["max_iter"], kw["damping_decay_rate"],
            kw["convergence_threshold"]) == (16, 2, 2, 6, 0.9, 0.1)
    blk = authors._their_init(FPMamba(**kw)).double()
    assert blk.d_inner == 16 and blk.A_log.shape == (16, 16)
    assert float(blk.mixer.alpha_proj.bias.detach().abs().max()) == 0 < float(blk.dt_proj.bias.detach().abs().max())
    x = torch.randn(3, 10, 8, dtype=torch.float64)
    y = blk(x)
    assert y.shape == x.shape and torch.isfinite(y).all()
    assert len(blk.fixed_point_iter) == 1 and 2 <= blk.fixed_point_iter[0] <= kw["max_iter"] + 1
    y.pow(2).sum().backward()
    grads = {n: p.grad for n, p in blk.named_parameters()}
    assert all(g is not None and torch.isfinite(g).all() for n, g in grads.items() if "conv1d" not in n)
    assert float(grads["A_log"].abs().sum()) > 0 and float(grads["mixer.u_proj.parametrizations.weight.original0"]
                                                           .abs().sum()) > 0
    authors.load_authors_fpmamba(AUTHORS, scan="generic")
    assert sys.modules["models.fp_mamba_block"].selective_scan_fn is authors.selective_scan_sequential
    with torch.no_grad():
        y_loop = blk(x)
    torch.testing.assert_close(y_loop, y.detach(), rtol=1e-10, atol=1e-10)
    assert len(blk.fixed_point_iter) == 2
    blk.float()
    xf = x.float()
    opt = torch.optim.AdamW(blk.parameters(), lr=1e-2)
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = (blk(xf) - xf.flip(1)).pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0] and len(blk.fixed_point_iter) == 7


# ---------------------------------------------------------------------------------------------- the benchmark
def _run(*args, out=None, timeout=300):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO] + sys.path), **({"OUT": str(out)} if out else {}))
    return subprocess.run([sys.executable, BENCH, *args], capture_output=True, text=True, env=env, timeout=timeout)


@pytest.mark.parametrize("block", ["fpmamba", "fprnn"])
def test_the_protocol_smoke_runs_both_models(tmp_path, block):
    """``--authors benchmarks/.fp_rnn --protocol --smoke`` (``--authors-block`` left to its default, fpmamba, or
    fprnn): both models train on A5 and S5 on the same batches, the JSON and the table name their block; every
    forward iterated at least once and at most the training cap (theirs: + 1, their one differentiable
    iteration); at evaluation ours keeps the cap and theirs follows its own rule (up to 1000)."""
    _need_authors(f"models/{'fp_mamba' if block == 'fpmamba' else 'fp_rnn'}_block.py")
    extra = [] if block == "fpmamba" else ["--authors-block", "fprnn"]
    r = _run("--authors", AUTHORS, "--protocol", "--smoke", "--out", str(tmp_path), *extra, out=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    doc = json.loads((tmp_path / "fixed_point_protocol.json").read_text())
    theirs = {"fpmamba": "authors' FPMamba", "fprnn": "authors' FPRNN"}[block]
    assert doc["authors_block"] == block and doc["authors_scan"] == "lrnnkit"
    runs = doc["runs"]
    assert [(x["task"], x["model"]) for x in runs] == [
        (t, m) for t in ("group:A5", "group:S5") for m in (theirs, "lrnnkit FixedPointLayer")]
    cap = doc["protocol"]["max_iters"]
    for x in runs:
        assert x["steps"] == doc["protocol"]["steps"]
        assert sorted(map(int, x["test_accuracy"])) == sorted(doc["protocol"]["test_len"])
        assert all(0.0 <= v <= 1.0 for v in x["test_accuracy"].values())
        assert math.isfinite(x["seconds"]) and x["seconds"] > 0
        assert 1.0 <= x["iterations_train"] <= cap + 1
        assert 1.0 <= x["iterations_eval"] <= (cap if x["model"] == "lrnnkit FixedPointLayer" else 1001)
    # same data, same seed, same sizes: the two models of a group differ in their parameters, not in the task
    for t in ("group:A5", "group:S5"):
        a, b = (x for x in runs if x["task"] == t)
        assert a["config"] == b["config"] and a["parameters"] != b["parameters"]
    table = (tmp_path / "fixed_point_protocol.md").read_text()
    assert table.count(theirs) == 2 and table.count("003 (paper)") == 2
    assert f"--authors-block {block}" in table


def test_the_benchmark_refuses_bad_choices_in_one_line(tmp_path):
    """A block or scan it does not know, or an export without the block's file: one line on stderr, exit 2."""
    for args in (["--authors", AUTHORS, "--authors-block", "mamba2"], ["--authors", AUTHORS, "--authors-scan", "x"],
                 ["--authors", str(tmp_path), "--protocol"]):
        r = _run(*args, "--out", str(tmp_path))
        assert r.returncode == 2, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith("bench_fixed_point: "), r.stderr
