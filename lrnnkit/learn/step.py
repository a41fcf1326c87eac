"""One training step, two ways: driven from the host (the loop as it always was) or resident on the device.

Both compute the papers' step (000, App. E.1.1: AdamW, a learning rate warmed up linearly then cosine-annealed to
``min_lr``, or decayed linearly or held constant (:func:`lr_at`), gradient clipping at ``clip``, fresh batches
every step) on the same model; they differ in where the work is issued from.

* :class:`HostStep` (``TrainConfig.loop = "host"``): the batch is drawn with numpy on the CPU
  (:meth:`.tasks.Task.sample`, generator :func:`.tasks.batch_rng`) and copied over; the learning rate is a Python
  float set on the optimizer; the gradient norm is read on the host every step (``bool(isfinite(norm))``) to skip
  a non-finite update; AdamW is torch's default (for-each) implementation.
* :class:`DeviceStep` (``loop = "device"``): nothing in a step waits for the host. The batch is generated on the
  device from a counter-based hash of ``(seed, step)`` (:mod:`.device_sampler`: the same distribution, other random
  numbers); the step counter, the learning-rate schedule (:func:`lr_schedule`, a table indexed on the device) and the
  metrics live in device tensors; a non-finite gradient norm skips the update inside the fused AdamW kernel
  (``found_inf``: the parameters, both moments and the step count stay as they were, exactly what the host loop's
  skip does); on CUDA the whole step -- sampling, forward, backward, clipping, optimizer, counters -- is captured
  once as a CUDA graph and replayed (after :data:`EAGER_STEPS` ordinary steps that warm the kernels and allocate
  the gradients), so a step costs one launch. The batch shape is static: every word is padded to the longest
  training length with the loss masked there (the models are causal, so a padded word's outputs are the unpadded
  word's; what changes is only that a batch whose longest word is shorter than the range's maximum is computed at
  the maximum length). Where capture fails (a mixer that reads the device from the host, e.g. the fixed-point
  layer's host-decided stopping rule with ``sync_free=False``) the same step runs eagerly, still without other host
  synchronisation, and :attr:`DeviceStep.graph` says why.

With ``train_words`` set, both loops read their batches from one fixed training set run for epochs
(:mod:`.dataset`: the same words at the same step in both loops; the device loop's batch is two gathers at an index
computed on the device from the step counter, the epoch orders refilled by the host between steps).

The host reads the device only when it must: every ``log_every`` steps (the logged loss and accuracy are that
step's, as in the host loop), at checkpoints, and when ``auto_steps`` times the first steps.
"""
from __future__ import annotations

import math

import torch
from torch.nn import functional as F

from .tasks import IGNORE, batch_rng

__all__ = ["HostStep", "DeviceStep", "make_step", "fixed_set", "capture", "lr_at", "lr_schedule", "LOOPS",
           "EAGER_STEPS", "SCHEDULES"]

LOOPS = ("host", "device")
EAGER_STEPS = 3     # ordinary steps before the capture: Triton compiles, autotuning, the gradients' first allocation


SCHEDULES = ("cosine", "linear", "constant")


def lr_at(cfg, step: int) -> float:
    """The learning rate of ``step``: a linear warm-up over ``w = int(warmup * steps)`` steps (``lr (s + 1) / w``),
    then, with ``p = (s - w) / max(1, steps - w)`` capped at 1, by ``cfg.schedule`` (a config without the field
    is ``"cosine"``):

    * ``"cosine"``: ``min_lr + (lr - min_lr) (1 + cos(pi p)) / 2`` (000, App. E.1.1: 'cosine annealing ... to
      1e-6 after 10% warm-up steps'); with ``warmup = 0`` and ``min_lr = lr`` it is the constant ``lr``;
    * ``"linear"``: ``lr + (min_lr - lr) p``, a straight line from ``lr`` to ``min_lr`` (003, App. E.2: 'linear
      learning rate decay after a 300 iterations warmup'; the end value is not printed, lrnnkit's is ``min_lr``);
    * ``"constant"``: ``lr`` (004, App. B.2: 'without learning rate scheduling'), after the warm-up if any.
    """
    w = int(cfg.warmup * cfg.steps)
    if step < w:
        return cfg.lr * (step + 1) / w
    p = min(1.0, (step - w) / max(1, cfg.steps - w))
    kind = getattr(cfg, "schedule", "cosine")
    if kind == "constant":
        return cfg.lr
    if kind == "linear":
        return cfg.lr + (cfg.min_lr - cfg.lr) * p
    return cfg.min_lr + 0.5 * (cfg.lr - cfg.min_lr) * (1 + math.cos(math.pi * p))


def lr_schedule(cfg, length: int | None = None) -> torch.Tensor:
    """``lr_at(cfg, s)`` for ``s < length`` (default ``cfg.steps``) as a float64 tensor on the CPU; entries past
    ``cfg.steps`` repeat the last (a schedule cut short by ``auto_steps`` is rewritten into the same table)."""
    n = cfg.steps if length is None else length
    vals = [lr_at(cfg, min(s, cfg.steps - 1)) for s in range(n)]
    return torch.tensor(vals, dtype=torch.float64)


def train_loss(model, x, y, use_amp: bool, cache: bool = True):
    """``(loss, logits)`` of one batch: token-level cross-entropy of ``logits = model(x)`` against ``y``
    (``IGNORE`` labels left out), the forward under bf16 autocast when ``use_amp``. ``cache=False`` turns off
    autocast's weight-cast cache (required inside a CUDA graph capture; the numbers are the same)."""
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=use_amp, cache_enabled=cache):
        logits = model(x)
    return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), y.reshape(-1), ignore_index=IGNORE), logits


def _accuracy(logits, y):
    """(correct, counted) token counts of a batch, as device tensors."""
    m = y != IGNORE
    return ((logits.argmax(-1) == y) & m).sum(), m.sum()


def optimizer(cfg, model, loop: str = "host"):
    """AdamW, weight decay on the matrices only. ``loop="device"``: torch's fused kernel with the learning rate a
    0-dim device tensor (so the schedule can be applied inside a CUDA graph) and ``capturable`` on CUDA."""
    decay = [p for p in model.parameters() if p.ndim >= 2]
    no_decay = [p for p in model.parameters() if p.ndim < 2]
    groups = [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    if loop == "host":
        return torch.optim.AdamW(groups, lr=cfg.lr, betas=(0.9, 0.999), eps=1e-8)
    dev = next(model.parameters()).device
    lr = torch.tensor(float(cfg.lr), dtype=torch.float32, device=dev)
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.999), eps=1e-8, fused=True,
                             capturable=dev.type == "cuda")


def capture(body, device) -> tuple:
    """``(graph, "captured")``: ``body()`` captured once as a CUDA graph (replay it to run the step), or ``(None,
    "eager (capture failed: ...)")`` when the capture raised (the step then runs eagerly)."""
    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g):
            body()
    except Exception as exc:   # noqa: BLE001 - any capture failure falls back to eager steps, said in the label
        torch.cuda.synchronize(device)
        return None, f"eager (capture failed: {type(exc).__name__}: {str(exc).splitlines()[0][:160]})"
    return g, "captured"


class HostStep:
    """The host-driven step (module docstring). ``run(step)`` trains one step; ``read()`` gives the last step's
    ``(loss, train_accuracy, lr)`` as Python numbers; ``nonfinite`` counts skipped updates."""

    def __init__(self, cfg, task, model, opt, device, nonfinite: int = 0):
        self.cfg, self.task, self.model, self.opt, self.device = cfg, task, model, opt, device
        self.use_amp = cfg.bf16 and device.type == "cuda"
        self.nonfinite = nonfinite
        self.graph = None
        self.updating = False     # True from the optimizer update until the loop has counted the step
        self._last = None
        self.fixed = fixed_set(cfg, task, device)

    def run(self, step: int) -> None:
        cfg, opt = self.cfg, self.opt
        if self.fixed is not None:
            x, y = self.fixed.batch_at(step)
        else:
            x, y = self.task.sample(cfg.batch, cfg.train_len, batch_rng(cfg.seed, step))
        x = torch.as_tensor(x, device=self.device)
        y = torch.as_tensor(y, device=self.device)
        lr = lr_at(cfg, step)
        for g in opt.param_groups:
            g["lr"] = lr
        loss, logits = train_loss(self.model, x, y, self.use_amp)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        gnorm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.clip if cfg.clip and cfg.clip > 0
                                               else float("inf"))
        if bool(torch.isfinite(gnorm)):
            self.updating = True
            opt.step()
        else:   # a non-finite gradient would poison every parameter: skip the update, count it
            self.nonfinite += 1
        self._last = (loss, logits, y, lr)

    def read(self) -> tuple:
        loss, logits, y, lr = self._last
        with torch.no_grad():
            c, n = _accuracy(logits, y)
        return float(loss.detach()), float(c) / max(1, int(n)), lr

    def schedule_changed(self) -> None:
        """The step count changed (``auto_steps``): the host loop computes each learning rate when it needs it."""

    def close(self) -> None:
        """Nothing to release."""


class DeviceStep:
    """The device-resident step (module docstring). Same interface as :class:`HostStep`; :attr:`graph` is
    ``"captured"``, ``"eager (cpu)"`` or ``"eager (capture failed: ...)"``."""

    def __init__(self, cfg, task, model, opt, device, nonfinite: int = 0, start: int = 0):
        from .device_sampler import device_sampler
        self.cfg, self.model, self.opt, self.device = cfg, model, opt, device
        self.use_amp = cfg.bf16 and device.type == "cuda"
        self.fixed = fixed_set(cfg, task, device)
        self.sampler = self.fixed if self.fixed is not None else \
            device_sampler(task, cfg.batch, cfg.train_len, cfg.seed, device)
        self.params = [p for g in opt.param_groups for p in g["params"]]
        self.lr = opt.param_groups[0]["lr"]
        if not (torch.is_tensor(self.lr) and self.lr.device == device):
            self.lr = torch.tensor(float(self.lr), dtype=torch.float32, device=device)
        for g in opt.param_groups:       # one learning-rate tensor for every group (a restored group holds a float)
            g["lr"] = self.lr
        self._table_len = cfg.steps
        self.sched = lr_schedule(cfg).to(device=device, dtype=torch.float32)
        self.step_t = torch.tensor(start, dtype=torch.int64, device=device)
        self.nonfinite_t = torch.tensor(nonfinite, dtype=torch.int64, device=device)
        self.loss_t = torch.zeros((), dtype=torch.float32, device=device)
        self.correct_t = torch.zeros((), dtype=torch.int64, device=device)
        self.count_t = torch.zeros((), dtype=torch.int64, device=device)
        self.clip = cfg.clip if cfg.clip and cfg.clip > 0 else float("inf")
        self._eager_left = EAGER_STEPS if device.type == "cuda" else None
        self.graph = "eager (cpu)" if device.type != "cuda" else None
        self._cuda_graph = None
        self.updating = False     # True from the optimizer update until the loop has counted the step
        self._check = getattr(model, "check_tokens", None)
        if self._check is not None:
            model.check_tokens = False      # the sampler's tokens are in range by construction: no host read

    # the step itself: every op on the device, nothing read back
    def _body(self) -> None:
        x, y = self.sampler.sample(self.step_t)
        self.lr.copy_(torch.index_select(self.sched, 0, self.step_t.reshape(1)).reshape(()))
        loss, logits = train_loss(self.model, x, y, self.use_amp, cache=False)
        loss.backward()
        gnorm = torch.nn.utils.clip_grad_norm_(self.params, self.clip, foreach=True)
        bad = ~torch.isfinite(gnorm)
        self.opt.found_inf = bad.to(torch.float32)
        self.updating = True
        self.opt.step()
        with torch.no_grad():
            c, n = _accuracy(logits, y)
            self.loss_t.copy_(loss.detach())
            self.correct_t.copy_(c)
            self.count_t.copy_(n)
            self.nonfinite_t.add_(bad.to(torch.int64))
            self.step_t.add_(1)

    def _capture(self) -> None:
        self.opt.zero_grad(set_to_none=True)      # the gradients are then allocated in the graph's pool
        self._cuda_graph, self.graph = capture(self._body, self.device)
        if self._cuda_graph is None:
            self.opt.zero_grad(set_to_none=True)

    def run(self, step: int) -> None:
        if self.fixed is not None:
            self.fixed.prepare(step)      # the epoch orders this step reads (host side, before the step)
        if self._eager_left == 0 and self.graph is None:
            self._capture()
        if self._cuda_graph is not None:
            self.updating = True
            self._cuda_graph.replay()
            return
        self.opt.zero_grad(set_to_none=True)
        self._body()
        if self._eager_left:
            self._eager_left -= 1

    @property
    def nonfinite(self) -> int:
        return int(self.nonfinite_t)

    def read(self) -> tuple:
        loss, c, n, lr = torch.stack([self.loss_t.double(), self.correct_t.double(), self.count_t.double(),
                                      self.lr.double()]).tolist()
        return loss, c / max(1.0, n), lr

    def schedule_changed(self) -> None:
        """``cfg.steps`` changed: rewrite the schedule table in place (the captured graph reads the same memory)."""
        new = lr_schedule(self.cfg, self._table_len).to(dtype=torch.float32)
        self.sched.copy_(new.to(self.device))

    def close(self) -> None:
        """Give the graph's memory back and let the model check its tokens again."""
        self._cuda_graph = None
        if self._check is not None:
            self.model.check_tokens = self._check


def fixed_set(cfg, task, device):
    """The :class:`.dataset.FixedSet` of a config with ``train_words`` (on ``device``), else None."""
    if getattr(cfg, "train_words", None) is None:
        return None
    from .dataset import FixedSet
    return FixedSet(task, cfg.train_words, cfg.batch, cfg.train_len, [cfg.seed], device)


def make_step(cfg, task, model, opt, device, *, nonfinite: int = 0, start: int = 0):
    """The step object of ``cfg.loop``."""
    if cfg.step_loop == "device":
        return DeviceStep(cfg, task, model, opt, device, nonfinite=nonfinite, start=start)
    return HostStep(cfg, task, model, opt, device, nonfinite=nonfinite)
