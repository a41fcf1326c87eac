"""The devices a training, experiment or extraction command runs on: ``cpu``, ``cuda`` or ``cuda:N``, checked as
text before torch sees them (torch turns an unknown name into a RuntimeError, and ``cuda`` on a build without CUDA
into an AssertionError: both were internal errors), in a torch-free module (the parser is built without torch)."""
from __future__ import annotations

import re

from ..errors import MESSAGE_CHARS, InputError

__all__ = ["check_device", "require_device"]

_DEVICE = re.compile(r"cpu|cuda(:\d{1,4})?")


def check_device(name, what: str = "device") -> str:
    """``name`` when it is ``cpu``, ``cuda`` or ``cuda:N`` (N at most 4 digits), else InputError naming it.
    Whether CUDA (and device N) is there is asked only for a CUDA name, when it is used
    (:func:`require_device`)."""
    if not isinstance(name, str) or not _DEVICE.fullmatch(name):
        raise InputError(f"{what} must be cpu, cuda or cuda:N, got {name!r}"[:MESSAGE_CHARS])
    return name


def require_device(name: str, what: str = "device") -> str:
    """``check_device``, then for a CUDA name that torch has CUDA and the device index exists (InputError
    otherwise: "device 'cuda' requested but CUDA is not available")."""
    check_device(name, what)
    if name.startswith("cuda"):
        import torch
        if not torch.cuda.is_available():
            raise InputError(f"{what} {name!r} requested but CUDA is not available")
        idx = int(name[5:]) if ":" in name else 0
        if idx >= torch.cuda.device_count():
            raise InputError(f"{what} {name!r} requested but there are {torch.cuda.device_count()} CUDA devices")
    return name
