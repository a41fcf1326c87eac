"""Memory that a legal size cannot get is an answer, not an internal error: one line naming the size asked for and
the settings to lower, exit 2; still a MemoryError, so a sweep records the point ``oom`` (and Ray retries it with a
larger GPU share)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

from proofs_tests._paths import REPO
from lrnnkit.errors import InputError, OutOfMemory
from lrnnkit.learn.oom import allocation_failure, memory_named
from lrnnkit.sweep.packing import is_oom

CPU = RuntimeError("[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: you "
                   "tried to allocate 1610612736 bytes. Error code 12 (Cannot allocate memory)")
GPU = torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79 GiB")
NUMPY = MemoryError("Unable to allocate 3.50 GiB for an array with shape (65536, 256, 7) and data type int64")


@pytest.mark.parametrize("exc, said", [(CPU, "1.50 GiB on the CPU"), (GPU, "2.00 GiB on the GPU"),
                                       (NUMPY, "3.50 GiB on the CPU"), (MemoryError(), "memory on the CPU")])
def test_allocation_failures_are_named(exc, said):
    assert allocation_failure(exc) == said
    with pytest.raises(OutOfMemory) as got:
        with memory_named("outer work", "--scale"):
            with memory_named("training", "--batch (8)"):
                raise exc
    assert str(got.value) == f"out of memory: outer work could not get {said}; lower --scale"
    assert isinstance(got.value, InputError) and is_oom(got.value)


def test_other_errors_pass_unchanged():
    for exc in (RuntimeError("shape mismatch"), ValueError("x"), KeyboardInterrupt()):
        assert allocation_failure(exc) is None
        with pytest.raises(type(exc)):
            with memory_named("training", "--batch"):
                raise exc


_OOM = r"""
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
from lrnnkit.cli import main
sys.exit(main(["train", "parity", "--layer", "diagonal", "--batch", "8192", "--train-len", "1:256", "--width", "64",
               "--heads", "4", "--steps", "1", "--test-len", "8"]))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS as Linux applies it")
def test_train_past_the_memory_it_can_get_is_one_line_exit_2():
    """A legal size (8192 x 256 tokens) under a 3 GiB address space: torch's CPU allocator fails on 1.5 GiB."""
    r = subprocess.run([sys.executable, "-c", _OOM], env={**os.environ, "PYTHONPATH": REPO, "OMP_NUM_THREADS": "1"},
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, r.stderr[-2000:]
    assert r.stderr.count("\n") == 1 and "internal error" not in r.stderr
    assert "out of memory: training (diagonal on cpu) could not get" in r.stderr and "on the CPU" in r.stderr
    assert "--batch (8192)" in r.stderr and "--train-len (256)" in r.stderr
