"""Kernel settings of the chunked GH product chosen ahead of time per GPU and shape: the table
``lrnnkit/data/gh_tiles.json``, written by benchmarks/tune_gh_configs.py on the GPU it names and read once, at import.
A call looks its entry up by (GPU architecture, product mode, key and value widths the kernels run at): no sweep at
the first call, and where the table has no entry the built-in tables of :mod:`.wy_config` stay in force.

File format: ``{"format": 1, "entries": {"sm90/bf16/128x128": {"state_bwd": [64, 4, 3], ...}, ...}}``: architecture
``sm<major><minor>`` of ``torch.cuda.get_device_capability``, product mode one of :data:`MODES`, widths ``KxV``;
each setting a kernel-table key of :data:`lrnnkit.ops.gh.wy_config.CONFIG` with a value of the same kind
((value block, warps[, stages]), a key block, a warp count), or ``chunk``: the chunk size a call that names none
runs (16, 32 or 64; :func:`lrnnkit.ops.gh.wy_config.default_chunk`), the one the entry's other settings were chosen
at. Anything else is refused at import (an InputError naming the entry)."""
from __future__ import annotations

import json
import os

import torch

from ...errors import InputError
from ...fileio import read_regular
from ...limits import MAX_FILE_BYTES

MODES = ("bf16", "fp16", "tf32x3", "tf32", "ieee", "fp64")
PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "data",
                    "gh_tiles.json")
# (block, warps[, stages])
TILES = ("state_fwd", "state_rec", "state_bwd", "dqkwg", "wy_bwd", "output", "dqkwy", "dqkwy_once")
INTS = ("dqkwg_bk", "wy_bk", "dqkwy_bk", "t_warps")
CHUNK = "chunk"             # not a kernel-table key: the chunk size (chunk_gh's chunk_size) the entry runs at
CHUNKS = (16, 32, 64)       # the chunk sizes the kernels run (lrnnkit.ops.gh.wy.chunk_gh_triton refuses others)
#: settings that take one of a few values: the T pass's substitution blocks (tiles._tinv's SUB), the chunk size
CHOICES = {"t_sub": (4, 8, 16), CHUNK: CHUNKS}
_POW2 = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def key(arch: str, mode: str, K: int, V: int) -> str:
    """The table key of one GPU architecture, product mode and pair of run widths."""
    return f"{arch}/{mode}/{K}x{V}"


def check_setting(name: str, value, where: str):
    """The setting ``name`` = ``value`` as the kernel tables hold it (a tuple for tiles); an InputError naming
    ``where`` unless it is a kernel-table key with a value of its kind (powers of two, at most 3 stages...)."""
    if name in TILES:
        ok = (isinstance(value, (list, tuple)) and len(value) in (2, 3)
              and all(isinstance(x, int) and not isinstance(x, bool) for x in value)
              and value[0] in _POW2[4:] and value[1] in (1, 2, 4, 8, 16) and (len(value) == 2 or 1 <= value[2] <= 5))
        if ok:
            return tuple(value)
        raise InputError(f"{where}: {name} must be [value block, warps] or [value block, warps, stages] (powers of "
                         f"two, 1..5 stages), got {value!r}")
    if name in INTS or name in CHOICES:
        allowed = CHOICES.get(name, _POW2)
        if isinstance(value, int) and not isinstance(value, bool) and value in allowed:
            return value
        raise InputError(f"{where}: {name} must be " + (f"one of {', '.join(map(str, allowed))}" if name in CHOICES
                                                         else "a power of two") + f", got {value!r}")
    raise InputError(f"{where}: unknown kernel setting {name!r} (known: {', '.join(TILES + INTS + tuple(CHOICES))})")


def parse(text: str, where: str = PATH) -> dict:
    """The entries of a table file's text: {key: {setting: value}}; an InputError naming the first bad part."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise InputError(f"{where}: not JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != 1 or not isinstance(doc.get("entries"), dict):
        raise InputError(f"{where}: expected {{\"format\": 1, \"entries\": {{...}}}}")
    out = {}
    for k, entry in doc["entries"].items():
        parts = k.split("/")
        widths = parts[2].split("x") if len(parts) == 3 else []
        if not (len(parts) == 3 and parts[0].startswith("sm") and parts[0][2:].isdigit() and parts[1] in MODES
                and len(widths) == 2 and all(w.isdigit() and int(w) > 0 for w in widths)):
            raise InputError(f"{where}: entry key {k!r} is not arch/mode/KxV (e.g. sm90/bf16/128x128; modes "
                             f"{', '.join(MODES)})")
        if not isinstance(entry, dict):
            raise InputError(f"{where}: entry {k!r} must be an object of kernel settings")
        out[k] = {name: check_setting(name, val, f"{where} {k}") for name, val in entry.items()}
    return out


def load(path: str = PATH) -> dict:
    """The entries of the table file at ``path`` ({} when there is none)."""
    if not os.path.exists(path):
        return {}
    return parse(read_regular(path, MAX_FILE_BYTES, "kernel tile table").decode("utf-8", "replace"), path)


ENTRIES = load()
_ARCH: dict = {}


def arch(device) -> str:
    """``sm<major><minor>`` of a CUDA device, "cpu" otherwise (the interpreter: no entry applies)."""
    device = torch.device(device)
    if device.type != "cuda":
        return "cpu"
    idx = device.index if device.index is not None else torch.cuda.current_device()
    if idx not in _ARCH:
        major, minor = torch.cuda.get_device_capability(idx)
        _ARCH[idx] = f"sm{major}{minor}"
    return _ARCH[idx]


def mode(dtype, fp32_mode: str) -> str:
    """The product mode of inputs of ``dtype`` (``fp32_mode``: the float32 product mode in force)."""
    return {torch.bfloat16: "bf16", torch.float16: "fp16", torch.float64: "fp64"}.get(dtype, fp32_mode)


def entry(dtype, fp32_mode: str, K: int, V: int, device) -> dict:
    """The tuned settings of one call ({} where the table has none)."""
    return ENTRIES.get(key(arch(device), mode(dtype, fp32_mode), K, V), {})
