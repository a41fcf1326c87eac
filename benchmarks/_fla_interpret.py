"""Running fla 0.6.0's Triton kernels on CPU tensors under triton 3.6's interpreter (``TRITON_INTERPRET=1``), for
diagnosis only. Three things stop them there, each bridged here:

* the autotuner times its candidates with a GPU benchmarker (none on a CPU): the first candidate is kept (the
  interpreter's arithmetic does not depend on num_warps / num_stages; block sizes change only the tiling);
* the interpreter's scalar ``__index__`` calls ``int`` on a one-element array, which numpy 2 refuses;
* inside a kernel, ``range`` yields Python ints, and fla calls ``.to(tl.int64)`` on loop indices: fla's modules get
  a ``range`` that yields int32 scalars of the interpreter while a kernel runs (the builtin otherwise).

What is NOT emulated: bf16. The interpreter stores bf16 as uint16 and its ``tl.dot`` multiplies those integers, so
kernels that feed bf16 tiles to ``tl.dot`` (fla's chunk kernels) return garbage on CPU in bf16; float32 (and float16,
which numpy has) are faithful. On the GPU none of this is used.
"""
from __future__ import annotations

import builtins
import sys

import numpy as np

_STATE = {"enabled": False, "depth": 0}


def enable() -> None:
    """Patch triton's interpreter and autotuner (idempotent); call before fla's first kernel runs."""
    if _STATE["enabled"]:
        return
    import triton.runtime.autotuner as at
    import triton.runtime.interpreter as ip

    run = at.Autotuner.run

    def first_config(self, *args, **kwargs):
        if len(self.configs) > 1:
            self.configs = self.configs[:1]
        return run(self, *args, **kwargs)
    at.Autotuner.run = first_config

    patch_tensor = ip._patch_lang_tensor

    def patch_index(tensor, scope):
        patch_tensor(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(np.asarray(self.handle.data).reshape(-1)[0]))
    ip._patch_lang_tensor = patch_index

    call = ip.GridExecutor.__call__

    def counted(self, *args, **kwargs):
        _STATE["depth"] += 1
        try:
            return call(self, *args, **kwargs)
        finally:
            _STATE["depth"] -= 1
    ip.GridExecutor.__call__ = counted
    _STATE["enabled"] = True


def _range(*args):
    """``range`` for fla's modules: the builtin outside a kernel, int32 interpreter scalars inside one."""
    if not _STATE["depth"]:
        return builtins.range(*args)
    import triton.language as tl
    import triton.runtime.interpreter as ip
    return (tl.core.tensor(ip.TensorHandle(np.array([i], dtype=np.int32), tl.int32), tl.int32)
            for i in builtins.range(*[int(a) for a in args]))


def patch_fla_ranges() -> None:
    """Give every imported fla kernel module the ``range`` above; call after importing the fla modules used."""
    for name, mod in list(sys.modules.items()):
        if mod is not None and (name.startswith("fla.ops") or name.startswith("fla.modules")):
            mod.__dict__["range"] = _range
