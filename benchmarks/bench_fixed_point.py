"""The fixed-point layer (paper 003) beside the authors' code (CPU) and against DeltaProduct (GPU).

    python benchmarks/bench_fixed_point.py --authors /path/to/fp-rnn [--steps 300]   # CPU: theirs vs ours
    python benchmarks/bench_fixed_point.py --gpu --out DIR                          # on the GPU machine
    python3 benchmarks/bench_fixed_point.py --authors benchmarks/.fp_rnn --protocol --device cuda --out $OUT
    python benchmarks/bench_fixed_point.py --record-protocol DIR/fixed_point_protocol.md   # here: -> RESULTS.md
    python benchmarks/bench_fixed_point.py --record DIR/fixed_point_gpu.md          # here: GPU table -> RESULTS.md

**Authors' code (``--authors``)**: a checkout of github.com/dr-faustus/fp-rnn (the code of the paper's later
version; read from the given path, never copied here). Its vector-state ``FPRNN`` block (``models/fp_rnn_block.py``,
Householder-product mixer, previous-output dependence of Q and C) runs on CPU in this process once three GPU-only
dependencies are substituted, in this process only: ``causal_conv1d_fn`` by the same causal depthwise convolution
in torch, ``torch.compile`` by the identity, and torch's ``associative_scan`` by its ``combine_mode="generic"``
(the ``"pointwise"`` mode refuses CPU tensors). Their FPMamba (matrix state) needs mamba_ssm's CUDA scan and is not
run. ``use_short_conv=True``: without it their block feeds (B, D, T) tensors to Linear layers (a shape error at
the checked-out commit). Both models are ``embedding -> RMSNorm -> block (+ residual) -> RMSNorm -> linear head``,
trained by :func:`lrnnkit.learn.train.train` on the same task, data (batches from ``batch_rng(seed, step)``),
seed and schedule; the same width (their ``d_inner = 2 d_model`` channels: ours gets ``num_heads * head_dim =
2 width``), ``r`` reflections, iteration cap and tolerance 0.1 (theirs: damped iteration, per-token residual,
75%-quantile over the batch in training). Reported: test accuracy per length, seconds per training step, mean
iterations per forward in training and at evaluation.

**003's protocol (``--authors PATH --protocol``)**: 003-state-tracking (003, App. E.2; Section 3, Fig. 3) with
both blocks in one process on the same batches: A5 and S5, one layer, width 512 (the authors' default
``d_model``), r = ``--r``, l_max = 16, train length 16, test lengths 2 to 50, batch 128, lr 1e-4, weight decay
0.01, clipping 1.0, AdamW, cosine without warm-up. The paper's 50,000 steps per run do not fit one call:
``--budget-s`` seconds of training (default 400) are shared by the runs (two per group of ``--groups``, default
A5,S5), each cutting its step count once to fit so its schedule completes; the authors' evaluation comes on top
(about 130 s per group on an H200: it iterates up to 1000 times), so a 10-minute call fits one group with
``--budget-s 300`` (measured: two groups with 330 s did not finish in 400); the table says what fraction of the
paper's steps each run had. JSON (``fixed_point_protocol.json``) is written under ``--out`` after every run, the
table (``fixed_point_protocol.md``) at the end, with the paper's statement (Fig. 3 prints curves, no number).
``--smoke``: tiny sizes and three steps, CPU, seconds. PATH: ``benchmarks/.fp_rnn`` from
``benchmarks/export_fp_rnn.py`` (the authors' repository has no license, so it is exported, never committed).

**GPU (``--gpu``)**: the cost model ``iterations x (channel mix + one diagonal scan)`` against DeltaProduct with
``n_h = r`` of the same width (``lrnnkit.layers.DeltaProductLayer``), forward and forward + backward, at the
papers' shapes; the fixed-point layer is forced to exactly ``l`` iterations (tol ~ 0) for l in 1, 4, 16 (its
backward is one iteration whatever l). fp32 input under bf16 autocast, as ``lrnnkit train`` runs (the fixed-point
layer turns autocast off and computes in fp32), median of 20 timed calls after warm-up (CUDA events).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402


# ------------------------------------------------------------------------------------------------ authors' code
def load_authors_fprnn(path: str):
    """The authors' ``FPRNN`` class from a checkout at ``path`` (module text: the substitutions)."""
    def causal_conv1d_fn(x, weight, bias=None, activation=None):
        W = weight.shape[-1]
        y = F.conv1d(F.pad(x, (W - 1, 0)), weight[:, None, :], bias, groups=x.shape[1])
        return F.silu(y) if activation in ("silu", "swish") else y
    sys.modules["causal_conv1d"] = types.SimpleNamespace(causal_conv1d_fn=causal_conv1d_fn)
    torch.compile = lambda f=None, **kw: f if f is not None else (lambda g: g)
    pkg = types.ModuleType("models")               # their models/__init__ imports CUDA-only models: skip it
    pkg.__path__ = [os.path.join(os.path.abspath(path), "models")]
    sys.modules["models"] = pkg
    import importlib
    linrec = importlib.import_module("models.ops.linrec")
    from torch._higher_order_ops.associative_scan import associative_scan as _scan
    linrec.associative_scan = lambda f, xs, dim, reverse=False: _scan(f, xs, dim, reverse=reverse,
                                                                     combine_mode="generic")
    return importlib.import_module("models.fp_rnn_block").FPRNN


class Net(nn.Module):
    """embedding -> RMSNorm -> block (+ residual) -> RMSNorm -> head, for either block."""

    def __init__(self, vocab, n_out, width, block, iters):
        super().__init__()
        self.embed, self.block, self.iters = nn.Embedding(vocab, width), block, iters
        self.norm, self.final, self.head = nn.RMSNorm(width), nn.RMSNorm(width), nn.Linear(width, n_out)

    def forward(self, tokens):
        x = self.embed(tokens.long())
        y = self.block(self.norm(x))
        y = y[0] if isinstance(y, tuple) else y
        self.iters.append((self.training, self._last()))
        return self.head(self.final(x + y))

    def _last(self):
        if hasattr(self.block, "fixed_point_iter"):
            return self.block.fixed_point_iter[-1]
        return self.block.last_iterations


def _model_fn(a, who: str, iters: list):
    """The model factory for :func:`lrnnkit.learn.train.train`: the authors' FPRNN block or ours, same width."""
    from lrnnkit.layers.fixed_point import FixedPointLayer
    FPRNN = load_authors_fprnn(a.authors)

    def model_fn(task):
        if who == THEIRS:
            blk = FPRNN(d_model=a.width, d_mixer=None, mixer_rank=a.r, mixer_type="householderproduct",
                        max_iter=a.max_iters, mixer_proj_rank=-1, mixer_h_dep=True, use_short_conv=True,
                        convergence_threshold=0.1)
        else:
            blk = FixedPointLayer(hidden_size=a.width, num_heads=2, head_dim=a.width, num_reflections=a.r,
                                  max_iters=a.max_iters, tol=0.1, mode="chunk" if a.device == "cuda" else "torch")
        return Net(task.n_in, task.n_out, a.width, blk, iters)
    return model_fn


THEIRS, OURS = "authors' FPRNN", "lrnnkit FixedPointLayer"


def _train_one(a, cfg, who: str) -> dict:
    """One training run of ``who`` under ``cfg``; the result of ``train`` with wall seconds and mean iterations."""
    from lrnnkit.learn.train import train
    iters: list = []
    t0 = time.perf_counter()
    res = train(cfg, model_fn=_model_fn(a, who, iters))
    res.pop("_model")
    tr = [n for m, n in iters if m]
    ev = [n for m, n in iters if not m]
    res.update(model=who, wall_seconds=round(time.perf_counter() - t0, 1),
               iterations_train=sum(tr) / max(1, len(tr)), iterations_eval=sum(ev) / max(1, len(ev)))
    return res


def run_authors(a) -> str:
    from _record import table
    from lrnnkit.learn.train import TrainConfig
    if a.device == "cpu":
        torch.set_num_threads(max(1, os.cpu_count() // 2))
    cfg = TrainConfig(task=a.task, layer="diagonal", width=a.width, steps=a.steps, batch=a.batch, lr=a.lr,
                      train_len=(a.train_len, a.train_len), test_len=tuple(a.test_len), eval_n=a.eval_n,
                      eval_batch=a.eval_n, weight_decay=0.01, seed=a.seed, log_every=max(1, a.steps // 10),
                      device=a.device, loop="host")
    rows = []
    for who in (THEIRS, OURS):
        res = _train_one(a, cfg, who)
        rows.append([who, res["parameters"], res["steps"], f"{res['seconds'] / res['steps']:.3f}",
                     f"{res['train_accuracy']:.3f}"]
                    + [f"{res['test_accuracy'][str(L)]:.3f}" for L in a.test_len]
                    + [f"{res['iterations_train']:.1f}", f"{res['iterations_eval']:.1f}",
                       f"{res['wall_seconds']:.0f}"])
    head = ["model", "params", "steps", "s/step", "train acc"] + [f"acc@{L}" for L in a.test_len] + \
        ["iters (train)", "iters (eval)", "wall s"]
    body = table(head, rows)
    notes = (f"Task {a.task}, train length {a.train_len}, width {a.width} (2 x {a.width} channels), r = {a.r}, "
             f"cap {a.max_iters} iterations, tol 0.1, batch {a.batch}, lr {a.lr}, seed {a.seed}, AdamW + cosine, "
             f"{a.eval_n} test words per length; {a.device}, torch threads {torch.get_num_threads()}. Reproduce: "
             f"`python benchmarks/bench_fixed_point.py --authors PATH --task {a.task} --train-len {a.train_len} "
             f"--test-len {' '.join(map(str, a.test_len))} --eval-n {a.eval_n} --steps {a.steps} "
             f"--width {a.width} --r {a.r} --batch {a.batch} --lr {a.lr} --device {a.device}` (PATH: a checkout "
             "of github.com/dr-faustus/fp-rnn, commit 4c28602). "
             "Iterations: theirs counts its damped iterations plus the differentiable one, ours every iteration "
             "with the differentiable one.")
    return body, notes


# ------------------------------------------------------------------------------------------------ 003's protocol
#: 003-state-tracking as printed (003, App. E.2; lrnnkit.learn.protocols "003-state-tracking"): 5 epochs of 1.28M
#: words at batch 128 (50,000 steps), lr 1e-4, weight decay 0.01, clipping 1.0, AdamW; train length 16, test
#: lengths 2 through 50; one layer; l_max = 16 (003, Section 3, Fig. 3). Width: the authors' default d_model 512.
PAPER_STEPS = 50_000
PROTOCOL = dict(width=512, batch=128, lr=1e-4, weight_decay=0.01, clip=1.0, train_len=16,
                test_len=(2, 8, 16, 24, 32, 40, 50), max_iters=16, eval_n=1024)
SMOKE = dict(width=16, batch=8, train_len=16, test_len=(4, 16), max_iters=4, eval_n=8, steps=3)
#: 003, Section 3 and Fig. 3 (curves only: no number is printed)
PROTOCOL_SECTION = "fixed-point vs the authors' code at 003's state-tracking settings"
PAPER_SAYS = "solved at 16, generalises to 50 (Fig. 3 curve; no number printed)"


def _device_name(a) -> str:
    return torch.cuda.get_device_name() if a.device == "cuda" and torch.cuda.is_available() else a.device


def run_protocol(a) -> tuple:
    """003-state-tracking (A5 and S5) at 003's settings, the authors' FPRNN and ours on the same batches in this
    process; ``a.budget_s`` seconds of training shared equally by the runs (two per group of ``a.groups``) (the step count is cut once, after
    25 timed steps, to fit: ``auto_steps``, so the cosine schedule completes). JSON after every run."""
    from _record import table
    from lrnnkit.fileio import atomic_write_text
    from lrnnkit.learn.train import TrainConfig
    import json
    p = dict(PROTOCOL, steps=PAPER_STEPS)
    if a.smoke:
        p.update(SMOKE)
    a.width, a.max_iters = p["width"], p["max_iters"]
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "fixed_point_protocol.json")
    tasks = tuple(f"group:{g}" for g in a.groups)
    per_run = None if a.smoke else a.budget_s / (len(tasks) * 2)
    runs, rows = [], []
    for task in tasks:
        cfg = TrainConfig(task=task, layer="diagonal", width=p["width"], steps=p["steps"], batch=p["batch"],
                          lr=p.get("lr", 1e-4), train_len=(p["train_len"], p["train_len"]),
                          test_len=tuple(p["test_len"]), eval_n=p["eval_n"], weight_decay=0.01, clip=1.0,
                          warmup=0.0, min_lr=0.0, seed=a.seed, log_every=max(1, p["steps"] // 10),
                          device=a.device, loop="host", max_seconds=per_run, auto_steps=per_run is not None)
        for who in (THEIRS, OURS):
            res = _train_one(a, cfg, who)
            res.pop("checkpoint", None)
            runs.append(res)
            atomic_write_text(path, json.dumps({"protocol": p, "paper_steps": PAPER_STEPS, "r": a.r, "smoke": a.smoke,
                                                "device": a.device, "budget_s": a.budget_s, "runs": runs},
                                               indent=1, default=str) + "\n")
            acc = res["test_accuracy"]
            rows.append([task.split(":")[1], who, res["steps"], f"{res['steps'] / PAPER_STEPS:.1%}",
                         f"{res['seconds'] / res['steps']:.3f}", f"{acc[str(p['train_len'])]:.3f}",
                         f"{acc[str(max(p['test_len']))]:.3f}",
                         f"{sum(acc.values()) / len(acc):.3f}", f"{res['iterations_train']:.1f}",
                         f"{res['iterations_eval']:.1f}"])
        rows.append([task.split(":")[1], "003 (paper), Bedouin 1L, r in {1, 2, 4}", PAPER_STEPS, "100.0%", "",
                     PAPER_SAYS, "", "", "", ""])
    head = ["group", "model", "steps", "of paper's", "s/step", f"acc@{p['train_len']}", f"acc@{max(p['test_len'])}",
            "mean acc", "iters (train)", "iters (eval)"]
    notes = (f"003-state-tracking at 003's settings (App. E.2): one layer, width {p['width']} (2 x {p['width']} "
             f"channels), r = {a.r}, l_max = {p['max_iters']} in training and evaluation, tol 0.1, batch "
             f"{p['batch']}, lr {p.get('lr', 1e-4)}, weight decay 0.01, clip 1.0, AdamW + cosine to 0 without "
             f"warm-up (their code's CosineAnnealingLR), train length {p['train_len']}, test lengths "
             f"{', '.join(map(str, p['test_len']))} ({p['eval_n']} words each, token accuracy); both models on the "
             f"same batches (fresh every step where the paper repeats 1.28M words), seed {a.seed}, "
             f"{_device_name(a)}; "
             + ("smoke sizes, a few steps. " if a.smoke else
                f"{a.budget_s:.0f} s of training shared by the {2 * len(tasks)} runs. ")
             + "Differences from the paper: the steps "
             "(column 'of paper's'), one seed where it trains 3, the vector-state FPRNN where its Fig. 3 curve is "
             "Bedouin (the matrix-state FPMamba needs mamba_ssm's CUDA scan), the authors' associative scan in "
             "torch's generic mode (their s/step is not their speed). Reproduce: `python3 "
             f"benchmarks/bench_fixed_point.py --authors benchmarks/.fp_rnn --protocol --device {a.device} "
             f"--budget-s {a.budget_s:.0f} --r {a.r} --groups {','.join(a.groups)} --out $OUT`.")
    return table(head, rows), notes


# ------------------------------------------------------------------------------------------------ GPU
SHAPES = [("003 A5 (B=128, T=16, d=512)", 128, 16, 512),
          ("003 copy / mod-arith (B=128, T=256, d=128)", 128, 256, 128),
          ("LM-like (B=8, T=2048, d=1024)", 8, 2048, 1024)]


def _time(fn):
    """Median milliseconds of ``fn()``: triton's ``do_bench``, as bench_kernels.py times the kernels."""
    from triton.testing import do_bench
    return do_bench(fn, warmup=25, rep=100, return_mode="median")


def _deltaproduct(width, r):
    from lrnnkit.layers import DeltaProductLayer
    heads, hd = max(1, width // 64), min(64, width)
    try:
        return DeltaProductLayer(hidden_size=width, num_heads=heads, head_dim=hd, expand_v=1, num_householder=r,
                                 mode="chunk")
    except TypeError:      # the earlier constructor
        return DeltaProductLayer(width, heads, hd, n_h=r)


def run_gpu(a):
    from _record import table
    from lrnnkit.layers.fixed_point import FixedPointLayer
    dev = "cuda"
    rows = []
    for name, B, T, d in SHAPES:
        x = torch.randn(B, T, d, device=dev)
        for r in a.rs:
            dp = _deltaproduct(d, r).to(dev)

            def call(m):
                with torch.autocast(x.device.type, dtype=torch.bfloat16):
                    y = m(x)
                return y[0] if isinstance(y, tuple) else y
            xg = x.clone().requires_grad_()

            def fb(m):
                with torch.autocast(x.device.type, dtype=torch.bfloat16):
                    y = m(xg)
                (y[0] if isinstance(y, tuple) else y).float().sum().backward()
            with torch.no_grad():
                dp_f = _time(lambda: call(dp))
            dp_fb = _time(lambda: fb(dp))
            for state in (None, 16):
                for ell in (1, 4, 16):
                    fp = FixedPointLayer(hidden_size=d, num_heads=max(1, d // 64), num_reflections=r,
                                         state_size=state, max_iters=ell, tol=1e-30, mode="chunk").to(dev)
                    with torch.no_grad():
                        f = _time(lambda: call(fp))
                    fbt = _time(lambda: fb(fp))
                    rows.append([name, r, "vector" if state is None else f"matrix N={state}", ell, f"{f:.3f}",
                                 f"{fbt:.3f}", f"{dp_f:.3f}", f"{dp_fb:.3f}", f"{f / dp_f:.1f}x",
                                 f"{fbt / dp_fb:.1f}x"])
                    del fp
            del dp
            torch.cuda.empty_cache()
    check = _check_chunk_path(dev)
    head = ["shape", "r = n_h", "state", "iterations", "FP fwd ms", "FP fwd+bwd ms", "DP fwd ms", "DP fwd+bwd ms",
            "FP/DP fwd", "FP/DP fwd+bwd"]
    return table(head, rows) + "\n\n" + check


def _check_chunk_path(dev) -> str:
    """The CUDA path (Triton chunk scan forward, reverse chunk scan backward) against the torch doubling scan on
    the same GPU, fp32, 8 forced iterations: largest relative difference of the output and of the input gradient."""
    from lrnnkit.layers.fixed_point import FixedPointLayer
    out = []
    for state in (None, 4):
        torch.manual_seed(0)
        x = torch.randn(4, 300, 64, device=dev)
        res = []
        for mode in ("chunk", "torch"):
            torch.manual_seed(1)
            m = FixedPointLayer(hidden_size=64, num_heads=2, num_reflections=2, state_size=state, max_iters=8,
                                tol=1e-30, mode=mode).to(dev)
            xg = x.clone().requires_grad_()
            o = m(xg)[0]
            (o * torch.linspace(-1, 1, o.numel(), device=dev).reshape(o.shape)).sum().backward()
            res.append((o.detach(), xg.grad))
        (o1, g1), (o2, g2) = res
        rel = lambda a, b: float((a - b).abs().max() / b.abs().max().clamp_min(1e-30))  # noqa: E731
        out.append(f"{'vector' if state is None else 'matrix N=4'}: output {rel(o1, o2):.1e}, "
                   f"input gradient {rel(g1, g2):.1e}")
    return ("Chunk path vs torch doubling scan on the GPU (fp32, 8 iterations, B=4, T=300, d=64; relative max "
            "difference): " + "; ".join(out) + ".")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--authors", help="path to a checkout of the authors' fp-rnn repository (CPU comparison)")
    ap.add_argument("--gpu", action="store_true", help="the GPU speed comparison against DeltaProduct")
    ap.add_argument("--record", help="write a markdown file from --gpu --out into RESULTS.md")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--task", default="group:A5")
    ap.add_argument("--train-len", dest="train_len", type=int, default=16)
    ap.add_argument("--test-len", dest="test_len", type=int, nargs="+", default=[16, 32])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--width", type=int, default=32)
    ap.add_argument("--r", type=int, default=2)
    ap.add_argument("--rs", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--max-iters", dest="max_iters", type=int, default=16)
    ap.add_argument("--eval-n", dest="eval_n", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cpu", help="--authors on cpu (default) or cuda (the same substitutions)")
    ap.add_argument("--protocol", action="store_true",
                    help="with --authors: 003-state-tracking (A5, S5) at 003's settings, both models, one table")
    ap.add_argument("--budget-s", dest="budget_s", type=float, default=400.0,
                    help="--protocol: seconds of training shared by the runs, two per group (default 400); the "
                         "authors' evaluation comes on top (about 130 s per group on an H200: their evaluation "
                         "iterates up to 1000 times)")
    ap.add_argument("--groups", default="A5,S5",
                    help="--protocol: the groups of 003-state-tracking to run, comma-separated from A5, S5 "
                         "(one group per GPU fits a 10-minute call)")
    ap.add_argument("--record-protocol", dest="record_protocol",
                    help="write DIR/fixed_point_protocol.md from --protocol --out DIR into RESULTS.md")
    ap.add_argument("--smoke", action="store_true", help="--protocol: tiny sizes, a few steps (CPU, seconds)")
    a = ap.parse_args()
    a.groups = [g for g in a.groups.split(",") if g]
    if not a.groups or any(g not in ("A5", "S5") for g in a.groups):
        print(f"bench_fixed_point: --groups takes A5, S5 or both, got {','.join(a.groups)!r}", file=sys.stderr)
        sys.exit(2)
    from _record import record
    if a.authors and a.protocol:
        body, notes = run_protocol(a)
        from lrnnkit.fileio import atomic_write_text
        atomic_write_text(os.path.join(a.out, "fixed_point_protocol.md"), body + "\n\n" + notes + "\n")
        print(body + "\n\n" + notes)
    elif a.authors:
        body, notes = run_authors(a)
        record(f"fixed-point vs the authors' code ({a.task}, {a.device})", body, notes)
    if a.gpu:
        body = run_gpu(a)
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "fixed_point_gpu.md"), "w") as fh:
            fh.write(body + "\n")
        print(body)
    if a.record_protocol:
        with open(a.record_protocol) as fh:
            body, notes = fh.read().strip().split("\n\n", 1)
        record(PROTOCOL_SECTION, body, notes)
    if a.record:
        with open(a.record) as fh:
            body = fh.read().strip()
        record("fixed-point vs DeltaProduct (GPU)", body,
               "Command: on the GPU machine `python3 benchmarks/bench_fixed_point.py --gpu --out $OUT`; here "
               "`python benchmarks/bench_fixed_point.py --record fixed_point_gpu.md`. FP = FixedPointLayer forced to "
               "exactly `iterations` iterations (its backward is one iteration), DP = DeltaProductLayer with "
               "n_h = r, same width; bf16 autocast, median of 20 calls.")
    if not (a.authors or a.gpu or a.record or a.record_protocol):
        ap.error("give --authors PATH, --gpu or --record FILE")


if __name__ == "__main__":
    main()
