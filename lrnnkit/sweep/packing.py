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
exact for that step), in a child process of the driver, so that no CUDA context of the driver stays on the card
while the runs use it; otherwise on the CPU by counting the live tensor storages of the same step, an estimate of
the GPU's figure (float32 where CUDA runs bf16 autocast, reference recurrences where CUDA runs fused kernels; its
error against the GPU's is what ``benchmarks/bench_sweep.py --packing`` prints). Measurements are
cached per distinct shape-relevant configuration (the config without the fields that do not change a tensor's
size: seed, steps, learning-rate schedule, checkpoint and logging cadence, ...).

The card's memory ``M``: the spec's ``gpu_memory_gb`` (GiB, 2^30 bytes) when given, else
``torch.cuda.get_device_properties(0).total_memory`` of the driver machine's first GPU (read by the same child
process); without either, one :class:`~lrnnkit.errors.InputError`.

A share is enforced, not only booked: a worker given a share below one card caps its process's allocator at
``share - CONTEXT_BYTES / M`` of the card (:func:`cap_process_memory`), so a run that needs more than its share
fails itself with an out-of-memory error instead of starving the runs beside it. The Ray executor then retries it
with twice the share (up to a whole card); a run out of memory on a whole card is recorded ``oom``
(:mod:`lrnnkit.sweep.executors`).
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from fractions import Fraction

from ..errors import InputError
from .spec import canonical_json

__all__ = ["gpu_share", "point_shares", "cap_process_memory", "is_oom", "GRID", "SAFETY",
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


def _shape_key(point: dict) -> str:
    return canonical_json({k: v for k, v in point.items() if k not in _NO_SHAPE})


def _measure(params_list: list) -> list:
    """Peak bytes of each config (None: the probe ran out of memory, the run gets a whole card)."""
    from ..learn.memory import peak_bytes as measure
    from ..learn.train import TrainConfig
    out = []
    for params in params_list:
        try:
            out.append(measure(TrainConfig(**params)))
        except Exception as exc:  # noqa: BLE001 - only an out-of-memory error is an answer here
            if not is_oom(exc):
                raise
            out.append(None)
    return out


def _child_main() -> None:
    """The child process of :func:`measure_in_child`: JSON ``{"configs": [...], "device": ...}`` on stdin, JSON
    ``{"card": bytes or null, "peaks": [...]}`` (or ``{"error": message}``) as the last line of stdout."""
    doc = json.loads(sys.stdin.read())
    try:
        peaks = _measure([{**c, "device": doc["device"]} for c in doc["configs"]])
        import torch
        card = torch.cuda.get_device_properties(0).total_memory if doc["device"] == "cuda" else None
        out = {"card": card, "peaks": peaks}
    except InputError as exc:
        out = {"error": str(exc)}
    print(json.dumps(out))


def measure_in_child(configs: list, device: str) -> tuple:
    """``(card bytes or None, [peak bytes or None])``: the configs (TrainConfig fields) measured on ``device`` in
    a fresh Python process, whose CUDA context ends with it (module docstring)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(x for x in (root, os.environ.get("PYTHONPATH")) if x))
    proc = subprocess.run([sys.executable, "-c", "from lrnnkit.sweep.packing import _child_main; _child_main()"],
                          input=json.dumps({"configs": configs, "device": device}), capture_output=True, text=True,
                          env=env, check=False)
    try:
        doc = json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise RuntimeError(f"the memory probe process failed (exit {proc.returncode}): "
                           f"{proc.stderr.strip()[-800:]}") from None
    if "error" in doc:
        raise InputError(doc["error"])
    return doc["card"], doc["peaks"]


def _params(point: dict, device: str) -> dict:
    return {**{k: v for k, v in point.items() if k != "replicate"}, "device": device}


def peak_bytes(point: dict) -> int | None:
    """Peak bytes of a train point (:func:`lrnnkit.learn.memory.peak_bytes`; module docstring), cached per
    shape-relevant configuration; measured here on the CPU when not cached (:func:`point_shares` fills the cache
    from the GPU first where there is one). None: the probe ran out of memory."""
    key = _shape_key(point)
    if key not in _cache:
        _cache[key] = _measure([_params(point, "cpu")])[0]
    return _cache[key]


def point_shares(spec, points: dict) -> dict:
    """``{index: share}`` (floats on the 1/16 grid) for ``points`` = ``{index: point}`` of a spec with
    ``num_gpus = "auto"``: measured on the driver machine's GPU (in a child process) when it has one, else on
    its CPU with the spec's ``gpu_memory_gb``; a point whose probe ran out of memory gets a whole card."""
    import torch
    cuda = torch.cuda.is_available()
    card = None if spec.gpu_memory_gb is None else int(spec.gpu_memory_gb * 2**30)
    if card is None and not cuda:
        raise InputError(f"sweep spec {spec.source!r}: num_gpus = \"auto\" needs gpu_memory_gb (the memory of one "
                         "GPU, GiB) when this machine sees no CUDA device")
    if cuda:
        todo = {}
        for p in points.values():
            if _shape_key(p) not in _cache:
                todo[_shape_key(p)] = _params(p, "cuda")
        if todo or card is None:
            total, peaks = measure_in_child(list(todo.values()), "cuda")
            _cache.update(zip(todo, peaks))
            card = card if card is not None else int(total)
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
