"""GPU shares of train points (``num_gpus = "auto"``): each Ray task asks for the fraction of one card that its run
needs, so small runs pack densely and a big one gets a card to itself, and no run takes memory its share does not
hold.

Share of a point, from its peak ``m`` (bytes, :func:`peak_bytes`) and the card's memory ``M`` (bytes)::

    share = min(1, max(1/16, ceil(16 * SAFETY * (m + CONTEXT_BYTES) / M) / 16))

with ``SAFETY = 1.25`` (the caching allocator's fragmentation and what one measured step misses) and
``CONTEXT_BYTES`` = 512 MiB (each worker process's CUDA context and kernel images: outside torch's allocator
accounting). The shares lie on the grid of sixteenths, exact in binary floating point, so Ray's sums of them are
exact: at most 16 runs share a card.

``m`` is measured, not modelled (:func:`lrnnkit.learn.memory.peak_bytes`: one training step and one evaluation
batch at the point's largest shapes): on the driver's GPU when it has one (``torch.cuda.max_memory_allocated``,
exact for that step); otherwise on the CPU by counting the live tensor storages of the same step, an estimate of
the GPU's figure (float32 where CUDA runs bf16 autocast, reference recurrences where CUDA runs fused kernels; its
error against the GPU's is what ``benchmarks/bench_sweep.py --packing`` prints). Measurements are
cached per distinct shape-relevant configuration (the config without the fields that do not change a tensor's
size: seed, steps, learning-rate schedule, checkpoint and logging cadence, ...).

The card's memory ``M``: the spec's ``gpu_memory_gb`` (GiB, 2^30 bytes) when given, else
``torch.cuda.get_device_properties(0).total_memory`` of the driver's first GPU; without either, one
:class:`~lrnnkit.errors.InputError`.

A share is enforced, not only booked: a worker given a share below one card caps its process's allocator at
``share - CONTEXT_BYTES / M`` of the card (:func:`cap_process_memory`), so a run that needs more than its share
fails itself with an out-of-memory error instead of starving the runs beside it. The Ray executor then retries it
with twice the share (up to a whole card); a run out of memory on a whole card is recorded ``oom``
(:mod:`lrnnkit.sweep.executors`).
"""
from __future__ import annotations

import math
from fractions import Fraction

from ..errors import InputError
from .spec import canonical_json

__all__ = ["gpu_share", "card_bytes", "point_shares", "cap_process_memory", "is_oom", "GRID", "SAFETY",
           "CONTEXT_BYTES"]

GRID = 16                    # shares are multiples of 1/GRID of a card
SAFETY = Fraction(5, 4)
CONTEXT_BYTES = 512 * 2**20

# TrainConfig fields that change no tensor's size: points that differ only in them share one measurement
_NO_SHAPE = ("seed", "steps", "lr", "weight_decay", "warmup", "min_lr", "clip", "max_seconds", "auto_steps",
             "checkpoint_every", "checkpoint_seconds", "log_every", "eig_range", "device", "replicate")

_cache: dict = {}


def gpu_share(peak: int, card: int, safety=SAFETY) -> Fraction:
    """The share of a card of ``card`` bytes for a run of peak ``peak`` bytes (module docstring), exactly."""
    if card <= 0 or peak < 0:
        raise ValueError(f"need card > 0 and peak >= 0 bytes, got {card}, {peak}")
    k = math.ceil(Fraction(safety) * (peak + CONTEXT_BYTES) * GRID / card)
    return Fraction(min(GRID, max(1, k)), GRID)


def card_bytes(spec) -> int:
    """The memory of one GPU: the spec's ``gpu_memory_gb`` (GiB), else the driver's first CUDA device's."""
    if spec.gpu_memory_gb is not None:
        return int(spec.gpu_memory_gb * 2**30)
    import torch
    if not torch.cuda.is_available():
        raise InputError(f"sweep spec {spec.source!r}: num_gpus = \"auto\" needs gpu_memory_gb (the memory of one "
                         "GPU, GiB) when this machine sees no CUDA device")
    return int(torch.cuda.get_device_properties(0).total_memory)


def _shape_key(point: dict) -> str:
    return canonical_json({k: v for k, v in point.items() if k not in _NO_SHAPE})


def peak_bytes(point: dict) -> int:
    """Measured peak bytes of a train point (:func:`lrnnkit.learn.memory.peak_bytes`; module docstring), on the
    driver's GPU when it has one, else on its CPU; cached per shape-relevant configuration."""
    key = _shape_key(point)
    if key not in _cache:
        import torch
        from ..learn.memory import peak_bytes as measure
        from ..learn.train import TrainConfig
        params = {k: v for k, v in point.items() if k != "replicate"}
        params["device"] = "cuda" if torch.cuda.is_available() else "cpu"
        try:
            _cache[key] = measure(TrainConfig(**params))
        except Exception as exc:  # noqa: BLE001 - a probe that does not fit: the run gets a whole card
            if not is_oom(exc):
                raise
            _cache[key] = None
    return _cache[key]


def point_shares(spec, points: dict) -> dict:
    """``{index: share}`` (floats on the 1/16 grid) for ``points`` = ``{index: point}`` of a spec with
    ``num_gpus = "auto"``; a point whose probe ran out of memory gets a whole card."""
    card = card_bytes(spec)
    out = {}
    for i, p in points.items():
        peak = peak_bytes(p)
        out[i] = 1.0 if peak is None else float(gpu_share(peak, card))
    return out


def is_oom(exc: BaseException) -> bool:
    """An out-of-memory error: ``torch.cuda.OutOfMemoryError`` (matched by class name, so torch need not be
    imported and tests can raise their own), or Python's ``MemoryError``."""
    return isinstance(exc, MemoryError) or any(c.__name__ == "OutOfMemoryError" for c in type(exc).__mro__)


def cap_process_memory(share: float) -> None:
    """In a worker given ``share`` of a GPU: cap this process's CUDA allocator at ``share`` of the card less its
    CUDA context (module docstring); nothing without CUDA or for a whole card."""
    if share >= 1:
        return
    import torch
    if not torch.cuda.is_available():
        return
    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.set_per_process_memory_fraction(max(1 / GRID / 2, share - CONTEXT_BYTES / total), 0)
