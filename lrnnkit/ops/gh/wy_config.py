"""Kernel settings of the chunked GH product (:mod:`.wy`), chosen here and nowhere else: the float32 product mode
(:data:`FP32_PRECISION`, :func:`fp32_mode`), the tile table of an input dtype (:func:`config_table`) and how a
kernel's entry is read (:func:`_settings`), the operand / accumulation / storage dtypes (:func:`_config`), the
chunk size run when none is given (:func:`default_chunk`) and the head widths the compiled kernels run at
(:func:`_padded`). A call's entry in the table chosen ahead of time per GPU (:mod:`.wy_tuned`) goes over the tile
table of its dtype."""
from __future__ import annotations

import torch

from .._checks import acc_dtype
from .._triton import INTERPRET
from ...errors import InputError
from . import wy_tuned

FP32_MODES = ("tf32x3", "tf32", "ieee")
FP32_PRECISION = "tf32x3"   # the float32 product mode of a call that names none (fp32_mode)
# (value block, warps) per kernel for 2-byte inputs, from the H100 sweeps of benchmarks/bench_kernels.py --sweep,
# benchmarks/profile_gh.py --sweep / --set (K = V = 128; RESULTS.md "kernels");
# float32 / float64 tiles take twice / four times the registers and shared memory, so they run one pipeline stage
# unless an entry names two, and smaller blocks. Every setting listed in proofs_tests/ops/gh/test_wy.py
# (test_every_kernel_setting_compiled) gave right gradients compiled on an H100, or did not fit and says so.
# A kernel's entry is (value block, warps) or (value block, warps, pipeline stages); "state_fwd" is the one-pass
# forward's state pass (outputs inside), "state_rec" the state pass that stores S_n and U' (the backward's, and the
# split forward's), "output" the split forward's output kernel. "split": the forward stores S_n and U' and forms
# the outputs chunk-parallel (_output_kernel) instead of inside the state pass (float32: RESULTS.md "kernels",
# record D). "wy_bk": the WY backward's key block. "keep" (the default of chunk_gh's
# ``keep_states``; implies the split forward): the backward takes the split forward's S_n and U' instead of
# recomputing them -- faster float32 fwd+bwd (RESULTS.md "kernels"), for K V / C + V more saved numbers per
# position and head (384 at K = V = 128, C = 64: three times the size of q),
# which is why it is off by default (fla recomputes too). "fuse" / "fuse_gated" (without / with a gate): the
# backward's dq/dk part and WY part in one kernel (_dqk_wy_kernel, tiles "dqkwy", key block "dqkwy_bk") instead of
# two (_dqkwg_kernel, _wy_bwd_kernel); chosen by the H100 measurements of RESULTS.md "kernels", record F.
# "once" (where the fused backward runs): _dqk_wy_once_kernel (tiles "dqkwy_once") instead of _dqk_wy_kernel, the
# whole key width as one block so that U', dO, dY and k are read once and dk's float32 partial sum never goes to
# memory (benchmarks/_floor.py: at B=8 T=4096 H=16 K=V=128 bf16 n_h=1, 2.75 GB as written -> 1.68 GB). On for 2-byte
# inputs: on an H200 the stage took 0.80 / 1.52 / 2.27 ms against 0.93 / 1.86 / 2.78 ms at n_h = 1 / 2 / 3, the
# same gradients bit for bit; off for float32 (tf32: 6.2 ms against 3.6, the float32 tiles of the whole key width
# spill) -- benchmarks/bench_kernels.py --sections once, RESULTS.md "kernels". "t_sub": the diagonal blocks the T
# pass inverts by substitution before it merges them by products (tiles._tinv: 16, or 4 / 8 with one more merge;
# written on the CPU and not yet timed on a GPU: 16 until the tuner, benchmarks/tune_gh_configs.py, picks another).
CONFIG = {"state_fwd": (64, 4), "state_rec": (64, 4), "state_bwd": (64, 4), "dqkwg": (64, 8), "dqkwg_bk": 128,
          "wy_bwd": (32, 4), "wy_bk": 64, "t_warps": 2, "t_sub": 16, "output": (64, 4), "split": False,
          "keep": False, "fuse": True, "fuse_gated": False, "dqkwy": (64, 8, 3), "dqkwy_bk": 128,
          "once": True, "dqkwy_once": (64, 8, 2)}
CONFIG_WIDE = {"state_fwd": (64, 4), "state_rec": (64, 4), "state_bwd": (64, 4), "dqkwg": (32, 4), "dqkwg_bk": 64,
               "wy_bwd": (32, 4), "wy_bk": 32, "t_warps": 4, "t_sub": 16, "output": (64, 4), "split": True,
               "keep": False, "fuse": False, "fuse_gated": False, "dqkwy": (32, 4), "dqkwy_bk": 32,
               "once": False, "dqkwy_once": (32, 4)}
# float32 with one-pass tf32 dots (FP32_PRECISION = "tf32"): 8 warps pay off there (the WY backward at (64, 8)
# spills far fewer registers; with 3xTF32 and with bf16 8 warps were slower: RESULTS.md "kernels")
CONFIG_TF32 = dict(CONFIG_WIDE, state_fwd=(64, 8), state_rec=(32, 4), state_bwd=(32, 4), dqkwg=(64, 8, 2),
                   wy_bwd=(64, 8), wy_bk=64, dqkwy=(64, 8, 2), dqkwy_bk=64)
# float32 with 3xTF32 / IEEE products (float64 keeps CONFIG_WIDE: two pipeline stages of float64 tiles would not
# fit in shared memory)
CONFIG_F32 = dict(CONFIG_WIDE, state_bwd=(32, 4), dqkwg=(32, 4, 2), dqkwy=(32, 4), dqkwy_bk=64)

_BUILT_IN = {id(t): dict(t) for t in (CONFIG, CONFIG_WIDE, CONFIG_TF32, CONFIG_F32)}   # as imported


def fp32_mode(fp32_precision=None) -> str:
    """The float32 product mode in force: ``fp32_precision``, else the module's ``FP32_PRECISION``; an InputError
    unless it is one of FP32_MODES."""
    prec = FP32_PRECISION if fp32_precision is None else fp32_precision
    if prec not in FP32_MODES:
        raise InputError(f"fp32_precision must be one of {', '.join(FP32_MODES)}, got {prec!r}")
    return prec


def config_table(dtype, fp32_precision=None, K=None, V=None, device=None) -> dict:
    """The kernel-setting table for inputs of ``dtype``: CONFIG (2-byte), CONFIG_TF32 (float32 with one-pass tf32),
    CONFIG_F32 (float32 with 3xTF32 / IEEE), CONFIG_WIDE (float64). Given the run widths ``K``, ``V`` and the
    ``device``, a copy with the entry of the table chosen ahead of time (:mod:`.wy_tuned`) over it, except where
    the built-in table was changed since import (a test, a sweep, benchmarks/_knobs.py: the change wins)."""
    if dtype in (torch.float16, torch.bfloat16):
        table = CONFIG
    elif dtype == torch.float32:
        table = CONFIG_TF32 if fp32_mode(fp32_precision) == "tf32" else CONFIG_F32
    else:
        table = CONFIG_WIDE
    if K is None:
        return table
    tuned = wy_tuned.entry(dtype, fp32_mode(fp32_precision), K, V, device)
    if not tuned:          # no entry for this call (always so on the CPU): the table itself, no copy per call
        return table
    built = _BUILT_IN[id(table)]
    return dict(table, **{k: v for k, v in tuned.items() if k != wy_tuned.CHUNK and table.get(k) == built.get(k)})


def _config(dtype, fp32_precision=None):
    """(operand dtype, accumulation dtype, dot precision, intermediate storage dtype)."""
    acc = acc_dtype(dtype)
    if dtype in (torch.float16, torch.bfloat16):
        return dtype, acc, "tf32", dtype
    if dtype == torch.float32:
        return acc, acc, fp32_mode(fp32_precision), acc
    return acc, acc, "ieee", acc


def _settings(cfg: dict, which: str, two_byte: bool, BVF: int) -> tuple:
    """(value block, warps, stages) of kernel ``which`` from its entry in ``cfg``, the value block at most BVF. 2-byte
    inputs run two pipeline stages by default: with one, triton 3.6 on an H100 computed a wrong dq; float32 /
    float64 tiles run one (shared memory)."""
    bv, nw, *st = cfg[which]
    stages = 2 if two_byte else 1
    return min(BVF, bv), nw, (st[0] if st else stages)


def default_chunk(dtype, fp32_precision=None, K=None, V=None, device=None) -> int:
    """The chunk size ``chunk_gh`` runs when none is given: the ``chunk`` of the table chosen ahead of time for the
    run widths ``K``, ``V`` on ``device`` (:mod:`.wy_tuned`, where it has one: benchmarks/tune_gh_configs.py times
    the whole forward + backward at each chunk size, with the tiles tuned at it, on that GPU and keeps the fastest
    whose errors against float64 stay within its CHUNK_SLACK of the built-in chunk's), else 64, but 16 for float32
    inputs with 3xTF32 products (the smaller tiles are what 3xTF32 needs; one-pass tf32 and bf16 are fastest at 64:
    the H100 measurements of benchmarks/RESULTS.md, "kernels", B=8, T=4096, H=16, K=V=128)."""
    if K is not None:
        tuned = wy_tuned.entry(dtype, fp32_mode(fp32_precision), K, V, device).get(wy_tuned.CHUNK)
        if tuned:
            return tuned
    if dtype == torch.float32 and fp32_mode(fp32_precision) == "tf32x3":
        return 16
    return 64


def _padded(K: int, V: int, dtype) -> tuple:
    """Key and value head widths ``(pK, pV)`` the compiled kernels run at: widths 17..32 of 2-byte inputs are
    zero-padded to 64 unless K = V = 32. Compiled by
    triton 3.6 on an H100, K = 32 gave a wrong dk and V = 32 a wrong dv / dbeta (bf16; 16, 64 and 128 were right;
    ``test_every_gradient_wide_heads`` in proofs_tests/ops/gh/test_wy.py, run compiled, shows it); the cause is in
    the compiler's handling of those tiles, not in the equations (the interpreter and float32 are right at 32).
    K = V = 32 together runs unpadded: on the current kernels every output and gradient is right there (relative
    errors 0.6-1.1e-2 against float64, n_h = 1, 2, gated or not: the bf16 rounding), while K = 32 beside V = 128
    still gives NaN in dk / dbeta and K = 128 beside V = 32 wrong dk / dv / dbeta unpadded (benchmarks/RESULTS.md,
    "DeltaProduct layer against fla")."""
    if INTERPRET or dtype not in (torch.float16, torch.bfloat16) or K == V == 32:
        return K, V
    return tuple(64 if 16 < n <= 32 else n for n in (K, V))
