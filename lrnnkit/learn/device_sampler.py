"""Training batches of a :class:`~lrnnkit.learn.tasks.Task` made with torch ops on the device, graph-capturable.

:meth:`DeviceSampler.sample` ``(step)`` returns what ``task.sample(batch, length, batch_rng(seed, step))`` returns
(:mod:`.tasks`; the tasks of 000 App. E.1 and Section 5.2 / App. E.2.1, 002 Section 4.1, 003 App. E.1) **in
distribution**, with other random numbers, and without leaving the device: no host synchronisation, no
data-dependent shape, no generator state, so a training step that calls it can be captured in one CUDA graph with
``step`` a device tensor that the graph increments.

Randomness is counter-based. Every random number is a 32-bit integer hash of ``(seed, stream, step, draw, row,
position)``: the host folds ``(seed, stream)`` into a key, the device folds ``step`` into it (a few 0-dim int64
ops per call), and each element mixes its static counter, a number of its own for ``(draw, row, position)``, with
that key (two rounds). The mixer is the improved ``lowbias32`` of Wellons' hash prospector (multipliers
``0x21f0aaad`` and ``0x735a2d97``, both below ``2^31``) in int64 with 32-bit masks, so no product reaches
``2^63`` (no signed overflow is relied on). A uniform integer in ``[0, m)`` is ``(h m) >> 32``: each value has
probability ``1/m`` to within ``1 / 2^32``. Batch ``s`` depends only on ``(seed, stream, s)``, as with
``batch_rng``.

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
  value bottom-up over the same levels. A node's value is summarised by its ``+``-separated signed terms as
  ``(first, sum of the others, last, single?)`` mod M: ``E op E'`` joins the two lists (``-`` negates the first
  term of ``E'``; ``*`` multiplies the last term of ``E`` by the first of ``E'``), ``( E )`` is one term, the sum.
  This is the value the precedence grammar gives the concatenated tokens (``*`` before ``+ -``, unary minus
  binding an atom), checked exactly against :meth:`BracketArithTask.evaluate` by the tests. The number of levels
  is the deepest derivation of the longest length, ``floor(L / 2)`` (20 for L = 40), so a bracket batch costs about
  70 small kernels per level: :meth:`DeviceSampler.sample_block` makes ``K`` batches with the same kernels.

Counters: each draw (lengths, letters, a node's four choices) has its own range of counters, so no two draws of a
batch share a random number; a batch needs fewer than ``2^32`` of them (checked when the sampler is made).
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
    ``IGNORE`` where unsupervised; ``step`` a 0-dim int64 tensor on the device (an int is moved there first).
    ``sample_block(step, K)``: batches ``step .. step + K - 1`` as ``(K, batch, T)``, equal to ``K`` calls of
    ``sample`` and made by the same number of kernels as one (the kernels are per word position or tree level,
    not per row)."""

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
        self._key0 = self._key_of(self.seed)
        self._pos = torch.arange(self.T, device=self.device)
        self._used = 0                                  # counters handed out so far (each draw has its own range)
        self._len_ctr = self._counters(self.batch)

    # ---------------------------------------------------------------------------------------- randomness
    def _counters(self, *shape) -> torch.Tensor:
        """A fresh range of counters, ``mix32``-ed, in ``shape`` (rows first): static, made once per sampler."""
        n = int(np.prod(shape))
        if self._used + n > _M32:
            raise SizeLimitError(f"a batch needs more than 2^32 random numbers ({self._used + n}): reduce batch "
                                 "or length")
        ctr = mix32(torch.arange(self._used, self._used + n, device=self.device, dtype=torch.int64))
        self._used += n
        return ctr.reshape(shape)

    def _keys(self, steps: torch.Tensor) -> torch.Tensor:
        """The 32-bit key of each batch in ``steps`` (K,), on the device."""
        return _fold(self._key0, steps)

    @staticmethod
    def _bits(counters: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        """32 random bits per counter and key: ``(K * batch, ...)`` from counters ``(batch, ...)`` and keys
        ``(K,)`` (two mixing rounds of the pre-mixed counter under the key)."""
        k = keys.reshape((-1,) + (1,) * counters.dim())
        bits = mix32(mix32(counters ^ k) ^ k)
        return bits.reshape((-1,) + tuple(counters.shape[1:]))

    @staticmethod
    def _below(bits: torch.Tensor, m) -> torch.Tensor:
        """Uniform integers in ``[0, m)`` (``m`` an int or a tensor of ints < 2^31) from 32 random bits."""
        return (bits * m) >> 32

    def _steps(self, step, K: int) -> torch.Tensor:
        if not isinstance(step, torch.Tensor):
            step = torch.tensor(int(step), dtype=torch.int64, device=self.device)
        return step.to(torch.int64).reshape(1) + torch.arange(K, device=self.device)

    def _lengths(self, keys: torch.Tensor) -> torch.Tensor:
        """(K * batch,) lengths uniform on ``lo .. hi``."""
        return self.lo + self._below(self._bits(self._len_ctr, keys), self.hi - self.lo + 1)

    def sample(self, step) -> tuple[torch.Tensor, torch.Tensor]:
        return self._rows(self._keys(self._steps(step, 1)))

    def sample_block(self, step, K: int) -> tuple[torch.Tensor, torch.Tensor]:
        K = check_int("K", K, 1, 1 << 16)
        x, y = self._rows(self._keys(self._steps(step, K)))
        return x.reshape(K, self.batch, self.T), y.reshape(K, self.batch, self.T)

    def seed_keys(self, seeds) -> torch.Tensor:
        """The keys of ``seeds`` (a list of seeds) for :meth:`sample_seeds`, made once, on the device."""
        return torch.tensor([self._key_of(check_int("seed", s, 0, MAX_SEED, "MAX_SEED")) for s in seeds],
                            dtype=torch.int64, device=self.device)

    def _key_of(self, seed: int) -> int:
        """The key of ``seed`` on this sampler's stream (every counter of a batch is folded with it)."""
        return _fold(_fold(0x9E3779B9, self.stream), seed)

    def sample_seeds(self, step, seed_keys: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Batch ``step`` of several seeds at once, ``(R, batch, T)``: block r is what ``sample(step)`` of the same
        sampler made with seed r returns (the counters do not depend on the seed, only the key does), made by the
        kernels of one ``sample`` (several runs trained as one model: :mod:`lrnnkit.learn.batched`)."""
        x, y = self._rows(_fold(seed_keys, self._steps(step, 1)))
        return x.reshape(len(seed_keys), self.batch, self.T), y.reshape(len(seed_keys), self.batch, self.T)

    def _rows(self, keys: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:   # pragma: no cover - abstract
        """``(x, y)`` of shape ``(K * batch, T)`` for the batch keys ``(K,)``."""
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
            self._even = torch.arange(self.m, device=self.device) % 2 == 0
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

    def _words(self, keys) -> torch.Tensor:
        """(K * batch, m) letter indices."""
        bits = self._bits(self._ctr, keys)
        if self.task.words == "alternate":
            d = self._digits[self._below(bits, len(self._digits))]
            o = self._ops[self._below(bits, len(self._ops))]
            return torch.where(self._even, d, o)
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

    def _rows(self, keys):
        lens = self._lengths(keys)
        w = self._words(keys)
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

    # a node's kind: its size when 0 (none), 1 (a digit) or 2 ('-' digit); else 3 + its coin
    _NONE, _DIGIT, _NEG, _BRACKET, _BINARY = 0, 1, 2, 3, 4

    def __init__(self, task: BracketArithTask, batch, length, seed, device, stream=0):
        super().__init__(task, batch, length, seed, device, stream)
        if self.lo < 2:
            raise InputError(f"mod-arith-br needs length >= 2 (an expression and '='), got {length!r}")
        self.M = task.M
        self.levels = _tree_depth(self.T - 1)[self.T - 1]
        self._ctr = self._counters(self.batch, 4, self.levels, self.T)   # coin, split, operator, digit
        v = task._id
        self._tok_ops = self._tensor([v["+"], v["-"], v["*"]])
        self._minus, self._open, self._close, self._eq = v["-"], v["("], v[")"], v["="]

    def _rows(self, keys):
        T, M, dev = self.T, self.M, self.device
        lens = self._lengths(keys)
        R = lens.shape[0]
        bits = self._bits(self._ctr, keys)                                 # (R, 4, levels, T)
        # every node's choices at every level at once: (R, levels, T)
        kind3 = self._BRACKET + (bits[:, 0] >> 31)                       # bracket or binary, probability 1/2
        split = bits[:, 1]
        op = self._below(bits[:, 2], 3)                                   # '+', '-', '*'
        op_tok, is_mul = self._tok_ops[op], op == 2
        sign = torch.where(op == 1, -1, 1)
        digit = self._below(bits[:, 3], M)
        neg_digit = (M - digit) % M
        pos = self._pos.expand(R, T)
        nxt = (pos + 1).clamp(max=T - 1)
        x = torch.full((R, T + 1), self.task.pad_id, dtype=torch.int64, device=dev)   # column T: discarded writes
        size = torch.zeros((R, T + 1), dtype=torch.int64, device=dev)
        size[:, 0] = lens - 1
        nodes = []
        for lev in range(self.levels):                           # top-down: choices, tokens, children
            s = size[:, :T]
            kind = torch.where(s >= 3, kind3[:, lev], s)
            is_dig, is_neg, is_br, is_bin = (kind == k for k in (self._DIGIT, self._NEG, self._BRACKET, self._BINARY))
            s2 = (s - 2).clamp(min=0)
            at_op = pos + 1 + self._below(split[:, lev], s2)               # the operator after 1 .. s-2 tokens
            right = (at_op + 1).clamp(max=T - 1)
            nodes.append((is_dig, is_neg, is_bin, right))
            # first token: the digit, '-' or '('; second: the digit after '-', ')' or the operator
            first = torch.where(is_neg, self._minus, torch.where(is_dig, digit[:, lev], self._open))
            x.scatter_(1, torch.where(is_bin | (kind == self._NONE), T, pos), first)
            at2 = torch.where(is_neg, pos + 1, torch.where(is_br, pos + s - 1, torch.where(is_bin, at_op, T)))
            tok2 = torch.where(is_neg, digit[:, lev], torch.where(is_br, self._close, op_tok[:, lev]))
            x.scatter_(1, at2, tok2)
            size = torch.zeros_like(size)
            size.scatter_(1, torch.where(is_br, pos + 1, torch.where(is_bin, pos, T)),
                          torch.where(is_br, s2, at_op - pos))
            size.scatter_(1, torch.where(is_bin, at_op + 1, T), pos + s - 1 - at_op)
        # bottom-up: a node's signed terms as (first, sum of the others, last, single?) mod M, stored at its first
        # position (a single term: first = last, others 0); the value is first + others
        S = torch.zeros((4, R, T), dtype=torch.int64, device=dev)
        for lev in reversed(range(self.levels)):
            is_dig, is_neg, is_bin, right = nodes[lev]
            aF, aR, aL, a1 = S.unbind(0)                          # a binary node's left part starts with it
            bF, bR, bL, b1 = S.gather(2, right.expand(4, R, T)).unbind(0)   # its right part
            cF, cR = S[:2].gather(2, nxt.expand(2, R, T)).unbind(0)         # a bracket's content
            a1, b1 = a1 == 1, b1 == 1
            # E + E' / E - E': the terms of both, the first of E' negated for '-'
            bF2 = bF * sign[:, lev]
            add_R = aR + bF2 + bR
            add_L = torch.where(b1, bF2, bL)
            # E * E': the last term of E times the first of E'
            m = aL * bF
            mul_F = torch.where(a1, m, aF)
            mul_R = torch.where(a1, bR, aR - aL + m + bR)
            mul_L = torch.where(b1, m, bL)
            mul = is_mul[:, lev]
            leaf = torch.where(is_dig, digit[:, lev], torch.where(is_neg, neg_digit[:, lev], cF + cR))  # d, -d, (E)
            S = torch.stack([torch.where(is_bin, torch.where(mul, mul_F, aF), leaf),
                             torch.where(is_bin, torch.where(mul, mul_R, add_R), 0),
                             torch.where(is_bin, torch.where(mul, mul_L, add_L), leaf),
                             (~is_bin | (mul & a1 & b1)).long()]) % M
        value = (S[0, :, 0] + S[1, :, 0]) % M
        last = pos == (lens - 1)[:, None]
        return torch.where(last, self._eq, x[:, :T]), torch.where(last, value[:, None], IGNORE)


# ---------------------------------------------------------------------------------------------- copying
class CopySampler(DeviceSampler):
    """:class:`CopyTask` on the device: ``w <copy> w[:-1]``, targets ``w`` from ``<copy>`` on."""

    def __init__(self, task: CopyTask, batch, length, seed, device, stream=0):
        super().__init__(task, batch, length, seed, device, stream)
        self.T = 2 * self.hi
        self._pos = torch.arange(self.T, device=self.device)
        self._ctr = self._counters(self.batch, self.hi)

    def _rows(self, keys):
        lens = self._lengths(keys)[:, None]
        w = self._below(self._bits(self._ctr, keys), self.task.V)
        j = self._pos
        letter = w.gather(1, torch.where(j < lens, j, j - lens - 1).clamp(0, self.hi - 1))   # w, then w again
        x = torch.where(j == lens, self.task.V, torch.where(j < 2 * lens, letter, self.task.pad_id))
        tgt = (j - lens).clamp(0, self.hi - 1)
        y = torch.where((j >= lens) & (j < 2 * lens), w.gather(1, tgt), IGNORE)
        return x, y


def device_sampler(task: Task, batch: int, length, seed: int, device, stream: int = 0) -> DeviceSampler:
    """The :class:`DeviceSampler` of ``task`` (every kind of :mod:`.tasks`)."""
    for cls, kind in ((AutomatonTask, AutomatonSampler), (BracketArithTask, BracketSampler), (CopyTask, CopySampler)):
        if isinstance(task, cls):
            return kind(task, batch, length, seed, device, stream)
    raise InputError(f"no device sampler for task {getattr(task, 'name', task)!r} of type {type(task).__name__}")
