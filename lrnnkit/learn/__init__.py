"""Learning vs constructing: tasks from automata, trainable LRNN models on lrnnkit's kernels, training,
evaluation as the papers plot it, and the papers' experiments as named reproductions.

* :mod:`.tasks` -- datasets (any FSA, group word problems and their 000 variants, 002's Sum / EvenPair /
  ModArith, modular arithmetic with brackets), generated on the fly and seeded per step;
* :mod:`.models` -- :class:`SequenceModel` with diagonal / DeltaNet / DeltaProduct / gated / block-diagonal /
  bilinear layers, eigenvalue range [0, 1] or [-1, 1] as one switch;
* :mod:`.train` -- AdamW, cosine schedule, clipping, bf16 autocast on CUDA, bit-identical resume;
* :mod:`.evaluate` -- accuracy and scaled accuracy (000) per test length, plots;
* :mod:`.experiments` -- the named reproductions (000, 001, 002, 004).
* :mod:`.compiled_vs_learned` -- each experiment's compiled model (certified cost) beside the smallest stored
  trained run that reaches its target.
"""
from .tasks import AutomatonTask, BracketArithTask, Task, make_task

__all__ = ["Task", "AutomatonTask", "BracketArithTask", "make_task"]
