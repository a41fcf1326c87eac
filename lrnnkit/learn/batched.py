"""Several runs of one shape trained as one batched model: R seeds (and learning rates) of one
:class:`~lrnnkit.learn.train.TrainConfig` in one process, one forward, one backward, one optimizer update per step.

The papers' protocols train several seeds and learning rates per configuration (000, App. E.1.1: best of 3 seeds;
001, App. on state tracking: a learning-rate sweep) on models so small that one run leaves a GPU mostly idle
(:mod:`.step`: a step costs launches, not arithmetic). Here the runs share every launch:

* **stacked parameters.** Run r's :class:`~lrnnkit.learn.models.SequenceModel` is initialised exactly as
  :func:`~lrnnkit.learn.train.build` initialises it (``torch.manual_seed(seed_r)``), and all R models' parameters
  are laid out in one flat leaf tensor ``flat`` (R, N): row r holds run r's parameters in
  ``SequenceModel.named_parameters()`` order. The forward takes views of it.
* **the run axis.** Tokens (R, B, T) -> logits (R, B, T, n_out). A linear map is a batched matmul over the run axis
  (``x_r W_r^T + b_r``); the embedding is one lookup in the R tables laid end to end; a depthwise short convolution
  runs once on the R runs' channels side by side (R C channels, run r's taps on its own C); RMSNorm normalises
  each row and multiplies by its run's weight. The recurrence sees the run axis folded into its batch axis
  (R B sequences): the DeltaProduct chunk kernel (001, eq. 4; the same :func:`lrnnkit.ops.gh.api.chunk_gh` the
  layer calls, Triton on CUDA, the chunk equations in torch on the CPU) and the diagonal scan
  (:func:`lrnnkit.ops.diagonal.gated.gated_scan`, 000 eq. 1 with ``A = Diag(s(x))``, as the layer runs it;
  for 002's block-diagonal layer :func:`lrnnkit.ops.block_diagonal.differentiable.block_diagonal_scan`) take
  per-token inputs only, which
  were computed with run r's weights for run r's rows, so each row sees only its own run's weights.
* **loss.** ``L = sum_r L_r`` with ``L_r`` run r's token-level cross-entropy (its own mean over its own labelled
  tokens, as :func:`.step.train_loss`). ``L_r`` depends only on row r of ``flat``, so ``dL/dflat_r = dL_r/dflat_r``:
  each run's gradient is its own run's gradient.
* **optimizer.** AdamW (000, App. E.1.1) written out over the stacked tensors (:func:`adamw_update`): per-run gradient
  norm and clipping (``torch.nn.utils.clip_grad_norm_``'s ``clip / (norm + 1e-6)`` capped at 1), per-run learning rate
  from each run's own warm-up + cosine table (:func:`.step.lr_schedule` of its lr, min_lr, warmup), per-run step
  counts for the bias corrections, weight decay on the matrices only (as :func:`.step.optimizer`), and a per-run
  non-finite skip: a run whose gradient norm is not finite keeps its parameters, moments and step count (what the
  single-run loops' skip does) while the others update. Neither torch's fused AdamW nor per-run parameter groups
  serve: the fused kernel takes one learning rate per parameter tensor (a 0-dim tensor), and parameter groups need a
  tensor per run, which would undo the stacking; the update here is a dozen elementwise ops on (R, N) with the
  learning rate a (R, 1) column.
* **data.** Run r's batch ``s`` is what the device loop draws for a single run with seed ``seed_r`` at step ``s``
  (:mod:`.device_sampler`; the R batches made by the kernels of one), so different seeds see different data, and
  a batched run's data, initialisation and update rule are those of ``lrnnkit train --loop device``.
* **fixed training sets.** With ``train_words`` (:mod:`.dataset`) run r reads its own seed's fixed set, in its
  own seed's epoch orders, as the single-run loops do (the R sets side by side on the device).
* **per run out.** Each run gets its own directory with its own ``metrics.jsonl`` and checkpoints in
  the format ``lrnnkit train`` writes (:func:`.checkpoint.save`: the run's own model and AdamW state; progress loop
  ``device``, the loop whose batches it drew), and its own result dict, the one :func:`~lrnnkit.learn.train.train`
  returns (evaluation, eigenvalues, the model under ``_model``), so the registry, the horizons and
  ``lrnnkit train --loop device`` (to continue it) read it unchanged.

On CUDA the whole step (R samplers, forward, backward, update, counters) is captured as one CUDA graph after
:data:`~lrnnkit.learn.step.EAGER_STEPS` eager steps, as :class:`~lrnnkit.learn.step.DeviceStep` does.

Covered mixers: :data:`LAYERS` (diagonal, deltanet, deltaproduct, block-diagonal, fixed-point: the layers of 000's,
001's, 002's and 003's paper-scale experiments; mamba, Mamba's block, whose selective scan takes each run's state
matrix on its rows, :mod:`lrnnkit.ops.diagonal.selective`; the fixed-point layer's stopping rule, 003 App. D.2,
decided per run on its own batch, so each run iterates exactly as often as it would alone). Runs may differ in
:data:`PER_RUN` fields only (seed and the learning-rate schedule: ``lr``, ``min_lr``, ``warmup``; so each group of
:func:`lrnnkit.learn.protocols.follow`'s seeds x learning-rate sweep, a constant schedule included, is one batched
run); anything else is a different shape or schedule and is refused, one line naming the field. Checkpoints are
written for every run every ``checkpoint_every`` steps / ``checkpoint_seconds`` seconds and at the end
(``max_seconds`` included); a batched run whose directories hold checkpoints of one step resumes from them and ends as
the uninterrupted run would. Not covered (refused): other mixers, ``auto_steps`` (each run would cut its own
schedule), the host loop. A signal (Ctrl-C) stops the run without a last checkpoint (the periodic one stands).
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sys
import time

import numpy as np
import torch
from torch.nn import functional as F

from .. import limits
from ..errors import InputError, SizeLimitError
from . import checkpoint as ck
from .device import require_device
from .dataset import FixedSet
from ..layers.fixed_point import authors_iterate, freeze_iterate, shift_output
from ..layers.mixers import pnorm_columns
from ..ops.norm import rms_norm_runs, rms_norm_runs_torch
from ..ops.block_diagonal.differentiable import block_diagonal_scan
from ..layers.mamba import block_inputs, block_output
from ..ops.diagonal.gated import gated_scan
from ..ops.diagonal.selective import selective_scan
from .models import SequenceModel
from .oom import memory_named
from .step import EAGER_STEPS, capture, lr_schedule, optimizer
from .tasks import IGNORE, make_task
from .train import (_determinism, _memory_settings, _resume as resume_one, checkpoint_due, evaluation_due,
                    evaluations_of, final_evaluation, train, training_evaluation)

__all__ = ["BatchedSequenceModel", "BatchedStep", "adamw_update", "build_batched", "check_runs",
           "difference_from_separate", "run_losses", "train_batched", "LAYERS", "PER_RUN"]

LAYERS = ("diagonal", "deltanet", "deltaproduct", "block-diagonal", "fixed-point", "mamba")
PER_RUN = ("seed", "lr", "min_lr", "warmup")     # each run has its own schedule table
# fields that do not change what a step computes (how the run is watched, stopped or written)
_NOT_SHAPE = PER_RUN + ("max_seconds", "checkpoint_every", "checkpoint_seconds", "log_every")
BETAS, EPS = (0.9, 0.999), 1e-8      # as lrnnkit.learn.step.optimizer


def check_runs(cfgs) -> list:
    """The configs of one batched run, checked: at least one, a layer of :data:`LAYERS`, equal in every field but
    :data:`PER_RUN` (and the ones that only watch the run), no ``auto_steps``, the device loop, and the tokens of
    one step of all runs within ``lrnnkit.limits.TRAIN_MAX_BATCH_TOKENS`` (the parameters of all runs within
    ``TRAIN_MAX_PARAMETERS``: :func:`build_batched`). InputError / SizeLimitError otherwise, one line."""
    cfgs = list(cfgs)
    if not cfgs:
        raise InputError("a batched run needs at least one run")
    c0 = cfgs[0]
    if c0.layer not in LAYERS:
        raise InputError(f"batched runs cover the layers {', '.join(LAYERS)}, not {c0.layer!r}; train it alone")
    if c0.auto_steps:
        raise InputError("batched runs do not cut their schedule (auto_steps): give --steps")
    if c0.loop == "host":
        raise InputError("batched runs draw the device loop's batches: --loop host does not apply (auto or device)")
    tokens = len(cfgs) * c0.batch * c0.train_len[1]
    if tokens > limits.TRAIN_MAX_BATCH_TOKENS:
        raise SizeLimitError(f"{len(cfgs)} runs x batch {c0.batch} x the longest training length {c0.train_len[1]} = "
                             f"{tokens} tokens per step, at most {limits.TRAIN_MAX_BATCH_TOKENS} "
                             "(lrnnkit.limits.TRAIN_MAX_BATCH_TOKENS): fewer runs at once")
    d0 = {k: v for k, v in c0.to_json().items() if k not in _NOT_SHAPE}
    for i, c in enumerate(cfgs[1:], 1):
        d = {k: v for k, v in c.to_json().items() if k not in _NOT_SHAPE}
        diff = sorted(k for k in d0 if d.get(k) != d0[k])
        if diff:
            raise InputError(f"run {i} differs from run 0 in {', '.join(diff)}: runs batched together may differ "
                             f"only in {', '.join(PER_RUN)}")
    return cfgs


# ------------------------------------------------------------------------------------------------ the model
def _lin(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None = None) -> torch.Tensor:
    """Run r's ``x_r W_r^T + b_r`` for x (R, ..., in), W (R, out, in), b (R, out): one batched matmul."""
    R, shape = x.shape[0], x.shape
    y = torch.bmm(x.reshape(R, -1, shape[-1]), w.transpose(1, 2))
    if b is not None:
        y = y + b[:, None].to(y.dtype)
    return y.reshape(*shape[:-1], w.shape[1])


def _per_run(w: torch.Tensor, ndim: int) -> torch.Tensor:
    """A per-run vector (R, D) shaped to broadcast against (R, ..., D) of ``ndim`` axes."""
    return w.reshape(w.shape[0], *([1] * (ndim - 2)), w.shape[-1])


#: whether :func:`_rms` runs :func:`~lrnnkit.ops.norm.rms_norm_runs` on CUDA (one Triton pass each way, the rescale
#: and each row's run weight inside) rather than the torch expression (a max, the rescale, torch's RMSNorm, the
#: weight: about eight full passes forward and backward). On unless the environment sets ``LRNNKIT_FUSED_NORM=0``
#: (read at import); compiled, timed and seed-checked on a GPU before it was turned on (benchmarks/RESULTS.md).
RMS_FUSED_ON_CUDA = os.environ.get("LRNNKIT_FUSED_NORM", "1") != "0"


def _rms(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """:class:`~lrnnkit.layers.norm.ScaleSafeRMSNorm` (``torch.nn.RMSNorm(D)``, eps = the dtype's machine epsilon,
    after :func:`~lrnnkit.ops.norm.rescale_large`) with run r's weight on run r's rows."""
    if RMS_FUSED_ON_CUDA and x.is_cuda and x.dtype != torch.float64:
        return rms_norm_runs(x, w)
    return rms_norm_runs_torch(x, w)


#: whether :func:`_conv` runs :func:`~lrnnkit.ops.short_conv.causal_conv_runs` on CUDA (each run's taps read on
#: its own rows in place) rather than the runs' channels side by side (two layout copies each way around one
#: depthwise convolution). On unless the environment sets ``LRNNKIT_FUSED_CONV=0`` (read at import); compiled,
#: timed and seed-checked on a GPU before it was turned on (benchmarks/RESULTS.md).
CONV_IN_PLACE_ON_CUDA = os.environ.get("LRNNKIT_FUSED_CONV", "1") != "0"


def _conv(x: torch.Tensor, w: torch.Tensor, activation: str | None = "silu") -> torch.Tensor:
    """:class:`~lrnnkit.layers.short_conv.ShortConvolution` (``activation``, SiLU by default; no bias) with run r's
    taps on run r's rows (x (R, B, T, C), w (R, C, 1, W)): on CUDA the Triton kernels, in place where
    :data:`CONV_IN_PLACE_ON_CUDA` (:func:`~lrnnkit.ops.short_conv.causal_conv_runs`), else on the runs' channels side
    by side; on the CPU the torch reference (:func:`~lrnnkit.ops.short_conv.causal_conv_runs_torch`)."""
    from ..ops.short_conv import causal_conv_runs, causal_conv_runs_torch, causal_conv_triton
    if not x.is_cuda or x.dtype == torch.float64:
        return causal_conv_runs_torch(x, w, activation)
    if CONV_IN_PLACE_ON_CUDA:
        return causal_conv_runs(x, w, activation)
    return causal_conv_runs_torch(x, w, activation, conv=causal_conv_triton)


class BatchedSequenceModel(torch.nn.Module):
    """R :class:`~lrnnkit.learn.models.SequenceModel` of one config as one module (module docstring):
    ``forward(tokens (R, B, T)) -> logits (R, B, T, n_out)``; :attr:`flat` (R, N) the stacked parameters;
    :meth:`params` the per-name views ``(R, *shape)``; :meth:`unstack` run r as a SequenceModel."""

    def __init__(self, models):
        super().__init__()
        models = list(models)
        m0 = models[0]
        self.config = dict(m0.config)
        if self.config["layer"] not in LAYERS:
            raise InputError(f"batched runs cover the layers {', '.join(LAYERS)}, not {self.config['layer']!r}")
        if any(m.config != self.config for m in models[1:]):
            raise InputError("the models of a batched run must share one config")
        self.R = len(models)
        self.names, self.shapes, self.offsets = [], [], []
        off = 0
        for name, p in m0.named_parameters():
            self.names.append(name)
            self.shapes.append(tuple(p.shape))
            self.offsets.append(off)
            off += p.numel()
        self.N = off
        rows = [torch.cat([p.detach().reshape(-1) for p in m.parameters()]) for m in models]
        self.flat = torch.nn.Parameter(torch.stack(rows))
        # weight decay on the matrices only, as lrnnkit.learn.step.optimizer
        mask = torch.zeros(self.N, dtype=self.flat.dtype)
        for shape, o in zip(self.shapes, self.offsets):
            if len(shape) >= 2:
                mask[o:o + int(np.prod(shape))] = 1
        self.register_buffer("decay_mask", mask, persistent=False)
        # the GH layers' fixed settings, read from the template (its parameters are not kept)
        self.gh = None
        if self.config["layer"] in ("deltanet", "deltaproduct"):
            lay = m0.mixers[0]
            self.gh = dict(H=lay.num_heads, Hv=lay.num_v_heads, K=lay.head_k_dim, V=lay.head_v_dim,
                           n=lay.num_householder, neg=lay.allow_neg_eigval, gate=lay.use_forget_gate,
                           conv=lay.use_short_conv, ogate=lay.use_output_gate, eps=lay.norm_eps, mode=lay.mode)
        elif self.config["layer"] == "fixed-point":
            self.fp = m0.mixers[0].layer              # its settings only (cap, tolerance, state size, ...)
        elif self.config["layer"] == "mamba":
            lay = m0.mixers[0]
            self.mamba = dict(rank=lay.dt_rank, n=lay.d_state, neg=lay.neg)
        else:
            self.neg = self.config["eig_range"][0] < 0
            self.block_p = getattr(m0.mixers[0], "p", None)           # block-diagonal: the column norm's p

    def params(self) -> dict:
        """name -> run-stacked view ``(R, *shape)`` of :attr:`flat` (gradients flow back into ``flat``; one split, whose
        backward is one concatenation, where a slice per parameter would add a full-size gradient per parameter)."""
        parts = self.flat.split([int(np.prod(s)) for s in self.shapes], dim=1)
        return {nm: t.reshape(self.R, *s) for nm, s, t in zip(self.names, self.shapes, parts)}

    def unstack(self, r: int) -> SequenceModel:
        """Run r as a :class:`SequenceModel` (a copy of its weights, on :attr:`flat`'s device)."""
        m = SequenceModel(**self.config).to(device=self.flat.device, dtype=self.flat.dtype)
        with torch.no_grad():
            for p, (nm, v) in zip(m.parameters(), self.params().items()):
                p.copy_(v[r])
        return m

    # ---------------------------------------------------------------------------------------- forward
    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        P, R, c = self.params(), self.R, self.config
        V = c["vocab"]
        idx = tokens.long() + torch.arange(R, device=tokens.device).reshape(R, 1, 1) * V
        x = F.embedding(idx, P["embed.weight"].reshape(R * V, -1))
        for i in range(c["layers"]):
            u = _rms(x, P[f"norms.{i}.weight"])
            pre = f"mixers.{i}."
            mix = {k[len(pre):]: v for k, v in P.items() if k.startswith(pre)}
            kind = c["layer"]
            x = x + (self._gh(u, mix) if self.gh is not None else self._block(u, mix) if kind == "block-diagonal"
                     else self._fixed_point(u, mix) if kind == "fixed-point" else self._mamba(u, mix)
                     if kind == "mamba" else self._diagonal(u, mix))
            if c["mlp"]:
                h = _rms(x, P[f"mlp_norms.{i}.weight"])
                h = F.gelu(_lin(h, P[f"mlps.{i}.up.weight"], P[f"mlps.{i}.up.bias"]))
                x = x + _lin(h, P[f"mlps.{i}.down.weight"], P[f"mlps.{i}.down.bias"])
        return _lin(_rms(x, P["final_norm.weight"]), P["head.weight"], P["head.bias"])

    def _diagonal(self, x, P):
        """:class:`~lrnnkit.learn.models.DiagonalMixer` per run, the scan over the R B rows at once."""
        u = _conv(x, P["conv.weight"]) if "conv.weight" in P else x
        y = _lin(u, P["in_proj.weight"], P["in_proj.bias"])      # (R, B, T, 3D): dt, b, z; run r's w on its rows
        return _lin(gated_scan(y, P["w"], self.neg, x.dtype), P["out_proj.weight"], P["out_proj.bias"])

    def _mamba(self, u, P):
        """:class:`~lrnnkit.layers.mamba.MambaMixer` per run (its module text), the selective scan over the R B rows
        at once with run r's ``A = -exp(A_log_r)`` on its rows (:func:`~lrnnkit.ops.diagonal.selective.
        selective_scan`); the convolution with each run's taps, then its bias and SiLU."""
        def lin(name, t, acc=None):
            w, b = P[f"{name}.weight"], P.get(f"{name}.bias")
            return _lin(t, w, b) if acc is None else _lin(t, w.to(acc), None if b is None else b.to(acc))

        def conv(x):
            return F.silu(_conv(x, P["conv.weight"], None) + _per_run(P["conv.bias"], x.ndim).to(x.dtype))
        x, delta, A, Bm, C, z = block_inputs(u, lin, conv, P["A_log"], self.mamba["rank"], self.mamba["n"])
        y = selective_scan(x, delta, A, Bm, C, self.mamba["neg"])
        return block_output(y, x, z, _per_run(P["D"], x.ndim), lin, u.dtype)

    def _block(self, x, P):
        """:class:`~lrnnkit.learn.models.BlockDiagonalMixer` per run (002, eq. 5-6: blocks of size b whose columns
        are ``v / max(1, ||v||_p)``), the matrix scan over the R B rows at once."""
        R, B, T, D = x.shape
        bs = self.config["block_size"]
        nb = D // bs
        A = _lin(x, P["A_proj.weight"], P["A_proj.bias"])
        A = pnorm_columns((A if A.dtype == torch.float64 else A.float()).reshape(R * B, T, nb, bs, bs),
                           self.block_p)
        b = _lin(x, P["b_proj.weight"], P["b_proj.bias"])
        b = (b if b.dtype == torch.float64 else b.float()).reshape(R * B, T, nb, bs)
        h = block_diagonal_scan(A, b).reshape(R, B, T, D)
        return _lin(h.to(x.dtype), P["out_proj.weight"], P["out_proj.bias"])

    def _fixed_point(self, x, P):
        """:class:`lrnnkit.layers.fixed_point.FixedPointLayer` per run (003, eqs. 4-6, App. D; its module text), by
        the layer's own iteration (:meth:`~lrnnkit.layers.fixed_point.FixedPointLayer.iteration`, whose diagonal
        scan takes the R B rows at once) with the R runs' stacked weights in place of the layer's
        (:meth:`~lrnnkit.layers.fixed_point.FixedPointLayer.weights`), and 003's stopping rule per run
        (:func:`~lrnnkit.layers.fixed_point.freeze_iterate` with an (R,) cap): run r stops when its own batch has
        converged, or at its cap, exactly as it would alone. Training decides it on the device; evaluation
        (which :func:`train_batched` does on each run's own model) up to ``max_iters``, leaving when every run
        stopped. Under the authors' rule (the layer's ``iteration_rule``, its module text) likewise by
        :func:`~lrnnkit.layers.fixed_point.authors_iterate`: each run its own residues, step sizes and patience, the
        quantile over its own sequences, and caps counting damped steps as the authors' (fp-rnn at 4c28602,
        models/model_utils.py (FixedPointOptimizer.cont)): run r takes at least one and at most its own cap of them
        (training: the (R,) caps of ``device_cap`` within the static bound ``S = train_max_iters or max_iters``;
        evaluation: the layer's ``eval_cap()``, 1000), then the final differentiable iteration, ``cap + 1`` in all
        at most, as the layer alone. Computed in float32 (float64 stays float64), autocast off, as the layer."""
        L = self.fp
        with torch.autocast(device_type=x.device.type, enabled=False):
            u = x if x.dtype == torch.float64 else x.float()
            R, B, T, _ = u.shape

            def lin(name, z):
                w = P.get(f"layer.{name}.weight")
                if w is None:
                    return 0
                b = P.get(f"layer.{name}.bias")
                return _lin(z, w.to(z.dtype), None if b is None else b.to(z.dtype))

            inp = {k: lin(k + "_proj", u) for k in ("x", "delta", "g", "u", "alpha")}
            if L.state_size is not None:
                inp["B"], inp["C"] = lin("bc_proj", u).split(L.state_size, -1)
            omega = P["layer.omega"].to(u.dtype)                       # (R, d) or (R, N, d)
            W = {"y": lin, "rate": L.c * F.softplus(omega).reshape(R, 1, 1, *omega.shape[1:])}
            if self.training:
                caps, bound = torch.stack([L.device_cap(u.device) for _ in range(R)]), L.train_max_iters or L.max_iters
            else:
                caps, bound = torch.full((R,), L.eval_cap(), dtype=torch.long, device=u.device), L.eval_cap()
            y0 = torch.zeros(R, B, T, L.channels, dtype=u.dtype, device=u.device)
            if L.iteration_rule == "authors":          # caps and bound count damped steps here (at least one)
                y, _, _ = authors_iterate(lambda y: L.iteration(inp, y, None, W), y0, caps, bound, self.training,
                                          exit_when_done=not self.training)
            else:
                y, _, _ = freeze_iterate(lambda y: L.iteration(inp, y, None, W),
                                         lambda new, old: L.converged(new, old, None), y0, caps, bound,
                                         exit_when_done=not self.training)
            y = L.iteration(inp, y, None, W)
            g = inp["g"] + lin("g_y", shift_output(y.detach(), None))
            o = (y + _per_run(P["layer.D"].to(u.dtype), 4) * inp["x"]) * F.silu(g)
            o = F.rms_norm(o.reshape(R, B, T, L.num_heads, L.head_dim), (L.head_dim,), None, L.o_norm.eps)
            o = o * _per_run(P["layer.o_norm.weight"].to(u.dtype), 5)
            out = lin("o_proj", o.reshape(R, B, T, L.channels))
        return out.to(x.dtype)

    def _gh(self, x, P):
        """:class:`lrnnkit.layers.DeltaProductLayer` (001: ``S <- (I - beta k k^T) S + beta k v^T`` per
        Householder factor, 000's eigenvalue range through beta) per run, the chunk kernel over R B sequences."""
        from ..ops.gh.api import chunk_gh
        from ..ops.l2norm import l2norm
        from ..ops.norm import rms_norm
        g_ = self.gh
        R, B, T, _ = x.shape
        H, Hv, K, V, n = g_["H"], g_["Hv"], g_["K"], g_["V"], g_["n"]
        q, k, v = _lin(x, P["q_proj.weight"]), _lin(x, P["k_proj.weight"]), _lin(x, P["v_proj.weight"])
        if g_["conv"]:
            q, k, v = _conv(q, P["q_conv1d.weight"]), _conv(k, P["k_conv1d.weight"]), _conv(v, P["v_conv1d.weight"])
        else:
            q, k, v = F.silu(q), F.silu(k), F.silu(v)
        q, k = l2norm(q.reshape(R * B, T, H, K)), l2norm(k.reshape(R * B, T, n, H, K))
        v = v.reshape(R * B, T, n, Hv, V)
        if Hv > H:
            q, k = q.repeat_interleave(Hv // H, dim=-2), k.repeat_interleave(Hv // H, dim=-2)
        b = _lin(x, P["b_proj.weight"])
        beta = torch.sigmoid(b if b.dtype == torch.float64 else b.float()).reshape(R * B, T, n, Hv)
        if g_["neg"]:
            beta = 2 * beta
        g = None
        if g_["gate"]:
            a = _lin(x, P["a_proj.weight"])
            a = a if a.dtype == torch.float64 else a.float()
            g = -_per_run(P["A_log"].to(a.dtype).exp(), 4) * F.softplus(a + _per_run(P["dt_bias"].to(a.dtype), 4))
            g = g.reshape(R * B, T, Hv)
        mode = g_["mode"]
        if mode in ("chunk", "fused_recurrent"):
            mode = "chunk" if x.is_cuda else "torch"
        o, _ = chunk_gh(q, k, v, g, beta, n, backend=mode, validate=False)
        o = o.reshape(R, B, T, Hv, V)
        z = _lin(x, P["g_proj.weight"]).reshape(R, B, T, Hv, V) if g_["ogate"] else None
        o = rms_norm(o, None, g_["eps"], z) * _per_run(P["o_norm.weight"], 5).to(o.dtype)
        return _lin(o.reshape(R, B, T, Hv * V), P["o_proj.weight"])


# ------------------------------------------------------------------------------------------------ the update
def run_losses(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """(R,) each run's token-level cross-entropy, the mean over its own labelled tokens (``IGNORE`` left out), as
    :func:`.step.train_loss` computes it for one run."""
    R, n_out = logits.shape[0], logits.shape[-1]
    lf = logits if logits.dtype == torch.float64 else logits.float()     # float64 stays (the tests' checks)
    ce = F.cross_entropy(lf.reshape(-1, n_out), y.reshape(-1), ignore_index=IGNORE, reduction="none")
    m = (y != IGNORE).reshape(R, -1)
    return ce.reshape(R, -1).sum(1) / m.sum(1)


@torch.no_grad()
def adamw_update(flat, grad, m, v, steps, lr, weight_decay: float, decay_mask, clip: float):
    """One AdamW step on stacked runs, in place (module docstring); returns the (R,) bool of runs that updated.

    Per run r with gradient ``g_r`` (row r of ``grad``): ``norm_r = ||g_r||``; ``g_r *= min(1, clip / (norm_r +
    1e-6))`` (torch's ``clip_grad_norm_``); if ``norm_r`` is finite: ``t_r += 1``, ``p_r *= 1 - lr_r wd mask``,
    ``m_r <- b1 m_r + (1 - b1) g_r``, ``v_r <- b2 v_r + (1 - b2) g_r^2``, ``p_r -= lr_r / (1 - b1^t_r) m_r /
    (sqrt(v_r) / sqrt(1 - b2^t_r) + eps)`` (torch.optim.AdamW, decoupled weight decay); else nothing of run r
    changes. ``steps`` (R,) float32, ``lr`` (R,) learning rates."""
    b1, b2 = BETAS
    norm = torch.linalg.vector_norm(grad, dim=1)
    ok = torch.isfinite(norm)
    coef = torch.clamp(clip / (norm + 1e-6), max=1.0).to(grad.dtype)
    g = grad * coef[:, None]
    steps.add_(ok.to(steps.dtype))
    t = steps.to(flat.dtype)[:, None]
    lr_c = lr.to(flat.dtype)[:, None]
    m_new = torch.lerp(m, g, 1 - b1)
    v_new = v * b2 + (1 - b2) * g * g
    denom = (v_new.sqrt() / torch.sqrt(1 - b2 ** t)) + EPS
    p_new = flat * (1 - lr_c * weight_decay * decay_mask) - (lr_c / (1 - b1 ** t)) * m_new / denom
    keep = ok[:, None]
    flat.copy_(torch.where(keep, p_new, flat))
    m.copy_(torch.where(keep, m_new, m))
    v.copy_(torch.where(keep, v_new, v))
    return ok


class BatchedStep:
    """One training step of R runs (module docstring); the interface of :class:`.step.DeviceStep`: ``run()``,
    ``read()`` (per-run lists), ``nonfinite`` (per run), ``graph``."""

    def __init__(self, cfgs, task, model: BatchedSequenceModel, device):
        from .device_sampler import device_sampler
        c0 = cfgs[0]
        self.cfgs, self.model, self.device = cfgs, model, device
        self.use_amp = c0.bf16 and device.type == "cuda"
        self.sampler = device_sampler(task, c0.batch, c0.train_len, c0.seed, device)
        self.seed_keys = self.sampler.seed_keys([c.seed for c in cfgs])
        self.fixed = None if c0.train_words is None else \
            FixedSet(task, c0.train_words, c0.batch, c0.train_len, [c.seed for c in cfgs], device)
        self.host_step = 0        # the step the next run() trains (the host's count, for the fixed set's orders)
        R = model.R
        self.m = torch.zeros_like(model.flat)
        self.v = torch.zeros_like(model.flat)
        self.opt_steps = torch.zeros(R, dtype=torch.float32, device=device)
        self.sched = torch.stack([lr_schedule(c) for c in cfgs], 1).to(device=device, dtype=torch.float32)  # (S, R)
        self.lr = self.sched[0].clone()
        self.step_t = torch.zeros((), dtype=torch.int64, device=device)
        self.loss_t = torch.zeros(R, dtype=torch.float32, device=device)
        self.correct_t = torch.zeros(R, dtype=torch.int64, device=device)
        self.count_t = torch.zeros(R, dtype=torch.int64, device=device)
        self.nonfinite_t = torch.zeros(R, dtype=torch.int64, device=device)
        self.clip = c0.clip if c0.clip and c0.clip > 0 else float("inf")
        self._eager_left = EAGER_STEPS if device.type == "cuda" else None
        self.graph = "eager (cpu)" if device.type != "cuda" else None
        self._cuda_graph = None

    def batch(self, step_t) -> tuple:
        """(x, y) (R, B, T): run r's batch of the step ``step_t`` drawn with its own seed (the R batches by the
        kernels of one: :meth:`.device_sampler.DeviceSampler.sample_seeds`)."""
        if self.fixed is not None:
            return self.fixed.sample_seeds(step_t)
        return self.sampler.sample_seeds(step_t, self.seed_keys)

    def _body(self) -> None:
        x, y = self.batch(self.step_t)
        self.lr.copy_(torch.index_select(self.sched, 0, self.step_t.reshape(1))[0])
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=self.use_amp, cache_enabled=False):
            logits = self.model(x)
        losses = run_losses(logits, y)
        (grad,) = torch.autograd.grad(losses.sum(), self.model.flat)
        ok = adamw_update(self.model.flat.data, grad, self.m, self.v, self.opt_steps, self.lr,
                          self.cfgs[0].weight_decay, self.model.decay_mask, self.clip)
        with torch.no_grad():
            mask = y != IGNORE
            self.loss_t.copy_(losses.detach())
            self.correct_t.copy_(((logits.argmax(-1) == y) & mask).flatten(1).sum(1))
            self.count_t.copy_(mask.flatten(1).sum(1))
            self.nonfinite_t.add_((~ok).to(torch.int64))
            self.step_t.add_(1)

    def run(self) -> None:
        if self.fixed is not None:
            self.fixed.prepare(self.host_step)
        self.host_step += 1
        if self._eager_left == 0 and self.graph is None:
            self._cuda_graph, self.graph = capture(self._body, self.device)
        if self._cuda_graph is not None:
            self._cuda_graph.replay()
            return
        self._body()
        if self._eager_left:
            self._eager_left -= 1

    @property
    def nonfinite(self) -> list:
        return self.nonfinite_t.tolist()

    def read(self) -> list:
        """Per run ``(loss, train_accuracy, lr)`` of the last step (one host read)."""
        t = torch.stack([self.loss_t.double(), self.correct_t.double(), self.count_t.double(), self.lr.double()])
        return [(lo, c / max(1.0, n), lr) for lo, c, n, lr in t.T.tolist()]

    def optimizer_of(self, r: int, model: SequenceModel, cfg):
        """Run r's AdamW state as the single-run device loop holds it (:func:`.step.optimizer`, fused), for its
        checkpoint: moments and step count from the stacked ones."""
        opt = optimizer(cfg, model, "device")
        views = {nm: (o, s) for nm, s, o in zip(self.model.names, self.model.shapes, self.model.offsets)}
        for nm, p in model.named_parameters():
            o, s = views[nm]
            k = int(np.prod(s))
            opt.state[p] = {"step": self.opt_steps[r].detach().clone().float(),
                            "exp_avg": self.m[r, o:o + k].reshape(s).clone(),
                            "exp_avg_sq": self.v[r, o:o + k].reshape(s).clone()}
        for g in opt.param_groups:
            g["lr"] = torch.tensor(float(self.lr[r]), dtype=torch.float32, device=self.device)
        return opt

    def close(self) -> None:
        self._cuda_graph = None


# ------------------------------------------------------------------------------------------------ training
def build_batched(cfgs) -> tuple:
    """``(task, BatchedSequenceModel)``: run r's model initialised as :func:`~lrnnkit.learn.train.build` does
    (``torch.manual_seed(seed_r)``), the R models stacked and moved to the device."""
    cfgs = check_runs(cfgs)
    c0 = cfgs[0]
    require_device(c0.device)
    task = make_task(c0.task)
    n = c0.check_size(task.n_in, task.n_out) * len(cfgs)
    if n > limits.TRAIN_MAX_PARAMETERS:
        raise SizeLimitError(f"{len(cfgs)} runs of this model have {n} parameters, at most "
                             f"{limits.TRAIN_MAX_PARAMETERS} (lrnnkit.limits.TRAIN_MAX_PARAMETERS): fewer runs at once")
    models = []
    for c in cfgs:
        torch.manual_seed(c.seed)
        models.append(SequenceModel(**c.model_kwargs(task)))
    return task, BatchedSequenceModel(models).to(c0.device)


def train_batched(cfgs, outs=None, *, resume: bool = True, evaluate_at_end: bool = True, progress: bool = False,
                  stop_at: int | None = None) -> list:
    """Train R runs of one shape as one batched model (module docstring); ``outs`` None or one run directory per
    run (each gets ``metrics.jsonl`` and the checkpoints of ``checkpoint_every`` / ``checkpoint_seconds`` and the
    end). With ``resume``, run directories that all hold a checkpoint of the same step continue from it (each loaded
    as :func:`~lrnnkit.learn.train.train` loads it: settings, loop and inputs checked), so a batched run goes on
    where it stopped and ends as the uninterrupted one would. ``stop_at`` ends after that many steps (as
    ``max_seconds`` would). Returns the R result dicts of :func:`~lrnnkit.learn.train.train`, with ``batched`` =
    ``{"runs": R, "index": r}`` added."""
    cfgs = [dataclasses.replace(c, loop="device") if c.loop == "auto" else c for c in check_runs(cfgs)]
    if outs is not None:
        outs = list(outs)
        if len(outs) != len(cfgs) or len(set(map(os.path.realpath, outs))) != len(outs):
            raise InputError(f"a batched run of {len(cfgs)} runs needs {len(cfgs)} distinct run directories, got "
                             f"{len(outs)}")
    c0 = cfgs[0]
    with contextlib.ExitStack() as stack:
        stack.enter_context(_determinism(c0))
        stack.enter_context(memory_named(f"training {len(cfgs)} batched runs ({c0.layer} on {c0.device})",
                                         _memory_settings(c0) + f" or the number of runs ({len(cfgs)})"))
        task, model = build_batched(cfgs)
        stepper = BatchedStep(cfgs, task, model, torch.device(c0.device))
        state = None
        if outs:
            for o in outs:
                stack.enter_context(ck.run_lock(ck.make_run_dir(o), task.inputs))
            state = _resume(cfgs, outs, stepper) if resume else None
            for o in outs:
                ck.truncate_metrics(os.path.join(o, ck.METRICS), 0 if state is None else state["step"])
            fhs = [stack.enter_context(ck.open_metrics(os.path.join(o, ck.METRICS))) for o in outs]
        else:
            fhs = []
        return _loop(cfgs, task, stepper, outs, fhs, state, evaluate_at_end, progress, stop_at)


def _resume(cfgs, outs, stepper) -> dict | None:
    """``{"step", "elapsed", "windows", "texts"}`` of the runs' checkpoints, loaded into the stacked state (None when
    no directory holds one); refused, one line, when some do and some do not, or at different steps."""
    have = [os.path.exists(os.path.join(o, ck.CKPT_JSON)) for o in outs]
    if not any(have):
        return None
    if not all(have):
        raise InputError(f"{outs[have.index(False)]!r} holds no checkpoint where {outs[have.index(True)]!r} does: a "
                         "batched run resumes all its runs or none (use other directories)")
    model, got, other_code = stepper.model, [], {}
    for r, (c, o) in enumerate(zip(cfgs, outs)):
        m = SequenceModel(**model.config).to(device=model.flat.device, dtype=model.flat.dtype)
        opt = optimizer(c, m, "device")
        step, elapsed, prog, text = resume_one(c, o, m, opt, stepper.device,
                                               code_warning=lambda out, w: other_code.setdefault(w, []).append(out))
        with torch.no_grad():
            model.flat[r].copy_(torch.cat([p.reshape(-1) for p in m.parameters()]))
            st = [opt.state.get(p, {}) for p in m.parameters()]
            zero = [torch.zeros_like(p) for p in m.parameters()]
            stepper.m[r].copy_(torch.cat([s.get("exp_avg", z).reshape(-1) for s, z in zip(st, zero)]))
            stepper.v[r].copy_(torch.cat([s.get("exp_avg_sq", z).reshape(-1) for s, z in zip(st, zero)]))
            stepper.opt_steps[r] = float(next((s["step"] for s in st if "step" in s), 0.0))
            stepper.nonfinite_t[r] = int(prog.get("skipped_nonfinite_steps", 0))
        got.append((step, elapsed, list(prog.get("recent_train_accuracy", [])), text))
    for (was, now), dirs in other_code.items():     # one line for the batched run, not one per run
        print(f"lrnnkit: warning: the checkpoints of {_runs_named(dirs, len(outs))} were written by {was}; this is "
              f"{now}: the resumed runs will not repeat uninterrupted runs bit for bit", file=sys.stderr)
    steps = sorted({g[0] for g in got})
    if len(steps) > 1:
        raise InputError(f"the runs' checkpoints are of different steps ({', '.join(map(str, steps))}): resume them "
                         "one by one with lrnnkit train --loop device")
    stepper.step_t.fill_(steps[0])
    stepper.host_step = steps[0]
    return {"step": steps[0], "elapsed": max(g[1] for g in got), "windows": [g[2] for g in got],
            "texts": [g[3] for g in got]}


def _runs_named(dirs: list, total: int) -> str:
    """``dirs`` for a warning: ``'DIR'`` alone, else ``'all 12 runs (DIR, ...)'`` / ``'3 of 12 runs (DIR, ...)'``."""
    if len(dirs) == 1:
        return repr(dirs[0])
    return f"{'all' if len(dirs) == total else f'{len(dirs)} of'} {total} runs ({dirs[0]!r}, ...)"


def _loop(cfgs, task, stepper, outs, fhs, state, evaluate_at_end, progress, stop_at) -> list:
    c0, model, device = cfgs[0], stepper.model, stepper.device
    R = model.R
    step = 0 if state is None else state["step"]
    windows = [[] for _ in cfgs] if state is None else state["windows"]
    goods = [None] * R if state is None else state["texts"]
    use_amp = c0.bf16 and device.type == "cuda"
    # each run's evaluations during training, those before the resumed checkpoint read back from its metrics
    histories = [ck.read_evaluations(os.path.join(outs[r], ck.METRICS)) if outs and c0.eval_every else []
                 for r in range(R)]
    bar = None
    if progress:
        with contextlib.suppress(ImportError):
            from tqdm import tqdm
            bar = tqdm(total=c0.steps, initial=step, desc=f"{c0.task} {c0.layer} x{R}", leave=False)
    t0 = time.perf_counter() - (0.0 if state is None else state["elapsed"])
    saved_step, saved_at = (None if state is None else step), time.perf_counter()

    def save():
        nonlocal saved_step, saved_at
        nonfinite = stepper.nonfinite
        for r, c in enumerate(cfgs):
            m = model.unstack(r)
            goods[r] = ck.save(outs[r], step=step, config=c.to_json(), model=m, opt=stepper.optimizer_of(r, m, c),
                               elapsed=time.perf_counter() - t0, prev_text=goods[r],
                               progress={"recent_train_accuracy": windows[r][-3:],
                                         "skipped_nonfinite_steps": nonfinite[r], "loop": "device"})
        saved_step, saved_at = step, time.perf_counter()

    end = c0.steps if stop_at is None else min(c0.steps, stop_at)
    stopped_early = False
    try:
        while step < end:
            if c0.max_seconds is not None and time.perf_counter() - t0 > c0.max_seconds:
                stopped_early = True
                break
            stepper.run()
            step += 1
            if step % c0.log_every == 0 or step == c0.steps:
                secs = round(time.perf_counter() - t0, 3)
                for r, (loss, acc, lr) in enumerate(stepper.read()):
                    windows[r] = (windows[r] + [acc])[-3:]
                    if fhs:
                        fhs[r].write(json.dumps({"step": step, "loss": loss, "train_accuracy": acc, "lr": lr,
                                                 "seconds": secs}) + "\n")
                        fhs[r].flush()
            if evaluation_due(c0, step):
                for r, c in enumerate(cfgs):
                    histories[r].append(training_evaluation(model.unstack(r), task, c, device, use_amp, step))
                    if fhs:
                        fhs[r].write(json.dumps(histories[r][-1]) + "\n")
                        fhs[r].flush()
            if bar is not None:
                bar.update(1)
            if outs and checkpoint_due(c0, step, saved_at):
                save()
    finally:
        if bar is not None:
            bar.close()
        stepper.close()
    if outs and saved_step != step:
        save()
    seconds = time.perf_counter() - t0
    nonfinite = stepper.nonfinite
    results = []
    for r, c in enumerate(cfgs):
        m = model.unstack(r)
        path = os.path.join(outs[r], ck.CKPT_JSON) if outs else None
        res = {"task": c.task, "config": c.to_json(), "steps": step, "seconds": round(seconds, 3),
               "stopped_early": stopped_early, "checkpoint": path, "skipped_nonfinite_steps": nonfinite[r],
               "train_accuracy": float(np.mean(windows[r])) if windows[r] else None,
               "chance": task.chance, "n_out": task.n_out, "parameters": model.N, "step_graph": stepper.graph,
               "batched": {"runs": R, "index": r}}
        if evaluate_at_end:
            res.update(final_evaluation(m, task, c, device, use_amp))
        if c.eval_every:
            res["evaluations"] = evaluations_of(histories[r], res if evaluate_at_end else None, step)
        res["_model"] = m
        results.append(res)
    return results


def difference_from_separate(cfgs) -> dict:
    """Train ``cfgs`` batched and each alone on the device loop (:func:`~lrnnkit.learn.train.train` with
    ``loop="device"``, no evaluation) from the same initialisation and batches, and return ``{"max_abs": [per run:
    the largest absolute parameter difference], "moved": [per run: the largest change of a parameter during its
    run alone], "graph": the batched step's graph}``: the check, on the machine at hand, that the batched model
    trains the runs that would have been trained one by one (the tests on the CPU, the benchmark on the GPU)."""
    cfgs = [dataclasses.replace(c, loop="device") for c in check_runs(cfgs)]
    task = make_task(cfgs[0].task)
    got = train_batched(cfgs, evaluate_at_end=False)
    out = {"max_abs": [], "moved": [], "graph": got[0]["step_graph"]}
    for c, g in zip(cfgs, got):
        torch.manual_seed(c.seed)
        init = SequenceModel(**c.model_kwargs(task)).to(c.device)
        alone = train(c, evaluate_at_end=False)["_model"]
        with torch.no_grad():
            pairs = list(zip(alone.parameters(), g["_model"].parameters(), init.parameters()))
            out["max_abs"].append(max(float((a - b).abs().max()) for a, b, _ in pairs))
            out["moved"].append(max(float((a - p0).abs().max()) for a, _, p0 in pairs))
    return out
