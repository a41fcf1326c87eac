"""Training: AdamW, linear warm-up then cosine decay, gradient clipping, bf16 autocast on CUDA, checkpoints that
resume bit-identically, a progress bar, metrics as JSON lines.

The papers' recipe (000, App. E.1.1 / 001, App. on state tracking): AdamW, cosine annealing to a minimum learning
rate of 1e-6 after 10% warm-up, weight decay, gradient clipping at 1.0, batches generated fresh at every step.

Reproducibility: the model is initialised from ``torch.manual_seed(seed)``; batch ``s`` is drawn from
``batch_rng(seed, s)`` (:mod:`.tasks`), so it does not depend on the batches before it. A checkpoint
(:mod:`.checkpoint`: the model's and the optimizer's tensors, the step, the config, the optimizer's
hyper-parameters, the torch RNG states, the elapsed time, the run's counters) taken at step s and resumed continues
with exactly the parameters, optimizer moments, learning rate and data an uninterrupted run has at step s, so the
two runs end bit-identical (on the same code, device and library versions), ``metrics.jsonl`` included: a resumed
run first cuts it back to the checkpoint's step. A checkpoint written by other code (another lrnnkit, commit or
package files, or another torch: :func:`.checkpoint.code_mismatch`) resumes with one warning line.

Interruptions: with a run directory, a checkpoint is written every ``checkpoint_every`` steps and every
``checkpoint_seconds`` seconds (default 60 s), and once more when the run ends for any reason -- Ctrl-C included:
the first Ctrl-C (or SIGTERM, or SIGHUP) lets the current step finish, saves, and raises
:class:`~lrnnkit.errors.Interrupted` (a KeyboardInterrupt; the command line exits 130, 143 or 129); a second one
stops at once (the last checkpoint stands; a checkpoint being written is finished first). A signal outside the
steps (building the model, the final evaluation) stops the run there, the last checkpoint standing. ``kill -9``
loses at most the steps since the last checkpoint. One process at a time writes a run directory
(:func:`.checkpoint.run_lock`).

Every number of a :class:`TrainConfig` is range-checked when it is made (limits in :mod:`lrnnkit.limits`, listed
in docs/limits.rst), and the model's parameter count before any memory is taken (:meth:`TrainConfig.check_size`).
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass

import numpy as np
import torch

from .. import limits
from ..errors import MESSAGE_CHARS, InputError, Interrupted, SizeLimitError
from ..layers.fixed_point import ITERATIONS, FixedPointLayer, FixedPointMixer
from ..signals import STOP_SIGNALS, signal_name, stopping
from . import checkpoint as ck
from .dataset import check_train_words
from .device import check_device, require_device
from .oom import memory_named
from .evaluate import eigenvalue_summary, evaluate, evaluate_mixture
from .kinds import BATCH, LAYER_KINDS, TEST_LEN, TRAIN_LEN, WIDTH, train_defaults
from .models import SequenceModel, parse_eig_range
from .step import LOOPS, SCHEDULES, lr_at, make_step, optimizer
from .tasks import make_task

__all__ = ["TrainConfig", "train", "build", "load_checkpoint", "lr_at"]

CKPT_JSON = ck.CKPT_JSON
METRICS = ck.METRICS

# the command line's flag of a config field, for messages
_FLAGS = {"n_h": "--n-h", "layers": "--layers", "width": "--width", "heads": "--heads", "head_dim": "--head-dim",
          "train_len": "--train-len", "test_len": "--test-len", "steps": "--steps", "batch": "--batch",
          "lr": "--lr", "seed": "--seed", "max_seconds": "--max-seconds", "checkpoint_every": "--checkpoint-every",
          "checkpoint_seconds": "--checkpoint-every", "eig_range": "--eig-range", "layer": "--layer",
          "device": "--device", "loop": "--loop", "train_words": "--train-words",
          "fp_train_iters": "--fp-train-iters"}
# integer fields: (lowest, limit constant or None)
_INTS = {"n_h": (1, "TRAIN_MAX_N_H"), "layers": (1, "TRAIN_MAX_LAYERS"), "width": (1, "TRAIN_MAX_WIDTH"),
         "heads": (1, "TRAIN_MAX_HEADS"), "block_size": (1, "TRAIN_MAX_WIDTH"), "steps": (1, "TRAIN_MAX_STEPS"),
         "batch": (1, "TRAIN_MAX_BATCH"), "eval_n": (1, "TRAIN_MAX_EVAL_WORDS"), "eval_batch": (1, "TRAIN_MAX_BATCH"),
         "seed": (0, "MAX_SEED"), "fp_train_iters": (1, "TRAIN_MAX_FP_ITERS"),
         "checkpoint_every": (0, "TRAIN_MAX_STEPS"), "log_every": (1, "TRAIN_MAX_STEPS"),
         "eval_every": (0, "TRAIN_MAX_STEPS")}


# layers whose training forward reads the device: their step cannot be captured as a CUDA graph, and eagerly the
# device loop's sampler costs more than numpy's (measured on an H200, benchmarks/RESULTS.md "learning at paper
# scale"), so "auto" keeps them on the host loop. The fixed-point layer (003) is one only where its mixer decides the
# stopping rule on the host in training (FixedPointMixer.SYNC_FREE false; lrnnkit.layers.fixed_point, module text)
def _host_loop_layers() -> tuple:
    return () if FixedPointMixer.SYNC_FREE else ("fixed-point",)


# fields whose None means the layer's `lrnnkit train` default (kinds.train_defaults)
_LAYER_DEFAULTED = ("heads", "short_conv", "lr", "steps")
# float fields: (lowest, lowest allowed?, highest or None)
_FLOATS = {"lr": (0.0, False, None), "weight_decay": (0.0, True, None), "warmup": (0.0, True, 1.0),
           "min_lr": (0.0, True, None), "clip": (0.0, True, None), "checkpoint_seconds": (0.0, True, None)}


def _label(name: str) -> str:
    return f"{name} ({_FLAGS[name]})" if name in _FLAGS else name


def _check_float(name: str, v, lo: float, lo_ok: bool, hi) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
            or (v < lo if lo_ok else v <= lo) or (hi is not None and v > hi):
        rng = f"{'>=' if lo_ok else '>'} {lo:g}" + (f" and <= {hi:g}" if hi is not None else "")
        raise InputError(f"{_label(name)} must be a finite number {rng}, got {v!r}"[:MESSAGE_CHARS])
    return float(v)


def _int_list(name: str, v, n: int | None) -> tuple:
    if isinstance(v, str) or not isinstance(v, (list, tuple)) or (n is not None and len(v) != n) or not v \
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        want = f"{n} integers" if n else "a non-empty list of integers"
        raise InputError(f"{_label(name)} must be {want}, got {v!r}"[:MESSAGE_CHARS])
    return tuple(v)


@dataclass
class TrainConfig:
    """Everything a run depends on (a JSON-able dataclass). ``train_len`` = inclusive range (A, B) of word
    lengths; ``test_len`` the evaluation lengths. ``max_seconds`` stops early (the result says so); with
    ``auto_steps`` the step count is cut, once after 25 timed steps, to what fits in ``max_seconds`` (so the
    cosine schedule completes; the result's config records the steps actually used). ``checkpoint_every`` (steps,
    0 = off) and ``checkpoint_seconds`` (0 = off) set the periodic checkpoints of a run with a directory.

    ``heads``, ``short_conv``, ``lr`` and ``steps`` left at None take the layer's defaults, the ones `lrnnkit train`
    uses (:func:`lrnnkit.learn.kinds.train_defaults`), so ``TrainConfig(task="parity", layer="diagonal")`` is the
    run the command line makes; the config then holds the values they resolved to.

    ``loop`` (:mod:`.step`): ``"host"`` draws batches with numpy and drives every step from the host;
    ``"device"`` generates them on the device and keeps the step there (one CUDA graph per step on CUDA); ``"auto"``
    (:attr:`step_loop`) is ``"device"`` on CUDA (the fixed-point layer too: its training forward decides its
    stopping rule on the device, :class:`~lrnnkit.layers.fixed_point.FixedPointLayer` ``sync_free``) and ``"host"``
    on the CPU, decided when the run starts, so a config made for the CPU and moved to a GPU
    (``dataclasses.replace(cfg, device="cuda")``) runs the device loop there. The two loops draw the same
    distribution of batches from different random numbers, so a run is reproducible within one loop, not across
    them: a checkpoint records the loop it trained on, and resuming it on the other is refused. A stored config
    without the field ran on the host loop (:meth:`from_json`).

    ``schedule`` (:func:`.step.lr_at`): ``"cosine"`` (a stored config without the field), ``"linear"`` or
    ``"constant"``, the same in both loops. ``test_mix = (n, lo, hi)`` adds to the final evaluation ``n`` test words
    of lengths uniform in ``lo..hi``, scored as one set (:func:`.evaluate.evaluate_mixture`: 000, Fig. 4 caption),
    beside the per-length table.

    ``train_words`` (None: fresh batches every step): the size N of a fixed training set run for epochs
    (:mod:`.dataset`; 000, App. E.2.1; 001, App. C.1; 003, App. E.2), the same words in every loop; ``steps`` stays
    the step count and :attr:`epochs` (``steps x batch / N``) the epochs it implies. A stored config without the
    field trained on fresh batches.

    ``fp_train_iters``: the fixed-point layer's cap on its iterations in training (003, Section 3: ``l_max = 16``
    for state tracking, Fig. 3, the default; 100 for the paper's other results); evaluation runs up to 100. Only
    the fixed-point layer has it: another layer with a value other than the default is refused.

    ``fp_iteration``: the fixed-point layer's stopping rule (:mod:`lrnnkit.layers.fixed_point`, its ``iteration``):
    ``"paper"`` (003, App. D.2 as printed; the default, and a stored config without the field) or ``"authors"``
    (the authors' damped iteration, fp-rnn at 4c28602, models/model_utils.py; its evaluation cap is 1000 damped
    steps). Only the fixed-point layer has it: another layer with a value other than the default is refused.

    ``eval_every`` (steps, 0 = off): evaluate on the final evaluation's words (``test_len``, ``eval_n``, seed 0)
    every that many steps as well, for papers that report the best test accuracy over training (002, Table 2
    caption). Each evaluation goes to ``metrics.jsonl`` (``{"step", "evaluation"}``, so a resumed run keeps the
    ones before its checkpoint) and the result lists them all, the final one last, as ``evaluations``."""

    task: str = "parity"
    layer: str = "deltaproduct"
    n_h: int = 1
    eig_range: tuple = (-1.0, 1.0)
    layers: int = 1
    width: int = WIDTH
    heads: int | None = None
    head_dim: int | None = None
    mlp: bool = False
    short_conv: bool | None = None
    gate: bool = False
    block_size: int = 8
    backend: str = "auto"
    output_gate: bool = True
    train_len: tuple = TRAIN_LEN
    test_len: tuple = TEST_LEN
    steps: int | None = None
    batch: int = BATCH
    lr: float | None = None
    weight_decay: float = 0.1
    warmup: float = 0.1
    min_lr: float = 1e-6
    clip: float = 1.0
    seed: int = 0
    device: str = "cpu"
    bf16: bool = True
    max_seconds: float | None = None
    auto_steps: bool = False
    eval_n: int = 256
    eval_batch: int = 256
    eval_every: int = 0
    checkpoint_every: int = 0
    checkpoint_seconds: float = 60.0
    log_every: int = 50
    deterministic: bool = False
    loop: str = "auto"
    schedule: str = "cosine"
    test_mix: tuple | None = None
    train_words: int | None = None
    fp_train_iters: int = FixedPointMixer.TRAIN_MAX_ITERS
    fp_iteration: str = "paper"

    def __post_init__(self):
        """Every field's type and range (lrnnkit.limits), before any work."""
        for nm in ("task", "layer", "backend", "device", "loop"):
            if not isinstance(getattr(self, nm), str):
                raise InputError(f"{_label(nm)} must be a string, got {getattr(self, nm)!r}"[:MESSAGE_CHARS])
        if self.layer not in LAYER_KINDS:
            raise InputError(f"unknown layer kind {self.layer!r} (choose from {', '.join(LAYER_KINDS)})"[:MESSAGE_CHARS])
        layer_defaults = train_defaults(self.layer)
        for nm in _LAYER_DEFAULTED:
            if getattr(self, nm) is None:
                setattr(self, nm, layer_defaults[nm])
        for nm in ("mlp", "short_conv", "gate", "output_gate", "bf16", "auto_steps", "deterministic"):
            if not isinstance(getattr(self, nm), bool):
                raise InputError(f"{nm} must be true or false, got {getattr(self, nm)!r}"[:MESSAGE_CHARS])
        for nm, (lo, const) in _INTS.items():
            limits.check_int(_label(nm), getattr(self, nm), lo, getattr(limits, const), const)
        if self.head_dim is not None:
            limits.check_int(_label("head_dim"), self.head_dim, 1, limits.TRAIN_MAX_HEAD_DIM, "TRAIN_MAX_HEAD_DIM")
        for nm, (lo, lo_ok, hi) in _FLOATS.items():
            setattr(self, nm, _check_float(nm, getattr(self, nm), lo, lo_ok, hi))
        if self.max_seconds is not None:
            self.max_seconds = _check_float("max_seconds", self.max_seconds, 0.0, False, None)
        if not isinstance(self.eig_range, (str, list, tuple)):
            raise InputError(f"eigenvalue range must be 0,1 or -1,1, got {self.eig_range!r}"[:MESSAGE_CHARS])
        try:
            self.eig_range = parse_eig_range(self.eig_range)
        except (TypeError, ValueError) as exc:
            raise InputError(str(exc) if isinstance(exc, InputError) else
                             f"eigenvalue range must be 0,1 or -1,1, got {self.eig_range!r}"[:MESSAGE_CHARS]) from None
        self.train_len = _int_list("train_len", self.train_len, 2)
        self.test_len = _int_list("test_len", self.test_len, None)
        a, b = self.train_len
        if not 1 <= a <= b:
            raise InputError(f"{_label('train_len')} must be a range A:B with 1 <= A <= B, got {a}:{b}")
        limits.check_int(_label("train_len") + " B", b, 1, limits.TRAIN_MAX_LENGTH, "TRAIN_MAX_LENGTH")
        if len(self.test_len) > limits.TRAIN_MAX_TEST_LENGTHS:
            raise SizeLimitError(f"{_label('test_len')}: {len(self.test_len)} lengths, at most "
                                 f"{limits.TRAIN_MAX_TEST_LENGTHS} (lrnnkit.limits.TRAIN_MAX_TEST_LENGTHS)")
        for L in self.test_len:
            limits.check_int(_label("test_len"), L, 1, limits.TRAIN_MAX_LENGTH, "TRAIN_MAX_LENGTH")
        if self.batch * b > limits.TRAIN_MAX_BATCH_TOKENS:
            raise SizeLimitError(f"{_label('batch')} x the longest training length = {self.batch} x {b} = "
                                 f"{self.batch * b} tokens per step, at most {limits.TRAIN_MAX_BATCH_TOKENS} "
                                 "(lrnnkit.limits.TRAIN_MAX_BATCH_TOKENS)")
        if self.eval_n * max(self.test_len) > limits.TRAIN_MAX_EVAL_TOKENS:
            raise SizeLimitError(f"eval_n x the longest test length = {self.eval_n} x {max(self.test_len)} tokens, "
                                 f"at most {limits.TRAIN_MAX_EVAL_TOKENS} (lrnnkit.limits.TRAIN_MAX_EVAL_TOKENS)")
        if self.loop not in LOOPS + ("auto",):
            raise InputError(f"{_label('loop')} must be auto, {' or '.join(LOOPS)}, got {self.loop!r}"[:MESSAGE_CHARS])
        check_device(self.device)
        if self.layer != "fixed-point" and self.fp_train_iters != FixedPointMixer.TRAIN_MAX_ITERS:
            raise InputError(f"fp_train_iters applies to the fixed-point layer only, not {self.layer!r} (got "
                             f"{self.fp_train_iters})")
        if not isinstance(self.fp_iteration, str) or self.fp_iteration not in ITERATIONS:
            raise InputError(f"fp_iteration must be one of {', '.join(ITERATIONS)}, got "
                             f"{self.fp_iteration!r}"[:MESSAGE_CHARS])
        if self.layer != "fixed-point" and self.fp_iteration != "paper":
            raise InputError(f"fp_iteration applies to the fixed-point layer only, not {self.layer!r} (got "
                             f"{self.fp_iteration!r})"[:MESSAGE_CHARS])
        self._check_schedule_and_mix()
        self._check_train_words()

    def _check_schedule_and_mix(self) -> None:
        """``schedule`` one of :data:`.step.SCHEDULES`; ``test_mix`` None or ``(n_words, lo, hi)`` with
        ``1 <= lo <= hi`` (:func:`.evaluate.evaluate_mixture`), its longest words within the evaluation's limits."""
        if self.schedule not in SCHEDULES:
            raise InputError(f"schedule must be {', '.join(SCHEDULES)}, got {self.schedule!r}"[:MESSAGE_CHARS])
        if self.test_mix is None:
            return
        n, lo, hi = _int_list("test_mix", self.test_mix, 3)
        limits.check_int("test_mix words", n, 1, limits.TRAIN_MAX_EVAL_WORDS, "TRAIN_MAX_EVAL_WORDS")
        limits.check_int("test_mix longest length", hi, 1, limits.TRAIN_MAX_LENGTH, "TRAIN_MAX_LENGTH")
        if not 1 <= lo <= hi:
            raise InputError(f"test_mix lengths must be a range A..B with 1 <= A <= B, got {lo}..{hi}")
        if n * hi > limits.TRAIN_MAX_EVAL_TOKENS:
            raise SizeLimitError(f"test_mix: {n} words x the longest length {hi} tokens, at most "
                                 f"{limits.TRAIN_MAX_EVAL_TOKENS} (lrnnkit.limits.TRAIN_MAX_EVAL_TOKENS)")
        self.test_mix = (n, lo, hi)

    def _check_train_words(self) -> None:
        """``train_words``: None (fresh batches every step) or the size of a fixed training set run for epochs
        (:mod:`.dataset`): an int at least ``batch``, its bytes within ``lrnnkit.limits.TRAIN_MAX_SET_BYTES``."""
        self.train_words = check_train_words(self.train_words, self.batch, self.train_len[1], _label("train_words"))

    @property
    def epochs(self) -> float | None:
        """The epochs a fixed training set is run for, ``steps x batch / train_words`` (None without one)."""
        return None if self.train_words is None else self.steps * self.batch / self.train_words

    @property
    def step_loop(self) -> str:
        """The training loop this config runs (``loop``, with ``"auto"`` decided by the device and layer)."""
        if self.loop != "auto":
            return self.loop
        return "device" if self.device.startswith("cuda") and self.layer not in _host_loop_layers() else "host"

    def to_json(self) -> dict:
        d = dataclasses.asdict(self)
        d["eig_range"], d["train_len"], d["test_len"] = list(self.eig_range), list(self.train_len), list(self.test_len)
        if self.test_mix is not None:
            d["test_mix"] = list(self.test_mix)
        return d

    @classmethod
    def from_json(cls, d: dict) -> "TrainConfig":
        if not isinstance(d, dict):
            raise InputError(f"a training config must be a table, got {type(d).__name__}")
        names = {f.name for f in dataclasses.fields(cls)}
        bad = sorted(set(d) - names)
        if bad:
            raise InputError(f"unknown training option(s) {', '.join(map(repr, bad))}"[:MESSAGE_CHARS])
        return cls(**{"loop": "host", **d})      # configs written before the device loop ran on the host

    def model_kwargs(self, task) -> dict:
        return dict(vocab=task.n_in, n_out=task.n_out, layer=self.layer, n_h=self.n_h, eig_range=self.eig_range,
                    layers=self.layers, width=self.width, heads=self.heads, head_dim=self.head_dim, mlp=self.mlp,
                    short_conv=self.short_conv, gate=self.gate, block_size=self.block_size, backend=self.backend,
                    output_gate=self.output_gate,
                    # the fixed-point layer's cap in training, in the model's config only off its default (003's
                    # 16), so that every other model and every earlier checkpoint keeps its config as it was
                    fp_train_iters=self.fp_train_iters if self.layer == "fixed-point" and
                    self.fp_train_iters != FixedPointMixer.TRAIN_MAX_ITERS else None,
                    # likewise its stopping rule, off the default ("paper") only
                    fp_iteration=self.fp_iteration if self.layer == "fixed-point" and
                    self.fp_iteration != "paper" else None)

    def check_size(self, vocab: int = 2, n_out: int = 2) -> int:
        """The model's parameter count (built on torch's ``meta`` device: no memory taken); SizeLimitError past
        ``lrnnkit.limits.TRAIN_MAX_PARAMETERS``. With the default ``vocab`` / ``n_out`` a lower bound for any
        task (a sweep checks its points so before launching any)."""
        kw = self.model_kwargs(type("T", (), {"n_in": vocab, "n_out": n_out})())
        with torch.device("meta"):
            m = SequenceModel(**kw)
        n = sum(p.numel() for p in m.parameters())
        if n > limits.TRAIN_MAX_PARAMETERS:
            raise SizeLimitError(f"the model has {n} parameters (width {self.width}, heads {self.heads}, head_dim "
                                 f"{self.head_dim or 'default'}, n_h {self.n_h}, layers {self.layers}), at most "
                                 f"{limits.TRAIN_MAX_PARAMETERS} (lrnnkit.limits.TRAIN_MAX_PARAMETERS)")
        return n


def eval_batch(cfg: TrainConfig) -> int:
    """Words per evaluation forward: ``eval_batch``, fewer where the longest test words would pass
    ``limits.TRAIN_MAX_BATCH_TOKENS`` (the same words, the same answers, in smaller batches)."""
    longest = max(max(cfg.test_len), cfg.test_mix[2] if cfg.test_mix is not None else 0)
    return max(1, min(cfg.eval_batch, limits.TRAIN_MAX_BATCH_TOKENS // longest))


def build(cfg: TrainConfig, model_fn=None):
    """``(task, model, optimizer)`` for a config, the model initialised from ``torch.manual_seed(cfg.seed)``;
    ``model_fn(task) -> nn.Module`` replaces :class:`SequenceModel` (e.g. a peer library's layer). The built-in
    model's size is checked first (:meth:`TrainConfig.check_size`)."""
    require_device(cfg.device)
    task = make_task(cfg.task)
    if model_fn is None:
        cfg.check_size(task.n_in, task.n_out)
    torch.manual_seed(cfg.seed)
    model = (model_fn(task) if model_fn is not None else SequenceModel(**cfg.model_kwargs(task))).to(cfg.device)
    _fit_fixed_point_loop(model, cfg.step_loop)
    return task, model, optimizer(cfg, model, cfg.step_loop)


def _fit_fixed_point_loop(model, loop: str) -> None:
    """Every fixed-point layer of ``model`` decides its stopping rule on the device on the device loop
    (``sync_free``: the step can be captured) and on the host on the host loop, which reads the device every step
    anyway, so there the early exit saves the iterations past the rule at no cost in synchronisation (both give the
    same iterate and gradients: :mod:`lrnnkit.layers.fixed_point`, module text)."""
    for m in model.modules():
        if isinstance(m, FixedPointLayer):
            m.sync_free = loop == "device" and FixedPointMixer.SYNC_FREE


# ------------------------------------------------------------------------------------------------ checkpoints
def load_checkpoint(path: str, device: str = "cpu"):
    """``(doc, model)``: a checkpoint's JSON (every field checked, :func:`.checkpoint.read`) and its model
    (``path`` = the run directory -- its newest good checkpoint -- or a checkpoint JSON file). ``doc["_tensors"]``
    holds the tensors."""
    if os.path.isdir(path):
        found = ck.find(path, TrainConfig.from_json)
        if found is None:
            raise InputError(f"no checkpoint in {path!r}")
        doc, tensors, _ = found
    else:
        doc, tensors, _ = ck.read(path, TrainConfig.from_json)
    mc = doc["model_config"]
    if mc is None:
        raise InputError(f"checkpoint {path!r} was made with a custom model (model_fn): no model config")
    cfg = TrainConfig.from_json(doc["config"])
    keys = {"vocab", "n_out"} | set(cfg.model_kwargs(type("T", (), {"n_in": 1, "n_out": 1})()))
    bad = sorted(set(mc) - keys)
    if bad:
        raise InputError(f"checkpoint {path!r}: unknown model_config key(s) {', '.join(map(repr, bad))}"[:MESSAGE_CHARS])
    for k in ("vocab", "n_out"):
        limits.check_int(f"checkpoint model_config {k}", mc.get(k), 1, limits.MAX_LETTERS + 2, "MAX_LETTERS")
    # the model config must be the one the training config gives (so the size checks above cover it)
    want = cfg.model_kwargs(type("T", (), {"n_in": mc["vocab"], "n_out": mc["n_out"]})())
    want["eig_range"] = list(want["eig_range"])
    diff = sorted(k for k in want if k in mc and mc[k] != want[k] and not (k == "head_dim" and want[k] is None))
    if diff:
        raise InputError(f"checkpoint {path!r}: model_config disagrees with config on {', '.join(diff)}")
    cfg.check_size(mc["vocab"], mc["n_out"])
    try:
        model = SequenceModel(**mc).to(device)
    except (TypeError, ValueError) as exc:
        raise InputError(f"checkpoint {path!r}: bad model_config: {exc}"[:240]) from None
    ck.restore(doc, tensors, model, optimizer(cfg, model, doc.get("progress", {}).get("loop", "host")), device,
               f"checkpoint {path!r}")
    doc["_tensors"] = tensors
    return doc, model


_NOT_COMPARED = ("max_seconds", "checkpoint_every", "checkpoint_seconds", "log_every", "device", "loop")   # loop: by the
# loop the checkpoint trained on (progress "loop"), which "auto" decides per device


def _resume(cfg: TrainConfig, out: str, model, opt, device, code_warning=None) -> tuple:
    """``(step, elapsed, progress, json_text)`` of the newest good checkpoint in ``out``, loaded into ``model``
    and ``opt`` (None when there is none); a checkpoint of other settings or made from other contents of the task's
    files (:func:`.checkpoint.inputs_mismatch`) is refused, one of other code warned of (stderr, one line; or
    ``code_warning(out, (written_by, this))`` where given, so that a batched run warns once for all its runs)."""
    found = ck.find(out, TrainConfig.from_json, warn=lambda m: print(f"lrnnkit: warning: {m}", file=sys.stderr),
                    tensor_bytes=ck.state_bytes(model))
    if found is None:
        return None
    doc, tensors, text = found
    where = f"checkpoint in {out!r}"
    skip = _NOT_COMPARED + (("steps",) if cfg.auto_steps else ())
    want = {k: v for k, v in cfg.to_json().items() if k not in skip}
    have = {k: v for k, v in TrainConfig.from_json(doc["config"]).to_json().items() if k in want}
    if have != want:
        diff = sorted(k for k in want if have.get(k) != want[k])
        raise InputError(f"{where} was made with other settings ({', '.join(diff)}); use another --out or "
                         "remove it")
    was = doc.get("progress", {}).get("loop", "host")
    if was != cfg.step_loop:
        raise InputError(f"{where} trained on the {was} loop and this run would take the {cfg.step_loop} loop "
                         f"(another random stream of batches); resume it with --loop {was}")
    changed = ck.inputs_mismatch(doc, out)
    if changed is not None:
        raise InputError(f"{where} was made from other input: {changed}; use another --out or remove it")
    ck.restore(doc, tensors, model, opt, device, where)
    ck.set_rng_state(doc["rng"])
    other = ck.code_mismatch(doc)
    if other is not None and code_warning is not None:
        code_warning(out, other)
    elif other is not None:
        print(f"lrnnkit: warning: {where} was written by {other[0]}; this is {other[1]}: the resumed run will not "
              "repeat an uninterrupted run bit for bit", file=sys.stderr)
    if cfg.auto_steps:
        cfg.steps = int(doc["config"]["steps"])
    return int(doc["step"]), float(doc["elapsed"]), dict(doc.get("progress", {})), text


class _DeferredInterrupt:
    """While active (main thread only, and only for signals not ignored): the first Ctrl-C (SIGINT), SIGTERM or
    SIGHUP sets ``requested`` (the loop stops after the current step and saves) and is remembered in
    ``last_signum``; a second one raises :class:`~lrnnkit.errors.Interrupted` at once (a checkpoint being written
    is finished first: :func:`.checkpoint.save` holds signals)."""

    SIGNALS = STOP_SIGNALS
    last_signum = signal.SIGINT

    def __init__(self):
        self.requested = False
        self._old = {}

    def _handler(self, signum, frame):
        if self.requested:
            raise Interrupted(signum, f"lrnnkit: stopped at once by a second {signal_name(signum)}; the last "
                              "checkpoint stands")
        self.requested = True
        _DeferredInterrupt.last_signum = signum

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in self.SIGNALS:
                if signal.getsignal(sig) is not signal.SIG_IGN:
                    self._old[sig] = signal.signal(sig, self._handler)
        return self

    def __exit__(self, *exc):
        for sig, old in self._old.items():
            signal.signal(sig, old)
        self._old = {}
        return False


# ------------------------------------------------------------------------------------------------ training
def train(cfg: TrainConfig, out: str | None = None, *, resume: bool = True, progress: bool = False,
          stop_at: int | None = None, evaluate_at_end: bool = True, model_fn=None) -> dict:
    """Train (or resume from ``out``) and evaluate. ``stop_at`` ends after that many steps (as an interruption
    would: the tests use it to check resumption). Returns the result dict of ``lrnnkit train --json``.
    Ctrl-C, SIGTERM, SIGHUP: saves (with ``out``) and raises :class:`~lrnnkit.errors.Interrupted`, a
    KeyboardInterrupt (module docstring). Memory a legal size cannot get: :class:`~lrnnkit.errors.OutOfMemory`."""
    cfg = dataclasses.replace(cfg)      # auto_steps cuts the steps of this copy, never the caller's configuration
    saved = f"the last checkpoint in {out!r} stands" if out else "nothing was saved (no --out)"
    with _determinism(cfg), memory_named(f"training ({cfg.layer} on {cfg.device})", _memory_settings(cfg)), \
            stopping(f"lrnnkit: stopped by {{signal}}; {saved}"):
        task, model, opt = build(cfg, model_fn)
        try:
            if not out:
                return _train(cfg, task, model, opt, None, resume, progress, stop_at, evaluate_at_end)
            with ck.run_lock(ck.make_run_dir(out), task.inputs):
                return _train(cfg, task, model, opt, out, resume, progress, stop_at, evaluate_at_end)
        except KeyboardInterrupt as exc:     # the loop stopped on a signal and saved (it said so): which signal
            if isinstance(exc, Interrupted):
                raise
            raise Interrupted(_DeferredInterrupt.last_signum,
                              "" if out else "lrnnkit: interrupted; nothing was saved (no --out)") from None


def _memory_settings(cfg: TrainConfig) -> str:
    """The settings whose product a training run's memory grows with, for an out-of-memory message."""
    return (f"--batch ({cfg.batch}), the longest --train-len ({cfg.train_len[1]}) or --test-len "
            f"({max(cfg.test_len)}), --width ({cfg.width}), --heads ({cfg.heads}) or --layers ({cfg.layers})")


@contextlib.contextmanager
def _determinism(cfg: TrainConfig):
    """``cfg.deterministic``: torch's deterministic algorithms for the run (restored afterwards), and on CUDA
    cuBLAS's fixed workspace (``CUBLAS_WORKSPACE_CONFIG=:4096:8``, set unless already set; it takes effect in a
    process whose cuBLAS has not started yet, as in a sweep's fresh GPU worker). lrnnkit's Triton kernels use no
    atomics, so with this a CUDA run is repeatable bit for bit and a resumed run records what an uninterrupted one
    records, as on the CPU. Ops without a deterministic implementation warn instead of failing."""
    if not cfg.deterministic:
        yield
        return
    was, was_warn = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    if torch.device(cfg.device).type == "cuda":
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(was, warn_only=was_warn)


def _train(cfg, task, model, opt, out, resume, progress, stop_at, evaluate_at_end) -> dict:
    device = torch.device(cfg.device)
    step, elapsed, prog, good = 0, 0.0, {}, None
    ckpt_path = os.path.join(out, CKPT_JSON) if out else None
    if out:
        got = _resume(cfg, out, model, opt, device) if resume else None
        if got is not None:
            step, elapsed, prog, good = got
        ck.truncate_metrics(os.path.join(out, METRICS), step)
    history = ck.read_evaluations(os.path.join(out, METRICS)) if out and cfg.eval_every else []
    use_amp = cfg.bf16 and device.type == "cuda"
    bar = None
    if progress:
        try:
            from tqdm import tqdm
            bar = tqdm(total=cfg.steps, initial=step, desc=f"{cfg.task} {cfg.layer}", leave=False)
        except ImportError:
            bar = None
    window = list(prog.get("recent_train_accuracy", []))
    stepper = make_step(cfg, task, model, opt, device, nonfinite=int(prog.get("skipped_nonfinite_steps", 0)),
                        start=step)
    t0 = time.perf_counter() - elapsed
    end = cfg.steps if stop_at is None else min(cfg.steps, stop_at)
    stopped_early = False
    t5 = None
    saved_step, saved_at = (step if good is not None else None), time.perf_counter()
    metrics_fh = None

    def save():
        nonlocal good, saved_step, saved_at
        good = ck.save(out, step=step, config=cfg.to_json(), model=model, opt=opt,
                       elapsed=time.perf_counter() - t0, prev_text=good,
                       progress={"recent_train_accuracy": window[-3:], "skipped_nonfinite_steps": stepper.nonfinite,
                                 "loop": cfg.step_loop})
        saved_step, saved_at = step, time.perf_counter()

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    model.train()
    intr = _DeferredInterrupt()
    try:
        metrics_fh = ck.open_metrics(os.path.join(out, METRICS)) if out else None
        with intr:
            while step < end:
                if intr.requested:
                    break
                if cfg.max_seconds is not None and time.perf_counter() - t0 > cfg.max_seconds:
                    stopped_early = True
                    break
                stepper.run(step)        # sets stepper.updating before it changes the parameters
                step += 1
                stepper.updating = False
                if cfg.auto_steps and cfg.max_seconds is not None:
                    if step == 5:
                        sync()
                        t5 = time.perf_counter()
                    elif step == 25 and t5 is not None:
                        sync()
                        per = (time.perf_counter() - t5) / 20
                        left = 0.9 * cfg.max_seconds - (time.perf_counter() - t0)
                        cfg.steps = max(step + 1, min(cfg.steps, step + int(left / per)))
                        stepper.schedule_changed()
                        end = cfg.steps if stop_at is None else min(cfg.steps, stop_at)
                        if bar is not None:
                            bar.total = cfg.steps
                if step % cfg.log_every == 0 or step == cfg.steps:
                    loss, acc, lr = stepper.read()       # the device loop's one host read per log_every steps
                    rec = {"step": step, "loss": loss, "train_accuracy": acc, "lr": lr,
                           "seconds": round(time.perf_counter() - t0, 3)}
                    window = (window + [acc])[-3:]
                    if metrics_fh:
                        metrics_fh.write(json.dumps(rec) + "\n")
                        metrics_fh.flush()
                    if bar is not None:
                        bar.set_postfix(loss=f"{rec['loss']:.3f}", acc=f"{acc:.3f}")
                if evaluation_due(cfg, step):
                    history.append(training_evaluation(model, task, cfg, device, use_amp, step))
                    if metrics_fh:
                        metrics_fh.write(json.dumps(history[-1]) + "\n")
                        metrics_fh.flush()
                if bar is not None:
                    bar.update(1)
                if out and checkpoint_due(cfg, step, saved_at):
                    save()
    finally:
        if bar is not None:
            bar.close()
        if metrics_fh:
            metrics_fh.close()
        if out and not stepper.updating and saved_step != step:
            save()     # the run's end, Ctrl-C, or an error: the state after the last complete step
        stepper.close()
    if intr.requested:
        if out:
            print(f"lrnnkit: interrupted at step {step}; checkpoint saved in {out!r} (run the same command to "
                  "resume)", file=sys.stderr)
        raise KeyboardInterrupt
    seconds = time.perf_counter() - t0
    res = {"task": cfg.task, "config": cfg.to_json(), "steps": step, "seconds": round(seconds, 3),
           "stopped_early": stopped_early, "checkpoint": ckpt_path, "skipped_nonfinite_steps": stepper.nonfinite,
           "train_accuracy": float(np.mean(window[-3:])) if window else None,
           "chance": task.chance, "n_out": task.n_out,
           "parameters": sum(p.numel() for p in model.parameters()), "step_graph": stepper.graph}
    if evaluate_at_end:
        res.update(final_evaluation(model, task, cfg, device, use_amp))
    if cfg.eval_every:
        res["evaluations"] = evaluations_of(history, res if evaluate_at_end else None, step)
    res["_model"] = model
    return res


def final_evaluation(model, task, cfg, device, autocast: bool) -> dict:
    """A finished run's held-out numbers: test, final and scaled accuracy over ``cfg.test_len`` (long test words in
    smaller batches: the same words, the same answers), the accuracy at every prefix of the longest test words, the
    mixture of ``cfg.test_mix`` (key ``test_mix``) when set, and its transition matrices' eigenvalues where it has
    them."""
    ev = _test_words(model, task, cfg, device, autocast)
    out = {"test_accuracy": ev["accuracy"], "final_accuracy": ev["final_accuracy"],
           "scaled_accuracy": ev["scaled_accuracy"], "prefix_accuracy": ev["prefix_accuracy"],
           "eigenvalues": (eigenvalue_summary(model, task, length=min(64, max(cfg.train_len)), seed=0,
                                              device=device) if hasattr(model, "transition_matrices") else None)}
    if cfg.test_mix is not None:
        out["test_mix"] = evaluate_mixture(model, task, *cfg.test_mix, seed=0, batch=eval_batch(cfg),
                                           device=device, autocast=autocast)
    return out


def _test_words(model, task, cfg, device, autocast: bool) -> dict:
    """:func:`.evaluate.evaluate` on the run's test words (``cfg.test_len``, ``cfg.eval_n`` words each, seed 0):
    the one scoring both the final evaluation and the evaluations during training read."""
    return evaluate(model, task, cfg.test_len, n=cfg.eval_n, seed=0, batch=eval_batch(cfg), device=device,
                    autocast=autocast)


def training_evaluation(model, task, cfg, device, autocast: bool, step: int) -> dict:
    """``{"step", "evaluation": {"test_accuracy", "final_accuracy", "scaled_accuracy"}}``: one evaluation during
    training (``cfg.eval_every``) on the final evaluation's words (:func:`final_evaluation`'s first table)."""
    ev = _test_words(model, task, cfg, device, autocast)
    return {"step": int(step), "evaluation": {"test_accuracy": ev["accuracy"], "final_accuracy": ev["final_accuracy"],
                                              "scaled_accuracy": ev["scaled_accuracy"]}}


def evaluations_of(history: list, final: dict | None, step: int) -> list:
    """A result's ``evaluations``: the records of :func:`training_evaluation` (``history``) flattened to ``{"step",
    "test_accuracy", "final_accuracy", "scaled_accuracy"}``, then the final evaluation's (``final``, the result's
    keys; None: not evaluated) at ``step``."""
    out = [{"step": h["step"], **h["evaluation"]} for h in history]
    if final is not None and "test_accuracy" in final:
        out.append({"step": int(step), **{k: final[k] for k in ("test_accuracy", "final_accuracy", "scaled_accuracy")}})
    return out


def best_evaluation(evaluations: list, read) -> dict:
    """The evaluation of ``evaluations`` (:func:`evaluations_of`'s entries) whose number ``read(entry)`` is highest;
    ties: the earliest."""
    return max(evaluations, key=read)


def evaluation_due(cfg, step: int) -> bool:
    """Whether an evaluation during training is due after ``step`` (every ``cfg.eval_every`` steps; the last step's
    is the final evaluation)."""
    return bool(cfg.eval_every) and step % cfg.eval_every == 0 and step < cfg.steps


def checkpoint_due(cfg, step: int, saved_at: float) -> bool:
    """Whether a checkpoint is due after ``step``: every ``cfg.checkpoint_every`` steps, or ``cfg.checkpoint_seconds``
    after the last one (``saved_at``, a ``time.perf_counter()`` reading)."""
    return bool((cfg.checkpoint_every and step % cfg.checkpoint_every == 0) or (
        cfg.checkpoint_seconds and time.perf_counter() - saved_at >= cfg.checkpoint_seconds))
