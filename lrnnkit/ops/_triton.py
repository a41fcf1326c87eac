"""Import Triton, in interpreter mode when no GPU is present.

Triton decides at ``@triton.jit`` time whether a kernel is compiled or interpreted (``TRITON_INTERPRET=1``), so
this module sets ``TRITON_INTERPRET=1`` before importing triton when CUDA is unavailable and the variable is not
set: the same kernels then run on CPU tensors (slowly), which is how the test suite checks them. Every kernel
module imports triton through here.
"""
from __future__ import annotations

import os

import torch

if not torch.cuda.is_available() and "TRITON_INTERPRET" not in os.environ:
    os.environ["TRITON_INTERPRET"] = "1"

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from ..errors import InputError

INTERPRET = os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def _fix_interpreter_index() -> None:
    """Work around a triton 3.6 interpreter bug under numpy >= 2.4: the interpreter turns a scalar kernel argument
    into a 1-element 1-d array and converts it with ``int(array)``, which numpy 2.4 refuses, so ``range(T)`` over a
    runtime ``T`` fails. We re-patch ``tensor.__index__`` to read the single element. Interpreter only; compiled
    kernels are unaffected. (Checked: triton/runtime/interpreter.py, _patch_lang_tensor.)"""
    from triton.runtime import interpreter as _interp
    orig = getattr(_interp, "_patch_lang_tensor", None)
    if orig is None or getattr(orig, "_lrnnkit_fixed", False):
        return

    def patched(tensor, scope):
        orig(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.reshape(-1)[0]))

    patched._lrnnkit_fixed = True
    _interp._patch_lang_tensor = patched


if INTERPRET:
    _fix_interpreter_index()

TL_DTYPE = {torch.float64: tl.float64, torch.float32: tl.float32, torch.float16: tl.float16,
            torch.bfloat16: tl.bfloat16}


def check_device(*xs: torch.Tensor) -> None:
    """Compiled Triton needs CUDA tensors; the interpreter needs CPU tensors."""
    for x in xs:
        if x is None:
            continue
        if INTERPRET and x.device.type != "cpu":
            raise InputError(f"Triton runs in interpreter mode (TRITON_INTERPRET=1): give CPU tensors, got {x.device}")
        if not INTERPRET and x.device.type != "cuda":
            raise InputError(f"compiled Triton kernels need CUDA tensors, got a tensor on {x.device}")


def row_blocks(N: int, D: int, elements: int = 4096):
    """The launch of a row-wise kernel (l2norm, RMSNorm) over N rows of width D: ``(BR, BD, programs)``, BD the
    padded width (the next power of two >= D) and BR rows a program, about ``elements`` elements each."""
    BD = triton.next_power_of_2(D)
    BR = max(1, min(triton.next_power_of_2(N), elements // BD))
    return BR, BD, triton.cdiv(N, BR)


__all__ = ["triton", "tl", "INTERPRET", "TL_DTYPE", "check_device", "row_blocks"]
