"""The fixed-point layer (paper 003) beside the authors' code (CPU) and against DeltaProduct (GPU).

    python benchmarks/bench_fixed_point.py --authors benchmarks/.fp_rnn [--steps 300]  # CPU: theirs vs ours
    python benchmarks/bench_fixed_point.py --gpu --out DIR                          # on the GPU machine
    python3 benchmarks/bench_fixed_point.py --authors benchmarks/.fp_rnn --protocol --device cuda --out $OUT
        [--authors-block fpmamba|fprnn] [--authors-scan lrnnkit|generic] [--groups A5] [--budget-s 300]
    python benchmarks/bench_fixed_point.py --record-protocol DIR/fixed_point_protocol.md   # here: -> RESULTS.md
    python benchmarks/bench_fixed_point.py --record DIR/fixed_point_gpu.md          # here: GPU table -> RESULTS.md

**Authors' code (``--authors PATH``)**: an export (``benchmarks/export_fp_rnn.py``) or checkout of
github.com/dr-faustus/fp-rnn at commit 4c28602 (the code of the paper's later version; read from PATH, never copied
here: the repository has no license). ``--authors-block`` picks their block:

* ``fpmamba`` (the default with ``--protocol``): their matrix-state ``FPMamba`` (``models/fp_mamba_block.py``),
  003's "Bedouin" of Fig. 3, built as their state-tracking runs build it (:func:`fpmamba_kwargs`: d_state 16,
  expand 2, Householder-product mixer of rank r with previous-output dependence, l_max, damping 0.9, threshold
  0.1, LayerNorm eps 1e-6, no short convolution; Linear biases zeroed as their LM wrapper's mamba_ssm init does).
  The ``BedouinBlock`` their ``arithmetic_exp/bedouin/bedouin.py`` imports is defined nowhere at that commit.
* ``fprnn``: their vector-state ``FPRNN`` (``models/fp_rnn_block.py``) with ``use_short_conv=True`` (without it
  their block feeds (B, D, T) tensors to Linear layers: a shape error at that commit).

Substitutions, in this process only (:func:`load_authors_fpmamba`, :func:`load_authors_fprnn`):
``causal_conv1d_fn`` by the same causal depthwise convolution in torch; ``torch.compile`` by the identity; their
``models/__init__.py`` (CUDA-only imports) skipped; mamba_ssm's Triton imports, which their FPMamba wraps in
try/except and its training forward does not use, left absent. FPMamba's ``selective_scan_fn`` (their
``models/ops/selective_scan_interface.py``, mamba_ssm's CUDA scan; Gu & Dao 2023) is replaced by the same
recurrence: ``h_t = exp(delta_t A) h_{t-1} + delta_t B_t u_t``, ``y_t = <C_t, h_t> + D u_t`` (times silu(z)),
``delta = softplus(delta + delta_bias)`` (:func:`selective_scan_lrnnkit`), computed by lrnnkit's selective scan with
``--authors-scan lrnnkit`` (the default: fused Triton kernels on CUDA) or its torch expression over the sequential
reference scan with ``generic``. FPRNN's ``linrec_hop`` (``h_t = coeffs_t h_{t-1} + inputs_t`` on torch's
``associative_scan``) is replaced with ``lrnnkit`` (the default) by the identical recurrence on lrnnkit's diagonal scan
(:func:`linrec_lrnnkit`), and runs as theirs on the associative scan's ``combine_mode="generic"`` (the
``"pointwise"`` mode refuses CPU tensors; slow on a GPU) with ``generic``. Both models are ``embedding -> RMSNorm
-> block (+ residual) -> RMSNorm -> linear head`` (their runs: LayerNorms, a tied head), trained by
:func:`lrnnkit.learn.train.train` (bf16 autocast on CUDA, as their runs) on the same task, data (batches from
``batch_rng(seed, step)``), seed and schedule; the same width (their ``d_inner = 2 d_model`` channels: ours gets
``num_heads * head_dim = 2 width``; beside FPMamba also its state, N = 16), ``r`` reflections, iteration cap and
tolerance 0.1 (theirs: damped iteration, per-token residual, 75%-quantile over the batch in training, up to 1000
iterations at evaluation). Reported: test accuracy per length, seconds per training step, mean iterations per
forward in training and at evaluation.

**003's protocol (``--authors PATH --protocol``)**: 003-state-tracking (003, App. E.2; Section 3, Fig. 3) with
both blocks in one process on the same batches: A5 and S5, one layer, width 512 (the authors' default
``d_model``), r = ``--r``, l_max = 16, train length 16, test lengths 2 to 50, batch 128, lr 1e-4, weight decay
0.01, clipping 1.0, AdamW, cosine without warm-up. The paper's 50,000 steps per run do not fit one call:
``--budget-s`` seconds of training (default 400) are shared by the runs (two per group of ``--groups``, default
A5,S5), each cutting its step count once to fit so its schedule completes; the authors' evaluation comes on top
(it iterates up to 1000 times), so leave room for it under the call's limit (benchmarks/RESULTS.md has the
timings of earlier calls); the table says what fraction of the paper's steps each run had. JSON
(``fixed_point_protocol.json``) is written under ``--out`` after every run, the table (``fixed_point_protocol.md``)
at the end, with the paper's statement (Fig. 3 prints curves, no number). ``--smoke``: tiny sizes and three steps,
CPU, seconds. PATH: ``benchmarks/.fp_rnn`` from ``benchmarks/export_fp_rnn.py``; on a GPU machine with
``carry: ["benchmarks/.fp_rnn", ".whl"]`` and einops installed from ``.whl``.

**GPU (``--gpu``)**: the cost model ``iterations x (channel mix + one diagonal scan)`` against DeltaProduct with
``n_h = r`` of the same width (``lrnnkit.layers.DeltaProductLayer``), forward and forward + backward, at the
papers' shapes; the fixed-point layer is forced to exactly ``l`` iterations (tol ~ 0) for l in 1, 4, 16 (its
backward is one iteration whatever l). fp32 input under bf16 autocast, as ``lrnnkit train`` runs (the fixed-point
layer turns autocast off and computes in fp32), median of 20 timed calls after warm-up (CUDA events).
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
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
#: github.com/dr-faustus/fp-rnn at this commit (no license: read from an export, never copied here)
AUTHORS_COMMIT = "4c286022b0198c3a4f6a5924394b7996b5ff77a0"
BLOCKS = ("fprnn", "fpmamba")
SCANS = ("generic", "lrnnkit")


def _install_common(path: str):
    """The substitutions both blocks need, in this process only: ``causal_conv1d`` (the causal depthwise convolution
    in torch; ``causal_conv1d_update`` None, so their decoding step takes its own torch branch), ``torch.compile``
    by the identity, and a bare ``models`` package on ``path/models`` (their ``models/__init__.py`` imports
    CUDA-only models)."""
    def causal_conv1d_fn(x, weight, bias=None, activation=None):
        W = weight.shape[-1]
        y = F.conv1d(F.pad(x, (W - 1, 0)), weight[:, None, :], bias, groups=x.shape[1])
        return F.silu(y) if activation in ("silu", "swish") else y
    sys.modules["causal_conv1d"] = types.SimpleNamespace(causal_conv1d_fn=causal_conv1d_fn,
                                                         causal_conv1d_update=None)
    torch.compile = lambda f=None, **kw: f if f is not None else (lambda g: g)
    pkg = types.ModuleType("models")
    pkg.__path__ = [os.path.join(os.path.abspath(path), "models")]
    sys.modules["models"] = pkg


def _check_authors(path: str, block: str):
    """One line and exit 2 when ``path`` lacks the block's file; a warning when its ``COMMIT`` (written by
    ``export_fp_rnn.py``) names another commit than :data:`AUTHORS_COMMIT`, the one the substitutions were read on."""
    rel = "models/fp_mamba_block.py" if block == "fpmamba" else "models/fp_rnn_block.py"
    if not os.path.isfile(os.path.join(path, rel)):
        print(f"bench_fixed_point: {os.path.join(path, rel)} is missing: run benchmarks/export_fp_rnn.py on a git "
              "mirror of github.com/dr-faustus/fp-rnn", file=sys.stderr)
        sys.exit(2)
    stamp = os.path.join(path, "COMMIT")
    if os.path.isfile(stamp):
        with open(stamp) as fh:
            text = fh.read()
        if AUTHORS_COMMIT not in text:
            print(f"bench_fixed_point: warning: {stamp} names {text.strip()!r}, not {AUTHORS_COMMIT}",
                  file=sys.stderr)


def linrec_lrnnkit(inputs, coeffs, logc=False, dim=-1, reverse=False, fallback=None):
    """``h_t = coeffs_t * h_{t-1} + inputs_t`` (``h_{-1} = 0``) along ``dim`` (from the last step when
    ``reverse``): the recurrence of the authors' ``linrec_hop`` (fp-rnn at 4c28602, ``models/ops/linrec.py``, whose
    backward is the same recurrence reversed), computed by :func:`lrnnkit.ops.diagonal.parallel.diagonal_scan`
    (Triton chunk scan on CUDA, doubling scan elsewhere; differentiable; its coefficient domain [-1, 1] holds for
    FPRNN's sigmoid gates) in float32 (float64 stays), returned in the inputs' promoted dtype. ``logc`` (coefficients in log space,
    which FPRNN never passes) goes to ``fallback``, their own function, unchanged."""
    from lrnnkit.ops.diagonal.parallel import diagonal_scan
    if logc:
        return fallback(inputs, coeffs, logc=logc, dim=dim, reverse=reverse)
    out_dtype = torch.promote_types(inputs.dtype, coeffs.dtype)
    acc = torch.float64 if out_dtype == torch.float64 else torch.float32
    x, a = torch.broadcast_tensors(inputs.to(acc), coeffs.to(acc))
    d0 = dim % x.ndim
    if reverse:
        x, a = x.flip(d0), a.flip(d0)
    lead = d0 == 0                               # (T, ...) -> (1, T, ...)
    d = d0 + 1 if lead else d0
    x, a = (x.unsqueeze(0), a.unsqueeze(0)) if lead else (x, a)
    moved = x.movedim(d, 1).shape                # (B, T, rest...)
    h = diagonal_scan(a.movedim(d, 1).reshape(moved[0], moved[1], -1),
                      x.movedim(d, 1).reshape(moved[0], moved[1], -1)).reshape(moved).movedim(1, d)
    h = h.squeeze(0) if lead else h
    return (h.flip(d0) if reverse else h).to(out_dtype)


def load_authors_fprnn(path: str, scan: str = "lrnnkit"):
    """The authors' ``FPRNN`` class (``models/fp_rnn_block.py``) from an export at ``path``; substitutions (module
    text): :func:`_install_common`, torch's ``associative_scan`` by its ``combine_mode="generic"`` (``"pointwise"``
    refuses CPU tensors), and with ``scan="lrnnkit"`` their ``linrec_hop`` by :func:`linrec_lrnnkit`, the same
    recurrence (``scan="generic"``: their ``linrec_hop`` on the generic associative scan)."""
    import importlib
    if scan not in SCANS:
        raise ValueError(f"load_authors_fprnn: scan must be one of {SCANS}, got {scan!r}")
    _install_common(path)
    linrec = importlib.import_module("models.ops.linrec")
    from torch._higher_order_ops.associative_scan import associative_scan as _scan
    linrec.associative_scan = lambda f, xs, dim, reverse=False: _scan(f, xs, dim, reverse=reverse,
                                                                     combine_mode="generic")
    mod = importlib.import_module("models.fp_rnn_block")
    mod.linrec_hop = (functools.partial(linrec_lrnnkit, fallback=linrec.linrec_hop) if scan == "lrnnkit"
                      else linrec.linrec_hop)
    return mod.FPRNN


def _acc(t: torch.Tensor) -> torch.dtype:
    """The computing dtype of the selective-scan substitutes: float32, as mamba_ssm's kernels (float64 stays, for
    tests)."""
    return torch.float64 if t.dtype == torch.float64 else torch.float32


def _softplus_delta(delta, delta_bias, delta_softplus, acc):
    """``delta + delta_bias`` (per channel), through softplus when ``delta_softplus``; in ``acc``."""
    delta = delta.to(acc)
    if delta_bias is not None:
        delta = delta + delta_bias.to(acc)[:, None]
    return F.softplus(delta) if delta_softplus else delta


def _finish(y, u, D, z, acc):
    """``(y + D u) * silu(z)`` (each part when given), returned in u's dtype."""
    if D is not None:
        y = y + D.to(acc)[:, None] * u.to(acc)
    if z is not None:
        y = y * F.silu(z.to(acc))
    return y.to(u.dtype)


def selective_scan_lrnnkit(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False,
                           return_last_state=False, core=None):
    """Mamba's selective scan (Gu & Dao 2023, Algorithm 2 and Section 3.5) with the argument convention of the
    ``selective_scan_fn`` that the authors' FPMamba imports (fp-rnn at 4c28602,
    ``models/ops/selective_scan_interface.py``, mamba_ssm's CUDA scan): u, delta, z (B, D, L), A (D, N), B and C
    (B, N, L), D and delta_bias (D,);

        delta <- softplus(delta + delta_bias)  (the bias when given, softplus when ``delta_softplus``),
        h_t = exp(delta_t A) * h_{t-1} + delta_t B_t u_t  (h_{-1} = 0; per channel d and state n),
        y_t = <C_t, h_t> + D u_t,   times silu(z_t) when z is given;

    computed in float32 (float64 stays float64) by lrnnkit's selective scan (``core``, default
    :func:`lrnnkit.ops.diagonal.selective.selective_scan` with ``neg=False``: the same recurrence and readout,
    fused Triton kernels on CUDA, the torch expression elsewhere) on (B, L, D) layouts, the bias, softplus, skip
    and gate around it; y in u's dtype. The last state and a fixed (D, N) B or C are refused: FPMamba's training
    and evaluation forward use neither (only its decoding step asks for the state)."""
    if return_last_state or B.ndim != 3 or C.ndim != 3:
        raise ValueError("selective_scan_fn substitute: return_last_state and a fixed (D, N) B or C are not "
                         "implemented (FPMamba's forward uses neither)")
    if core is None:
        from lrnnkit.ops.diagonal.selective import selective_scan as core
    acc = _acc(u)
    dl = _softplus_delta(delta, delta_bias, delta_softplus, acc)
    y = core(u.to(acc).transpose(1, 2), dl.transpose(1, 2), A.to(acc), B.to(acc).transpose(1, 2),
             C.to(acc).transpose(1, 2), neg=False).transpose(1, 2)
    return _finish(y, u, D, z, acc)


def selective_scan_sequential(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False,
                              return_last_state=False):
    """:func:`selective_scan_lrnnkit` on lrnnkit's torch expression over the sequential reference scan
    (:func:`lrnnkit.ops.diagonal.selective.selective_scan_reference` with
    :func:`lrnnkit.ops.diagonal.naive.diagonal_scan_naive`): ``--authors-scan generic``, no Triton kernel."""
    from lrnnkit.ops.diagonal.naive import diagonal_scan_naive
    from lrnnkit.ops.diagonal.selective import selective_scan_reference
    return selective_scan_lrnnkit(u, delta, A, B, C, D, z, delta_bias, delta_softplus, return_last_state,
                                  core=functools.partial(selective_scan_reference, scan=diagonal_scan_naive))


def load_authors_fpmamba(path: str, scan: str = "lrnnkit"):
    """The authors' matrix-state ``FPMamba`` class (``models/fp_mamba_block.py``; 003's "Bedouin", Fig. 3) from an
    export at ``path``; substitutions (module text): :func:`_install_common`, and their
    ``models.ops.selective_scan_interface`` (mamba_ssm's CUDA extension) by a module whose ``selective_scan_fn`` is
    :func:`selective_scan_lrnnkit` (``scan="lrnnkit"``) or :func:`selective_scan_sequential` (``scan="generic"``). The
    mamba_ssm Triton imports it wraps in try/except (decoding step, fused norms) stay absent; nothing in its
    training forward uses them."""
    import importlib
    if scan not in SCANS:
        raise ValueError(f"load_authors_fpmamba: scan must be one of {SCANS}, got {scan!r}")
    _install_common(path)
    fn = selective_scan_lrnnkit if scan == "lrnnkit" else selective_scan_sequential
    sub = types.ModuleType("models.ops.selective_scan_interface")
    sub.selective_scan_fn = fn
    sys.modules["models.ops.selective_scan_interface"] = sub
    importlib.import_module("models.ops")
    mod = importlib.import_module("models.fp_mamba_block")
    mod.selective_scan_fn = fn
    return mod.FPMamba


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


def fpmamba_kwargs(width: int, r: int, max_iters: int) -> dict:
    """FPMamba's constructor arguments in 003's state-tracking runs (003, Fig. 3, "Bedouin"): the authors'
    ``word_problem_exp/construct.py`` (fp-rnn at 4c28602) passes these through ``models/fp_lm.py`` to ``FPMamba``
    (d_state 16; ``run_word_problem_exp.sh``: ``--mixer_h_dep --n_backwards 1 --layer_norm_eps 1e-6``, no
    ``--use_short_conv``), with ``mixer_type`` the Householder product of 003's eq. (10) and its defaults expand 2,
    damping decay 0.9, convergence threshold 0.1. ``max_iters``: l_max (16 in Fig. 3's training)."""
    return dict(d_model=width, d_state=16, expand=2, d_mixer=None, mixer_type="householderproduct", mixer_rank=r,
                mixer_proj_rank=-1, symm_mixer=False, mixer_h_dep=True, n_backwards=1, max_iter=max_iters,
                norm_eps=1e-6, use_short_conv=False, damping_decay_rate=0.9, convergence_threshold=0.1)


def _their_init(block: nn.Module) -> nn.Module:
    """The part of mamba_ssm's ``_init_weights`` (applied by their ``FPLMHeadModel``) that changes a one-layer
    block: every Linear bias zeroed unless marked ``_no_reinit`` (the dt bias); its ``out_proj`` re-draw at one
    layer is the default Linear initialisation and is left as drawn."""
    for m in block.modules():
        if isinstance(m, nn.Linear) and m.bias is not None and not getattr(m.bias, "_no_reinit", False):
            nn.init.zeros_(m.bias)
    return block


def _model_fn(a, who: str, iters: list):
    """The model factory for :func:`lrnnkit.learn.train.train`: the authors' block (``a.authors_block``: FPRNN or
    FPMamba) or ours, same width (2 width channels); ours has FPMamba's 16-state matrix state beside FPMamba."""
    from lrnnkit.layers.fixed_point import FixedPointLayer
    load = load_authors_fpmamba if a.authors_block == "fpmamba" else load_authors_fprnn
    Theirs = load(a.authors, a.authors_scan)

    def model_fn(task):
        if who == OURS:
            blk = FixedPointLayer(hidden_size=a.width, num_heads=2, head_dim=a.width, num_reflections=a.r,
                                  state_size=16 if a.authors_block == "fpmamba" else None, max_iters=a.max_iters,
                                  tol=0.1, mode="chunk" if a.device == "cuda" else "torch")
        elif a.authors_block == "fpmamba":
            blk = _their_init(Theirs(**fpmamba_kwargs(a.width, a.r, a.max_iters)))
        else:
            blk = Theirs(d_model=a.width, d_mixer=None, mixer_rank=a.r, mixer_type="householderproduct",
                         max_iter=a.max_iters, mixer_proj_rank=-1, mixer_h_dep=True, use_short_conv=True,
                         convergence_threshold=0.1)
        return Net(task.n_in, task.n_out, a.width, blk, iters)
    return model_fn


THEIRS = {"fprnn": "authors' FPRNN", "fpmamba": "authors' FPMamba"}
OURS = "lrnnkit FixedPointLayer"


def _train_one(a, cfg, who: str, stop_at: int | None = None) -> dict:
    """One training run of ``who`` under ``cfg`` (ending after ``stop_at`` steps where given); the result of
    ``train`` with wall seconds and mean iterations."""
    from lrnnkit.learn.train import train
    iters: list = []
    t0 = time.perf_counter()
    res = train(cfg, model_fn=_model_fn(a, who, iters), stop_at=stop_at)
    res.pop("_model")
    print(f"{who}: {res['steps']} steps, training {res['seconds']:.0f} s, run {time.perf_counter() - t0:.0f} s "
          f"(evaluation and setup included)", flush=True)
    tr = [n for m, n in iters if m]
    ev = [n for m, n in iters if not m]
    res.update(model=who, wall_seconds=round(time.perf_counter() - t0, 1),
               iterations_train=sum(tr) / max(1, len(tr)), iterations_eval=sum(ev) / max(1, len(ev)))
    return res


def _substitution_note(a) -> str:
    """What stands in for the authors' GPU-only code in this run (module text), for the tables' notes."""
    if a.authors_block == "fpmamba":
        how = ("lrnnkit's selective scan (fused Triton kernels on CUDA)" if a.authors_scan == "lrnnkit"
               else "a step-by-step torch loop")
        return (f"Their FPMamba runs with mamba_ssm's selective_scan_fn replaced by the same recurrence in {how}; "
                "their other Linear biases zeroed as their LM wrapper's init does; our layer has the matrix state "
                "(N = 16).")
    how = ("lrnnkit's diagonal scan (the identical recurrence)" if a.authors_scan == "lrnnkit"
           else "their associative scan in torch's generic mode (their s/step is not their speed)")
    return f"Their FPRNN's linrec_hop runs on {how}."


def run_authors(a) -> str:
    from _record import table
    from lrnnkit.learn.train import TrainConfig
    if a.device == "cpu":
        torch.set_num_threads(max(1, os.cpu_count() // 2))
    if a.eval_n is None:
        a.eval_n = 256
    cfg = TrainConfig(task=a.task, layer="diagonal", width=a.width, steps=a.steps, batch=a.batch, lr=a.lr,
                      train_len=(a.train_len, a.train_len), test_len=tuple(a.test_len), eval_n=a.eval_n,
                      eval_batch=a.eval_n, weight_decay=0.01, seed=a.seed, log_every=max(1, a.steps // 10),
                      device=a.device, loop="host")
    rows = []
    for who in (THEIRS[a.authors_block], OURS):
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
             f"--width {a.width} --r {a.r} --batch {a.batch} --lr {a.lr} --device {a.device} "
             f"--authors-block {a.authors_block} --authors-scan {a.authors_scan}` (PATH: an export of "
             "github.com/dr-faustus/fp-rnn, commit 4c28602). " + _substitution_note(a) + " "
             "Iterations: theirs counts its damped iterations plus the differentiable one, ours every iteration "
             "with the differentiable one.")
    return body, notes


# ------------------------------------------------------------------------------------------------ 003's protocol
#: 003-state-tracking as printed (003, App. E.2; lrnnkit.learn.protocols "003-state-tracking"): 5 epochs of 1.28M
#: words at batch 128 (50,000 steps), lr 1e-4, weight decay 0.01, clipping 1.0, AdamW; train length 16, test
#: lengths 2 through 50; one layer; l_max = 16 (003, Section 3, Fig. 3). Width: the authors' default d_model 512.
PAPER_STEPS = 50_000
PROTOCOL = dict(width=512, batch=128, lr=1e-4, weight_decay=0.01, clip=1.0, train_len=16,
                test_len=(2, 8, 16, 24, 32, 40, 50), max_iters=16, eval_n=256)
SMOKE = dict(width=16, batch=8, train_len=16, test_len=(4, 16), max_iters=4, eval_n=8, steps=3)
#: 003, Section 3 and Fig. 3 (curves only: no number is printed)
PROTOCOL_SECTION = "fixed-point vs the authors' code at 003's state-tracking settings"
PAPER_SAYS = "solved at 16, generalises to 50 (Fig. 3 curve; no number printed)"


def _device_name(a) -> str:
    return torch.cuda.get_device_name() if a.device == "cuda" and torch.cuda.is_available() else a.device


def run_protocol(a) -> tuple:
    """003-state-tracking (A5 and S5) at 003's settings, the authors' block (``a.authors_block``) and ours on the
    same batches in this process; ``a.budget_s`` seconds of training shared equally by the runs (two per group of
    ``a.groups``) (the step count is cut once, after 25 timed steps, to fit: ``auto_steps``, so the cosine schedule
    completes); the group's second model then trains on the first one's schedule for the steps the first one
    trained, uncapped, so the pair sees the same batches and learning rates. JSON after every run."""
    from _record import table
    from lrnnkit.fileio import atomic_write_text
    from lrnnkit.learn.train import TrainConfig
    import json
    p = dict(PROTOCOL, steps=PAPER_STEPS)
    if a.smoke:
        p.update(SMOKE)
    if a.eval_n is not None:
        p["eval_n"] = a.eval_n
    if a.device == "cuda":     # host-bound loops: a few threads each, so that runs beside them keep their cores
        torch.set_num_threads(4)
    a.width, a.max_iters = p["width"], p["max_iters"]
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "fixed_point_protocol.json")
    tasks = tuple(f"group:{g}" for g in a.groups)
    per_run = None if a.smoke else a.budget_s / (len(tasks) * 2)
    runs, rows = [], []
    for task in tasks:
        cfg = TrainConfig(task=task, layer="diagonal", width=p["width"], steps=p["steps"], batch=p["batch"],
                          lr=p.get("lr", 1e-4), train_len=(p["train_len"], p["train_len"]),
                          test_len=tuple(p["test_len"]), eval_n=p["eval_n"], eval_batch=p["eval_n"],
                          weight_decay=0.01, clip=1.0, warmup=0.0, min_lr=0.0, seed=a.seed,
                          log_every=max(1, p["steps"] // 50),
                          device=a.device, loop="host", max_seconds=per_run, auto_steps=per_run is not None)
        stop_at = None
        for who in (THEIRS[a.authors_block], OURS):
            res = _train_one(a, cfg, who, stop_at)
            res.pop("checkpoint", None)
            runs.append(res)
            # the second model: the first one's schedule (its steps fitted to the budget) and the steps it trained
            # (fewer where the budget stopped it first), uncapped: the pair sees the same batches and learning rates
            cfg = dataclasses.replace(cfg, steps=res["config"]["steps"], max_seconds=None, auto_steps=False)
            stop_at = res["steps"]
            doc = {"protocol": p, "paper_steps": PAPER_STEPS, "r": a.r, "smoke": a.smoke, "device": a.device,
                   "budget_s": a.budget_s, "authors_block": a.authors_block, "authors_scan": a.authors_scan,
                   "runs": runs}
            atomic_write_text(path, json.dumps(doc, indent=1, default=str) + "\n")
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
             f"channels{', state 16 per channel in both models' if a.authors_block == 'fpmamba' else ''}), "
             f"r = {a.r}, l_max = {p['max_iters']} in training (ours also in evaluation; theirs evaluates up to 1000 "
             f"iterations, their code's rule), tol 0.1, batch "
             f"{p['batch']}, lr {p.get('lr', 1e-4)}, weight decay 0.01, clip 1.0, AdamW + cosine to 0 without "
             f"warm-up (their code's CosineAnnealingLR), train length {p['train_len']}, test lengths "
             f"{', '.join(map(str, p['test_len']))} ({p['eval_n']} words each, token accuracy); both models on the "
             f"same batches (fresh every step where the paper repeats 1.28M words), seed {a.seed}, "
             f"{_device_name(a)}; "
             + ("smoke sizes, a few steps. " if a.smoke else
                f"{a.budget_s:.0f} s of training shared by the {2 * len(tasks)} runs. ")
             + "Differences from the paper: the steps (column 'of paper's'), one seed where it trains 3"
             + (", the vector-state FPRNN where its Fig. 3 curve is Bedouin (FPMamba)" if a.authors_block == "fprnn"
                else "") + ". " + _substitution_note(a) + " Reproduce: `python3 "
             f"benchmarks/bench_fixed_point.py --authors benchmarks/.fp_rnn --protocol --device {a.device} "
             f"--budget-s {a.budget_s:.0f} --r {a.r} --groups {','.join(a.groups)} --authors-block "
             f"{a.authors_block} --authors-scan {a.authors_scan} --out $OUT`.")
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
                dp_f = _time(functools.partial(call, dp))
            dp_fb = _time(functools.partial(fb, dp))
            for state in (None, 16):
                for ell in (1, 4, 16):
                    fp = FixedPointLayer(hidden_size=d, num_heads=max(1, d // 64), num_reflections=r,
                                         state_size=state, max_iters=ell, tol=1e-30, mode="chunk").to(dev)
                    with torch.no_grad():
                        f = _time(functools.partial(call, fp))
                    fbt = _time(functools.partial(fb, fp))
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
    ap.add_argument("--authors", help="path to an export (benchmarks/export_fp_rnn.py) or checkout of the authors' "
                                      "fp-rnn repository")
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
    ap.add_argument("--eval-n", dest="eval_n", type=int, default=None,
                    help="test words per length, one evaluation batch (default 256; --protocol: PROTOCOL's)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cpu", help="--authors on cpu (default) or cuda (the same substitutions)")
    ap.add_argument("--protocol", action="store_true",
                    help="with --authors: 003-state-tracking (A5, S5) at 003's settings, both models, one table")
    ap.add_argument("--budget-s", dest="budget_s", type=float, default=400.0,
                    help="--protocol: seconds of training shared by the runs, two per group (default 400); the "
                         "authors' evaluation comes on top (their evaluation iterates up to 1000 times)")
    ap.add_argument("--groups", default="A5,S5",
                    help="--protocol: the groups of 003-state-tracking to run, comma-separated from A5, S5 "
                         "(one group per GPU fits a 10-minute call)")
    ap.add_argument("--record-protocol", dest="record_protocol",
                    help="write DIR/fixed_point_protocol.md from --protocol --out DIR into RESULTS.md")
    ap.add_argument("--smoke", action="store_true", help="--protocol: tiny sizes, a few steps (CPU, seconds)")
    ap.add_argument("--authors-block", dest="authors_block",
                    help="with --authors: their block, fprnn (vector state) or fpmamba (matrix state, Fig. 3's "
                         "Bedouin); default fpmamba with --protocol, fprnn without")
    ap.add_argument("--authors-scan", dest="authors_scan", default="lrnnkit",
                    help="with --authors: lrnnkit (default: lrnnkit's scans for their linrec_hop / selective_scan_fn)"
                         " or generic (their linrec_hop on torch's generic associative scan / a step-by-step loop)")
    a = ap.parse_args()
    if a.authors_block is None:
        a.authors_block = "fpmamba" if a.protocol else "fprnn"
    for flag, val, ok in (("--authors-block", a.authors_block, BLOCKS), ("--authors-scan", a.authors_scan, SCANS)):
        if val not in ok:
            print(f"bench_fixed_point: {flag} takes {' or '.join(ok)}, got {val!r}", file=sys.stderr)
            sys.exit(2)
    if a.authors:
        _check_authors(a.authors, a.authors_block)
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
