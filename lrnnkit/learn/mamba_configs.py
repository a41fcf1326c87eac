"""Which model stands for a paper's Mamba in the learning experiments, at each scale, and how its configurations are
labelled.

000 (App. E.1.1, E.2.1: parity, modular arithmetic, Z60) and 003 (Section 3: state tracking, copying) train Mamba
(Gu & Dao, 2023): a block that expands the width, keeps a ``d_state x d_inner`` state per token read out by
``C_t``, adds the ``D`` skip and gates by SiLU. At scale ``paper`` the experiments train that block (layer
``"mamba"``, :class:`lrnnkit.layers.mamba.MambaMixer`; the eigenvalue range ``[0,1]`` or 000's ``[-1,1]``), and a
configuration is labelled ``"Mamba [lo,hi]"``. At the scales ``tiny`` and ``small`` (a CPU and minutes of one GPU)
they train lrnnkit's one-state simplification (layer ``"diagonal"``, :class:`lrnnkit.layers.mixers.DiagonalMixer`:
one state per channel, no expansion, no ``C_t`` readout, no ``D`` skip), labelled ``"Mamba-like diagonal
[lo,hi]"`` so that no reader takes it for the paper's model.

A judge names a configuration once, by either name, and reads the one the runs have through :func:`mamba_key`.
"""
from __future__ import annotations

from ..run_records import MAMBA, MAMBA_LIKE, mamba_key   # the names, below learn and theorems alike

__all__ = ["MAMBA", "MAMBA_LIKE", "mamba_model", "mamba_key"]


def mamba_model(scale: str) -> tuple:
    """``(name, layer)`` of the model that stands for a paper's Mamba at ``scale`` (module text)."""
    return (MAMBA, "mamba") if scale == "paper" else (MAMBA_LIKE, "diagonal")
