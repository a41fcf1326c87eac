"""Peak memory of a training run, measured on one step: how much of a GPU a run of :mod:`lrnnkit.learn.train`
needs (the sweep packs several runs on one card by it, :mod:`lrnnkit.sweep.packing`).

:func:`peak_bytes` builds the run's model on the config's device and runs what a run holds at its largest: ONE
training step (forward, backward, AdamW step: weights, gradients and both moment buffers live) on a batch of
``batch`` words of the longest training length, then ONE evaluation forward (no gradients) on a batch of the
evaluation batch size at the longest test length, as :func:`lrnnkit.learn.train.train` runs them (bf16 autocast
on CUDA when ``bf16``). The answer is the peak of the bytes held by tensors during both:

* on CUDA, ``torch.cuda.max_memory_allocated`` over the probe, less what was allocated before it (torch's own
  accounting of the caching allocator's live blocks: exact for this step; the allocator's cached but unused
  blocks, fragmentation and the process's CUDA context are not in it -- :mod:`lrnnkit.sweep.packing` adds the
  context and a safety factor);
* on CPU, the peak of the bytes of the live tensor storages (every storage an operator returns is counted once
  until it is freed; :class:`LiveBytes`). It is the same step on the CPU code path: float32 activations (CUDA's
  bf16 autocast keeps some in half the bytes) and torch's reference recurrences instead of the fused kernels, so
  it is an estimate of the GPU's figure, not a measurement of it; the kernels' own workspaces are not in it. As
  a count of CPU memory it agrees with torch's own tracker (``torch.distributed._tools.mem_tracker.MemTracker``)
  within 0.5% on a training step of DeltaNet and DeltaProduct (``proofs_tests/learn/test_memory.py``); its error
  against the GPU's figure is what ``benchmarks/bench_sweep.py --packing`` prints beside the runs' peaks.

Later steps allocate the same shapes (lengths are sampled below the longest), so one step's peak is the run's,
up to the allocator's fragmentation.
"""
from __future__ import annotations

import dataclasses

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from .dataset import resident_bytes
from .tasks import batch_rng, make_task

__all__ = ["peak_bytes", "LiveBytes"]


class LiveBytes(TorchDispatchMode):
    """While active: ``peak`` = the largest number of bytes held at once by the storages that operators returned
    inside it (a storage shared by views is counted once; a storage is released when torch frees it)."""

    def __init__(self):
        super().__init__()
        from torch.multiprocessing.reductions import StorageWeakRef
        self._ref = StorageWeakRef
        self._live: dict = {}       # storage id -> (weak ref, bytes)
        self.now = 0
        self.peak = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for key in [k for k, (ref, _) in self._live.items() if ref.expired()]:
            self.now -= self._live.pop(key)[1]
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor) and t.device.type != "meta":
                st = t.untyped_storage()
                ref = self._ref(st)
                if ref.cdata not in self._live:
                    self._live[ref.cdata] = (ref, st.nbytes())
                    self.now += st.nbytes()
        self.peak = max(self.peak, self.now)
        return out


def _probe(cfg) -> None:
    """One training step at the longest training length and one evaluation batch at the longest test length."""
    from .step import lr_at, train_loss
    from .train import build, eval_batch
    task, model, opt = build(cfg)
    device = torch.device(cfg.device)
    amp = cfg.bf16 and device.type == "cuda"
    x, y = task.sample(cfg.batch, max(cfg.train_len), batch_rng(cfg.seed, 0))
    x, y = torch.as_tensor(x, device=device), torch.as_tensor(y, device=device)
    for g in opt.param_groups:
        g["lr"] = lr_at(cfg, 0)
    loss, logits = train_loss(model, x, y, amp)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    del loss, logits, x, y
    eb = min(eval_batch(cfg), cfg.eval_n)          # evaluate() runs n words in slices of this batch
    xe, _ = task.sample(eb, max(cfg.test_len), batch_rng(0, max(cfg.test_len), stream=1))
    model.eval()
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
        model(torch.as_tensor(xe, device=device)).argmax(-1)


def peak_bytes(cfg) -> int:
    """Peak bytes held by tensors during one training step and one evaluation batch of ``cfg`` (a
    :class:`~lrnnkit.learn.train.TrainConfig`) on ``cfg.device`` (module docstring: measured by the CUDA
    allocator on a GPU, by :class:`LiveBytes` on the CPU), plus a fixed training set's bytes where the run has one
    (``cfg.train_words``: :func:`lrnnkit.learn.dataset.resident_bytes`, held on the device for the whole run; the
    probe draws fresh words). Raises ``torch.cuda.OutOfMemoryError`` when the probe itself does not fit."""
    cfg = dataclasses.replace(cfg)
    held = fixed_set_bytes(cfg)
    if torch.device(cfg.device).type == "cuda":
        torch.cuda.empty_cache()
        before = torch.cuda.memory_allocated(cfg.device)
        torch.cuda.reset_peak_memory_stats(cfg.device)
        try:
            _probe(cfg)
            return int(torch.cuda.max_memory_allocated(cfg.device) - before) + held
        finally:
            torch.cuda.empty_cache()
    with LiveBytes() as mode:
        _probe(cfg)
    return int(mode.peak) + held


def fixed_set_bytes(cfg) -> int:
    """The bytes of ``cfg``'s fixed training set on its device (0 for fresh batches): :func:`.dataset.resident_bytes`
    of one run."""
    if getattr(cfg, "train_words", None) is None:
        return 0
    return resident_bytes(make_task(cfg.task), cfg.train_words, cfg.train_len)
