"""Allocation failures as answers: memory that a legal size cannot get on this machine (CPU or GPU) ends in one line
naming the size asked for and the settings to lower, exit status 2 (:class:`~lrnnkit.errors.OutOfMemory`), not
"internal error ... please report it". The error stays a ``MemoryError`` as well, so a sweep still records the point
as ``oom`` and, on Ray, retries it with a larger share of the GPU (:func:`lrnnkit.sweep.packing.is_oom`).

Recognised: Python's ``MemoryError`` (numpy: "Unable to allocate 3.00 GiB for an array ..."), torch's
``OutOfMemoryError`` (CUDA: "Tried to allocate 2.00 GiB"), and torch's CPU allocator's ``RuntimeError``
("DefaultCPUAllocator: can't allocate memory: you tried to allocate 1610612736 bytes").
"""
from __future__ import annotations

import re
from contextlib import contextmanager

from ..errors import OutOfMemory

__all__ = ["allocation_failure", "memory_named"]

_BYTES = re.compile(r"(?:tried to allocate|Tried to allocate|Unable to allocate) ([\d.]+ ?(?:[KMGTP]i?B|bytes))")


def _gib(text: str) -> str:
    m = re.fullmatch(r"(\d+) ?bytes", text)
    return f"{int(m.group(1)) / 2 ** 30:.2f} GiB" if m else text


def allocation_failure(exc: BaseException) -> str | None:
    """``"2.00 GiB on the GPU"`` (or ``"... on the CPU"``, ``"memory"`` when no size is stated) when ``exc`` is an
    allocation failure (module docstring), else None."""
    names = {c.__name__ for c in type(exc).__mro__}
    text = str(exc)
    if "OutOfMemoryError" in names:
        where = "on the GPU"
    elif isinstance(exc, MemoryError) or (isinstance(exc, RuntimeError) and "can't allocate memory" in text):
        where = "on the CPU"
    else:
        return None
    m = _BYTES.search(text)
    return f"{_gib(m.group(1)) if m else 'memory'} {where}"


@contextmanager
def memory_named(what: str, lower: str):
    """``with memory_named("training", "--batch (64) or ..."):`` -- an allocation failure inside becomes
    :class:`~lrnnkit.errors.OutOfMemory`: ``out of memory: training could not get 1.50 GiB on the CPU; lower
    --batch ...``; one raised by an inner block is said again in this block's words (the outermost names the
    settings its caller can change). Other exceptions pass unchanged."""
    try:
        yield
    except (MemoryError, RuntimeError) as exc:
        got = getattr(exc, "got", None) or allocation_failure(exc)
        if got is None:
            raise
        err = OutOfMemory(f"out of memory: {what} could not get {got}; lower {lower}")
        err.got = got
        raise err from None
