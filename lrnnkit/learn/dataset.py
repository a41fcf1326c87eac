"""A fixed training set run for epochs: ``TrainConfig.train_words = N``.

Several papers train on a fixed set of words for a number of epochs rather than on fresh batches (000, App. E.2.1:
"1.6M examples", 100 epochs; 001, App. C.1: 2,000,000 words, 100 epochs; 003, App. E.2: 1.28M words, 5 epochs).
With ``train_words = N`` every training loop (:class:`.step.HostStep`, :class:`.step.DeviceStep`,
:class:`.batched.BatchedStep`) reads its batches from a :class:`FixedSet`:

* **the words.** Word ``i`` (``0 <= i < N``) is row ``i % CHUNK`` of block ``i // CHUNK`` that the task's device
  sampler (:mod:`.device_sampler`, stream :data:`SET_STREAM`, batch :data:`CHUNK`) draws for the run's seed at
  the training lengths: the task's distribution (lengths uniform on ``train_len``, each word keeping its drawn
  length, padded with the task's pad token to the sampler's static length ``T``, unsupervised positions
  ``IGNORE``), a fixed function of ``(task, seed, train_len, N)`` (the integer hash gives the same words on any
  device), drawn once when the run starts (or resumes). A larger ``N`` extends the set of a smaller one.
* **the order.** Training position ``p = s B + b`` (step ``s``, row ``b`` of a batch of ``B``) reads word
  ``perm_e[p mod N]`` of epoch ``e = p div N``, ``perm_e`` the permutation
  ``batch_rng(seed, e, stream=ORDER_STREAM).permutation(N)`` (numpy, :func:`.tasks.batch_rng`). So each epoch
  visits every word exactly once, in an order of its own, and a batch that crosses an epoch boundary takes the
  end of one epoch and the start of the next (the steps stay ``steps``; the epochs a config implies are
  ``steps B / N``, :attr:`TrainConfig.epochs`). Position depends on the step only, so a resumed run continues the
  same order.
* **on the device.** The words live on the run's device as two int tensors (tokens and labels) in the smallest
  dtype that holds them (:func:`set_dtype`: int8 for every task whose vocabulary and outputs are below 128,
  ``IGNORE = -100`` included): ``N T`` bytes each, 2 x 2,000,000 x 128 = 512 MB for 001's set. The two epoch
  orders a step can need (``e`` and ``e + 1``, since ``B <= N``) are held in a ``(runs, 2, N)`` int64 buffer, slot
  ``e mod 2``; the host refills a slot between steps when the step counter enters a new epoch
  (:meth:`FixedSet.prepare`, from the step number it already knows: no device read). The batch itself
  (:meth:`FixedSet.sample`) is an index computed on the device from the step tensor and two gathers: no host
  synchronisation, capturable in a CUDA graph (the refill writes the buffer the graph reads). The host loop reads
  the same set with the same code, so both loops train on the same words at the same step.

Cap: the set's bytes (tokens and labels of every run of the process) are at most
``lrnnkit.limits.TRAIN_MAX_SET_BYTES`` (4 GiB); larger is refused, one line naming the size.
"""
from __future__ import annotations

import numpy as np
import torch

from .. import limits
from ..errors import InputError, SizeLimitError
from .tasks import IGNORE, batch_rng

__all__ = ["FixedSet", "SET_STREAM", "ORDER_STREAM", "CHUNK", "set_dtype", "epoch_order", "draw_words", "resident_bytes",
           "check_train_words", "set_bytes"]

SET_STREAM = 2        # device-sampler stream of the set's words (0: fresh training batches, 1: test words)
ORDER_STREAM = 3      # batch_rng stream of the epoch orders
CHUNK = 1024          # words per sampler block: the set does not depend on the batch size
_BLOCKS = 16          # sampler blocks drawn at once (sample_block)


def set_dtype(lo: int, hi: int) -> torch.dtype:
    """The smallest signed torch int dtype holding ``lo .. hi``."""
    for dt in (torch.int8, torch.int16, torch.int32):
        info = torch.iinfo(dt)
        if info.min <= lo and hi <= info.max:
            return dt
    return torch.int64


def _dtypes(task) -> tuple:
    """(token dtype, label dtype) of ``task``'s words."""
    return set_dtype(0, max(task.n_in, task.pad_id)), set_dtype(min(IGNORE, 0), task.n_out)


def set_bytes(task, words: int, T: int, runs: int = 1) -> int:
    """Bytes of ``runs`` sets of ``words`` words of ``T`` tokens: tokens and labels at :func:`_dtypes`."""
    xd, yd = _dtypes(task)
    return runs * words * T * (torch.iinfo(xd).bits + torch.iinfo(yd).bits) // 8


def resident_bytes(task, words: int, length, runs: int = 1) -> int:
    """Bytes a :class:`FixedSet` of ``runs`` runs holds on its device for as long as they train: the words
    (:func:`set_bytes` at the padded length the device sampler draws for ``length``) and the two epoch orders of
    every run (int64, ``runs x 2 x words``). :func:`lrnnkit.learn.memory.peak_bytes` adds it to a step's peak."""
    from .device_sampler import device_sampler
    T = device_sampler(task, 1, tuple(length), 0, "cpu").T
    return set_bytes(task, int(words), T, runs) + runs * 2 * int(words) * 8


def check_train_words(words, batch: int, longest: int, label: str = "train_words") -> int | None:
    """``words`` checked for a config: None (fresh batches) or an int ``>= batch``, its tokens and labels at one
    byte each (``words x longest x 2``, a lower bound of :func:`set_bytes`) within ``TRAIN_MAX_SET_BYTES``."""
    if words is None:
        return None
    if isinstance(words, bool) or not isinstance(words, int) or words < 1:
        raise InputError(f"{label} must be a positive integer (the size of the fixed training set) or unset, got "
                         f"{words!r}"[:240])
    if words < batch:
        raise InputError(f"{label} must be at least the batch ({batch}: an epoch is at least one batch), got {words}")
    _cap(words * longest * 2, f"{label} {words} x the longest training length {longest} x 2 (tokens and labels)")
    return words


def _cap(n: int, what: str) -> None:
    if n > limits.TRAIN_MAX_SET_BYTES:
        raise SizeLimitError(f"the fixed training set takes {n} bytes ({what}), at most {limits.TRAIN_MAX_SET_BYTES} "
                             "(lrnnkit.limits.TRAIN_MAX_SET_BYTES)")


def epoch_order(seed: int, epoch: int, words: int) -> np.ndarray:
    """The order of epoch ``epoch`` of a run with seed ``seed``: a permutation of ``0 .. words - 1`` (int64)."""
    return batch_rng(seed, epoch, stream=ORDER_STREAM).permutation(words).astype(np.int64)


def draw_words(task, words: int, length, seed: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    """``(x, y)`` ``(words, T)`` on ``device`` at :func:`_dtypes`: the set of seed ``seed`` (module docstring)."""
    from .device_sampler import device_sampler
    sampler = device_sampler(task, CHUNK, tuple(length), seed, device, stream=SET_STREAM)
    xd, yd = _dtypes(task)
    x = torch.empty((words, sampler.T), dtype=xd, device=device)
    y = torch.empty((words, sampler.T), dtype=yd, device=device)
    blocks = -(-words // CHUNK)
    for b0 in range(0, blocks, _BLOCKS):
        K = min(_BLOCKS, blocks - b0)
        bx, by = sampler.sample_block(b0, K)
        lo, hi = b0 * CHUNK, min(words, (b0 + K) * CHUNK)
        x[lo:hi] = bx.reshape(-1, sampler.T)[:hi - lo].to(xd)
        y[lo:hi] = by.reshape(-1, sampler.T)[:hi - lo].to(yd)
    return x, y


class FixedSet:
    """The fixed training sets of runs with seeds ``seeds`` (one run: one seed), ``words`` words each, read in
    batches of ``batch`` (module docstring). ``prepare(step)`` (host, before step ``step``) then ``sample(step_t)``
    (``(batch, T)`` int64 of the first run) or ``sample_seeds(step_t)`` (``(runs, batch, T)``)."""

    def __init__(self, task, words: int, batch: int, length, seeds, device):
        self.words, self.batch, self.seeds = int(words), int(batch), list(seeds)
        self.device = torch.device(device)
        if self.batch > self.words:
            raise InputError(f"train_words ({self.words}) must be at least the batch ({self.batch})")
        from .device_sampler import device_sampler
        T = device_sampler(task, 1, tuple(length), 0, "cpu").T
        R = len(self.seeds)
        _cap(set_bytes(task, self.words, T, R), f"{R} run(s) x {self.words} words x {T} tokens, tokens and labels")
        sets = [draw_words(task, self.words, length, s, self.device) for s in self.seeds]
        self.x = torch.stack([s[0] for s in sets]).reshape(R * self.words, T)
        self.y = torch.stack([s[1] for s in sets]).reshape(R * self.words, T)
        del sets
        self.T = T
        self.nbytes = self.x.numel() * self.x.element_size() + self.y.numel() * self.y.element_size()
        self.order = torch.zeros((R, 2, self.words), dtype=torch.int64, device=self.device)
        self._held = [None, None]                   # the epoch each slot holds
        self._rows = torch.arange(self.batch, dtype=torch.int64, device=self.device)
        self._base = (torch.arange(R, dtype=torch.int64, device=self.device) * self.words)[:, None]
        self.prepare(0)

    def epochs_of(self, step: int) -> tuple[int, int]:
        """The first and last epoch batch ``step`` reads."""
        return step * self.batch // self.words, (step * self.batch + self.batch - 1) // self.words

    def prepare(self, step: int) -> None:
        """Make the epoch orders batch ``step`` reads resident (host only: no device read)."""
        e0 = step * self.batch // self.words
        for e in (e0, e0 + 1):
            if self._held[e % 2] != e:
                perms = np.stack([epoch_order(s, e, self.words) for s in self.seeds])
                self.order[:, e % 2].copy_(torch.from_numpy(perms))
                self._held[e % 2] = e

    def indices(self, step_t: torch.Tensor) -> torch.Tensor:
        """``(runs, batch)`` word indices of batch ``step_t`` (a 0-dim int64 device tensor), computed on the device."""
        p = step_t.reshape(()) * self.batch + self._rows
        slot = (p // self.words) % 2
        return self.order[:, slot, p % self.words]

    def sample_seeds(self, step_t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(x, y)`` ``(runs, batch, T)`` int64: every run's batch ``step_t`` from its own set."""
        flat = (self.indices(step_t) + self._base).reshape(-1)
        R = len(self.seeds)
        x = torch.index_select(self.x, 0, flat).to(torch.int64).reshape(R, self.batch, self.T)
        y = torch.index_select(self.y, 0, flat).to(torch.int64).reshape(R, self.batch, self.T)
        return x, y

    def sample(self, step_t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(x, y)`` ``(batch, T)`` int64: batch ``step_t`` of the first run."""
        x, y = self.sample_seeds(step_t)
        return x[0], y[0]

    def batch_at(self, step: int) -> tuple[torch.Tensor, torch.Tensor]:
        """:meth:`prepare` then :meth:`sample` of the host step number ``step`` (the host loop)."""
        self.prepare(step)
        return self.sample(torch.tensor(step, dtype=torch.int64, device=self.device))
