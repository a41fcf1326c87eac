"""The fused paths of the training step that a benchmark turns on and off to measure before and after in one
process: each a module attribute of lrnnkit read at call time.

* ``gate``: :data:`lrnnkit.ops.diagonal.gated.FUSED_ON_CUDA` (the diagonal mixer's gate, scan and output gate in two
  Triton kernels, or the torch expression around the Triton scan);
* ``conv``: :data:`lrnnkit.learn.batched.CONV_IN_PLACE_ON_CUDA` (the batched short convolution with each run's taps
  in place, or the runs' channels side by side);
* ``norm``: :data:`lrnnkit.learn.batched.RMS_FUSED_ON_CUDA` (the batched scale-safe RMSNorm in one Triton pass each
  way, or the torch expression);
* ``selective``: :data:`lrnnkit.ops.diagonal.selective.FUSED_ON_CUDA` (the Mamba block's selective scan and readout
  in two Triton kernels, or the torch expression around the diagonal scan).
"""
from __future__ import annotations

import contextlib
import importlib

#: name -> (module, attribute)
SWITCHES = {"gate": ("lrnnkit.ops.diagonal.gated", "FUSED_ON_CUDA"),
            "conv": ("lrnnkit.learn.batched", "CONV_IN_PLACE_ON_CUDA"),
            "norm": ("lrnnkit.learn.batched", "RMS_FUSED_ON_CUDA"),
            "selective": ("lrnnkit.ops.diagonal.selective", "FUSED_ON_CUDA")}


def _slot(name: str):
    mod, attr = SWITCHES[name]
    return importlib.import_module(mod), attr


def state() -> dict:
    """name -> whether that fused path is on now."""
    return {n: bool(getattr(*_slot(n))) for n in SWITCHES}


@contextlib.contextmanager
def switched(**on):
    """Inside: each named fused path (``gate=True``, ``norm=False``, ...; None leaves it) set as given; after: as it
    was (a benchmark's ``main`` may run inside a test's process)."""
    bad = [n for n in on if n not in SWITCHES]
    if bad:
        raise ValueError(f"unknown fused path(s) {', '.join(bad)} (known: {', '.join(SWITCHES)})")
    saved = {n: getattr(*_slot(n)) for n in SWITCHES}
    try:
        for n, v in on.items():
            if v is not None:
                setattr(*_slot(n), bool(v))
        yield
    finally:
        for n, v in saved.items():
            setattr(*_slot(n), v)
