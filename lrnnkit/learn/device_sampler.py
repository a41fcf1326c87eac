"""Training batches of a :class:`~lrnnkit.learn.tasks.Task` made with torch ops on the device, graph-capturable.

:meth:`DeviceSampler.sample` ``(step)`` returns what ``task.sample(batch, length, batch_rng(seed, step))`` returns
(:mod:`.tasks`; the tasks of 000 App. E.1, 002 Section 4.1 and 003 App. E.1) **in distribution**, with other
random numbers, and without leaving the device: no host synchronisation, no data-dependent shape, no generator
state, so a training step that calls it can be captured in one CUDA graph with ``step`` a device tensor that the
graph increments.

Randomness is counter-based. Every random number is a 32-bit integer hash of ``(seed, stream, step, draw, row,
position)``: the host folds ``(seed, stream)`` into a key, the device folds ``step`` and the draw's salt into it
(0-dim int64 ops), and each element hashes its static counter ``row * W + position`` with that key. The mixer is
``lowbias32`` with multipliers below ``2^31`` (Wellons' hash prospector), in int64 with 32-bit masks, so no
product reaches ``2^63`` (no signed overflow is relied on). A uniform integer in ``[0, m)`` is ``(h m) >> 32``
(bias at most ``m / 2^32`` per draw). Batch ``s`` depends only on ``(seed, stream, s)``, as with ``batch_rng``.

What is the same as :meth:`Task.sample`:

* per-row lengths uniform on the inclusive range; letters uniform over the task's letters (or, for mod-arith
  words, digits at even and operators at odd letter positions); ``k`` tokens per transition (a letter then
  ``k - 1`` blanks, the target at token ``j`` the output after letter ``(j - k + 1) // k``, the start state's
  before); targets output or state; supervision ``all`` / ``last`` (each row's own last position) / ``digits``;
* mod-arith with brackets (000 App. E.1): the same recursive grammar ``E -> d | -d | ( E ) | E op E`` with the
  same choice probabilities (one token: a digit; two: ``-`` digit; three or more: bracket or binary with
  probability 1/2, the left part's length uniform on ``1 .. n-2``, the operator uniform over ``+ - *``), exactly
  ``L - 1`` tokens then ``=``, the target ``E mod M`` (``*`` before ``+ -``, unary minus, brackets) at ``=``;
* copy (003 App. E.1): ``w <copy> w[:-1]`` with the targets ``w`` from ``<copy>`` on.

What differs: the random numbers (same distribution, other draws), and the padded length. ``T`` is static, the
longest length of the range (``2x`` for copy), where ``Task.sample`` pads to the longest row drawn. Positions past
a row's length are ``pad`` with target ``IGNORE`` in both, and the models are causal, so the extra padding changes
no output or loss on a word.

How the words are made on the device:

* automata: the state after every prefix by a Hillis-Steele scan (``log2 m`` rounds for ``m`` letters). When the
  transition monoid (:func:`lrnnkit.automata.monoid.transition_monoid`) has at most :data:`TABLE_CAP` elements, a
  prefix is an element index and composing two is a lookup in its multiplication table ((B, m) integers per
  round); otherwise a prefix is its map ``Q -> Q`` and composing is a gather ((B, m, Q) integers per round);
* brackets: the derivation tree level by level (a node is a token interval, stored at its first position; every
  level draws all its nodes' choices at once and writes their tokens and children with a scatter), then the
  value bottom-up over the same levels. A node's value is summarised as its list of ``+``-separated signed terms
  ``(first, sum of the middle ones, last, single?)``: ``E op E'`` joins the two lists (``-`` negates the first term
  of ``E'``; ``*`` multiplies the last term of ``E`` by the first of ``E'``), ``( E )`` is one term, the sum. This
  is the value the precedence grammar gives the concatenated tokens, checked exactly against
  :meth:`BracketArithTask.evaluate` by the tests. The number of levels is the deepest tree of the longest
  length, about ``T / 2``.
"""
from __future__ import annotations

import numpy as np
import torch

from ..automata.monoid import transition_monoid
from ..errors import InputError, SizeLimitError
from ..limits import MAX_SEED, check_int
from .tasks import BLANK, IGNORE, AutomatonTask, BracketArithTask, CopyTask, Task

__all__ = ["DeviceSampler", "device_sampler", "TABLE_CAP", "mix32"]

TABLE_CAP = 2048          # monoids up to this size compose by table lookup (a table of TABLE_CAP^2 int64: 32 MiB)
_M32 = 0xFFFFFFFF
_C1, _C2 = 0x21F0AAAD, 0x735A2D97        # lowbias32 (hash prospector) multipliers, both < 2^31
_SALT_LEN, _SALT_LETTER, _SALT_COIN, _SALT_SPLIT, _SALT_OP, _SALT_DIGIT = 0x1B873593, 0x2C1B3C6D, 0x297A2D39, \
    0x165667B1, 0x27D4EB2F, 0x3C6EF372


def mix32(x):
    """``lowbias32``: a bijection of ``[0, 2^32)`` with good avalanche; works on Python ints and int64 tensors
    (every product stays below ``2^63``)."""
    x = x ^ (x >> 16)
    x = (x * _C1) & _M32
    x = x ^ (x >> 15)
    x = (x * _C2) & _M32
    return x ^ (x >> 15)


def _fold(h, v):
    """Fold a non-negative 64-bit value (Python int or int64 tensor) into the 32-bit key ``h``."""
    h = mix32(h ^ (v & _M32))
    return mix32(h ^ ((v >> 32) & _M32))


class DeviceSampler:
    """Batches of a Task made with torch ops on `device`, graph-capturable (module docstring).

    ``T``: the static padded length of every batch (the longest word of ``length``; twice that for copy).
    ``sample(step)``: ``(x, y)``, int64 ``(batch, T)`` on the device, ``x`` padded with ``task.pad_id``, ``y`` =
    ``IGNORE`` where unsupervised; ``step`` a 0-dim int64 tensor on the device (an int is moved there first)."""

    def __init__(self, task: Task, batch: int, length, seed: int, device, stream: int = 0):
        self.task = task
        self.batch = check_int("batch", batch, 1, 1 << 20)
        if isinstance(length, (tuple, list)) and len(length) == 2:
            lo, hi = length
        else:
            lo = hi = length
        lo, hi = (check_int("length", int(v) if isinstance(v, np.integer) else v, 1, 1 << 20) for v in (lo, hi))
        if hi < lo:
            raise InputError(f"bad length range {length!r}: need 1 <= A <= B")
        self.lo, self.hi = lo, hi
        self.seed = check_int("seed", seed, 0, MAX_SEED, "MAX_SEED")
        self.stream = check_int("stream", stream, 0, MAX_SEED)
        self.device = torch.device(device)
        self.T = hi
        self._key0 = _fold(_fold(0x9E3779B9, self.stream), self.seed)
        self._pos = torch.arange(self.T, device=self.device)
        self._len_ctr = self._counters(self.batch)

    # ---------------------------------------------------------------------------------------- randomness
    def _counters(self, *shape) -> torch.Tensor:
        """``mix32`` of ``0 .. prod(shape) - 1`` laid out in ``shape`` (static: computed once per sampler)."""
        n = int(np.prod(shape))
        if n > _M32:
            raise SizeLimitError(f"a batch needs {n} random numbers per draw, more than 2^32: reduce batch or length")
        return mix32(torch.arange(n, device=self.device, dtype=torch.int64)).reshape(shape)

    def _key(self, step: torch.Tensor, salt: int) -> torch.Tensor:
        """The 32-bit key of one draw of batch ``step`` (0-dim, on the device)."""
        return mix32(_fold(self._key0, step) ^ salt)

    @staticmethod
    def _bits(counters: torch.Tensor, key: torch.Tensor) -> torch.Tensor:
        """32 random bits per element: two mixing rounds of the (pre-mixed) counter under the key."""
        return mix32(mix32(counters ^ key) ^ key)

    @staticmethod
    def _below(bits: torch.Tensor, m) -> torch.Tensor:
        """Uniform integers in ``[0, m)`` (``m`` an int or a tensor of ints < 2^31) from 32 random bits."""
        return (bits * m) >> 32

    def _step(self, step) -> torch.Tensor:
        if not isinstance(step, torch.Tensor):
            step = torch.tensor(int(step), dtype=torch.int64, device=self.device)
        return step.to(torch.int64)

    def _lengths(self, step: torch.Tensor) -> torch.Tensor:
        """(batch,) lengths uniform on ``lo .. hi``."""
        return self.lo + self._below(self._bits(self._len_ctr, self._key(step, _SALT_LEN)), self.hi - self.lo + 1)

    def sample(self, step) -> tuple[torch.Tensor, torch.Tensor]:   # pragma: no cover - abstract
        raise NotImplementedError

    def _tensor(self, a) -> torch.Tensor:
        return torch.as_tensor(np.array(a, dtype=np.int64), device=self.device)   # a copy: numpy may be read-only


# ---------------------------------------------------------------------------------------------- automata
class AutomatonSampler(DeviceSampler):
    """:class:`AutomatonTask` on the device: uniform letters, prefix states by a Hillis-Steele scan."""

    def __init__(self, task: AutomatonTask, batch, length, seed, device, stream=0, *, table_cap: int = TABLE_CAP):
        super().__init__(task, batch, length, seed, device, stream)
        fsa, k = task.fsa, task.k
        self.k = k
        self.m = -(-self.T // k)                       # letters filling T tokens
        if task.words == "alternate":
            dig = [int(a) for a in task.letters if fsa.alphabet[a].isdigit()]
            ops = [int(a) for a in task.letters if not fsa.alphabet[a].isdigit()]
            if not dig or (not ops and self.m > 1):
                raise InputError(f"task {task.name!r}: alternate words need digits and operators among its letters")
            self._digits, self._ops = self._tensor(dig), self._tensor(ops or dig)
        else:
            self._letters = self._tensor(task.letters)
        lab = np.asarray(task._lab, dtype=np.int64)
        try:
            M = transition_monoid(fsa, cap=table_cap)
            self.scan = "table"
        except SizeLimitError:
            M = None
            self.scan = "maps"
        if M is not None:
            E = M.elements.astype(np.int64)
            self._elem_of_letter = self._tensor(M.cayley[0])                  # letter a = identity . a
            self._table = self._tensor(M.multiplication_table(cap=table_cap).reshape(-1))
            self._N = M.size
            self._label_of = self._tensor(lab[E[:, fsa.start]])             # label after a prefix element
        else:
            self._maps_of_letter = self._tensor(np.asarray(fsa.delta, dtype=np.int64).T)   # (A, Q): letter's map
            self._label_of = self._tensor(lab)
            self._start = int(fsa.start)
        self._start_label = int(lab[fsa.start])
        self._ctr = self._counters(self.batch, self.m)
        j = np.arange(self.T)
        self._letter_at = self._tensor(j // k)                               # letter whose token is at j
        self._is_letter = torch.as_tensor(j % k == 0, device=self.device)
        ans = (j - (k - 1)) // k                                            # letter answered at j, -1: none
        self._answered = self._tensor(np.maximum(ans, 0))
        self._answers = torch.as_tensor(ans >= 0, device=self.device)
        self._blank = fsa.n_letters                                         # BLANK's token id (k > 1)
        assert k == 1 or task.vocab[self._blank] == BLANK
        isdig = [s.isdigit() for s in task.vocab]
        self._isdig = torch.as_tensor(np.array(isdig), device=self.device)

    def _words(self, step) -> torch.Tensor:
        """(batch, m) letter indices."""
        bits = self._bits(self._ctr, self._key(step, _SALT_LETTER))
        if self.task.words == "alternate":
            d = self._digits[self._below(bits, len(self._digits))]
            o = self._ops[self._below(bits, len(self._ops))]
            even = (torch.arange(self.m, device=self.device) % 2 == 0)
            return torch.where(even, d, o)
        return self._letters[self._below(bits, len(self._letters))]

    def _prefix_labels(self, w: torch.Tensor) -> torch.Tensor:
        """(batch, m) label after each prefix of the words ``w``: Hillis-Steele scan of the letters' transitions
        (prefix ``t`` = prefix ``t - d`` then the block ``(t - d, t]``, for ``d = 1, 2, 4, ...``)."""
        m = w.shape[1]
        if self.scan == "table":
            cur = self._elem_of_letter[w]
            d = 1
            while d < m:
                cur = torch.cat([cur[:, :d], self._table[cur[:, :-d] * self._N + cur[:, d:]]], dim=1)
                d *= 2
            return self._label_of[cur]
        cur = self._maps_of_letter[w]                                       # (B, m, Q)
        d = 1
        while d < m:
            cur = torch.cat([cur[:, :d], torch.gather(cur[:, d:], 2, cur[:, :-d])], dim=1)
            d *= 2
        return self._label_of[cur[:, :, self._start]]

    def sample(self, step):
        step = self._step(step)
        lens = self._lengths(step)
        w = self._words(step)
        lab = self._prefix_labels(w)
        if self.k == 1:
            x, y = w, lab
        else:
            x = torch.where(self._is_letter, w[:, self._letter_at], self._blank)
            y = torch.where(self._answers, lab[:, self._answered], self._start_label)
        valid = self._pos < lens[:, None]
        x = torch.where(valid, x, self.task.pad_id)
        sup = self.task.supervise
        keep = (self._pos == (lens - 1)[:, None]) if sup == "last" else (valid & self._isdig[x]) \
            if sup == "digits" else valid
        return x, torch.where(keep, y, IGNORE)


# ---------------------------------------------------------------------------------------------- brackets
def _tree_depth(n_max: int) -> list[int]:
    """``depth[n]``: the most levels a derivation of ``n`` tokens can have (leaves ``d`` and ``- d`` are one)."""
    depth = [0, 1, 1]
    for n in range(3, n_max + 1):
        depth.append(1 + max([depth[n - 2]] + [max(depth[lft], depth[n - 1 - lft]) for lft in range(1, n - 1)]))
    return depth


class BracketSampler(DeviceSampler):
    """:class:`BracketArithTask` on the device: the derivation level by level, the value bottom-up."""

    _NONE, _DIGIT, _NEG, _BRACKET, _BINARY = 0, 1, 2, 3, 4

    def __init__(self, task: BracketArithTask, batch, length, seed, device, stream=0):
        super().__init__(task, batch, length, seed, device, stream)
        if self.lo < 2:
            raise InputError(f"mod-arith-br needs length >= 2 (an expression and '='), got {length!r}")
        self.M = task.M
        self.levels = _tree_depth(self.T - 1)[self.T - 1]
        self._ctr = self._counters(self.levels, self.batch, self.T)
        v = task._id
        self._tok_ops = self._tensor([v["+"], v["-"], v["*"]])
        self._minus, self._open, self._close, self._eq = v["-"], v["("], v[")"], v["="]

    def _draws(self, step):
        """(levels, batch, T) random bits of the four choices of a node at every level and position."""
        return [self._bits(self._ctr, self._key(step, s)) for s in (_SALT_COIN, _SALT_SPLIT, _SALT_OP, _SALT_DIGIT)]

    def sample(self, step):
        step = self._step(step)
        B, T, M, dev = self.batch, self.T, self.M, self.device
        lens = self._lengths(step)
        coin_b, split_b, op_b, digit_b = self._draws(step)
        pos = self._pos.expand(B, T)
        x = torch.full((B, T + 1), self.task.pad_id, dtype=torch.int64, device=dev)   # column T: discarded writes
        size = torch.zeros((B, T + 1), dtype=torch.int64, device=dev)
        size[:, 0] = lens - 1
        nodes = []
        for lev in range(self.levels):                           # top-down: choices, tokens, children
            s = size[:, :T]
            coin = coin_b[lev] >> 31
            kind = torch.where(s == 1, self._DIGIT, torch.where(s == 2, self._NEG, torch.where(
                s >= 3, torch.where(coin == 0, self._BRACKET, self._BINARY), self._NONE)))
            left = 1 + self._below(split_b[lev], (s - 2).clamp(min=0))          # 1 .. s-2
            op = self._below(op_b[lev], 3)
            digit = self._below(digit_b[lev], M)
            nodes.append((kind, left, op, digit))
            first = torch.where(kind == self._DIGIT, digit, torch.where(kind == self._NEG, self._minus, self._open))
            x.scatter_(1, torch.where((kind != self._NONE) & (kind != self._BINARY), pos, T), first)
            at2 = torch.where(kind == self._NEG, pos + 1, torch.where(kind == self._BRACKET, pos + s - 1,
                                                                         pos + left))
            tok2 = torch.where(kind == self._NEG, digit, torch.where(kind == self._BRACKET, self._close,
                                                                        self._tok_ops[op]))
            x.scatter_(1, torch.where(kind >= self._NEG, at2, T), tok2)
            size = torch.zeros_like(size)
            size.scatter_(1, torch.where(kind == self._BRACKET, pos + 1, torch.where(kind == self._BINARY, pos, T)),
                          torch.where(kind == self._BRACKET, s - 2, left))
            size.scatter_(1, torch.where(kind == self._BINARY, pos + left + 1, T), s - 1 - left)
        # bottom-up: each node's terms (first, middle sum, last, single) mod M, stored at its first position
        zero = torch.zeros((B, T), dtype=torch.int64, device=dev)
        F, Mi, Lt, one = zero, zero, zero, zero
        for kind, left, op, digit in reversed(nodes):
            ia = pos                                              # a binary node's left child starts with it
            ib = (pos + left + 1).clamp(max=T - 1)
            ic = (pos + 1).clamp(max=T - 1)                       # a bracket's child
            aF, aM, aL, a1 = (t.gather(1, ia) for t in (F, Mi, Lt, one))
            bF, bM, bL, b1 = (t.gather(1, ib) for t in (F, Mi, Lt, one))
            cF, cM, cL, c1 = (t.gather(1, ic) for t in (F, Mi, Lt, one))
            # E op E': '-' negates the first term of E' (its last too when it is the only one)
            neg = op == 1
            bF2 = torch.where(neg, -bF, bF) % M
            bL2 = torch.where(neg & (b1 == 1), bF2, bL)
            add_M = (1 - a1) * (aM + aL) + (1 - b1) * (bF2 + bM)
            prod = aL * bF
            mul_F = torch.where(a1 == 1, prod, aF)
            mul_L = torch.where(b1 == 1, prod, bL)
            mul_M = (1 - a1) * aM + (1 - b1) * bM + (1 - a1) * (1 - b1) * prod
            is_mul = op == 2
            bin_F = torch.where(is_mul, mul_F, aF)
            bin_M = torch.where(is_mul, mul_M, add_M)
            bin_L = torch.where(is_mul, mul_L, bL2)
            bin_1 = torch.where(is_mul, a1 * b1, 0)
            leaf = torch.where(kind == self._DIGIT, digit, torch.where(
                kind == self._NEG, -digit, cF + (1 - c1) * (cM + cL)))   # d, -d, (E) = the sum of E's terms
            is_bin = kind == self._BINARY
            F = torch.where(is_bin, bin_F, leaf) % M
            Mi = torch.where(is_bin, bin_M, 0) % M
            Lt = torch.where(is_bin, bin_L, leaf) % M
            one = torch.where(is_bin, bin_1, 1)
        value = (F[:, 0] + (1 - one[:, 0]) * (Mi[:, 0] + Lt[:, 0])) % M
        x = x[:, :T]
        last = pos == (lens - 1)[:, None]
        x = torch.where(last, self._eq, x)
        y = torch.where(last, value[:, None], IGNORE)
        return x, y


# ---------------------------------------------------------------------------------------------- copying
class CopySampler(DeviceSampler):
    """:class:`CopyTask` on the device: ``w <copy> w[:-1]``, targets ``w`` from ``<copy>`` on."""

    def __init__(self, task: CopyTask, batch, length, seed, device, stream=0):
        super().__init__(task, batch, length, seed, device, stream)
        self.T = 2 * self.hi
        self._pos = torch.arange(self.T, device=self.device)
        self._ctr = self._counters(self.batch, self.hi)

    def sample(self, step):
        step = self._step(step)
        lens = self._lengths(step)[:, None]
        w = self._below(self._bits(self._ctr, self._key(step, _SALT_LETTER)), self.task.V)
        j = self._pos
        src = torch.where(j < lens, j, j - lens - 1).clamp(0, self.hi - 1)
        x = torch.where(j < lens, w.gather(1, src), torch.where(j == lens, self.task.V, torch.where(
            j < 2 * lens, w.gather(1, src), self.task.pad_id)))
        tgt = (j - lens).clamp(0, self.hi - 1)
        y = torch.where((j >= lens) & (j < 2 * lens), w.gather(1, tgt), IGNORE)
        return x, y


def device_sampler(task: Task, batch: int, length, seed: int, device, stream: int = 0) -> DeviceSampler:
    """The :class:`DeviceSampler` of ``task`` (every kind of :mod:`.tasks`)."""
    for cls, kind in ((AutomatonTask, AutomatonSampler), (BracketArithTask, BracketSampler), (CopyTask, CopySampler)):
        if isinstance(task, cls):
            return kind(task, batch, length, seed, device, stream)
    raise InputError(f"no device sampler for task {getattr(task, 'name', task)!r} of type {type(task).__name__}")
