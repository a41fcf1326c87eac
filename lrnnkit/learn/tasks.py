"""Sequence tasks for training LRNNs: words of an automaton (or the papers' variants) with their targets.

A :class:`Task` draws a batch of input words and the target at every position, generated on the fly from a numpy
``Generator`` seeded by ``(seed, step)`` (:func:`batch_rng`), so batch ``s`` of a run is the same whatever happened
before it: a resumed run sees exactly the batches an uninterrupted one would.

Words of different lengths share a batch by right-padding with the token ``<pad>`` and the target
:data:`IGNORE` (the models are causal, so padding after a word cannot change the outputs on it).

Kinds of task (all share :meth:`Task.sample`):

* :class:`AutomatonTask` -- any FSA lrnnkit loads (:func:`lrnnkit.automata.sources.load_source`): uniform random
  letters (optionally a subset of the alphabet, e.g. 000 Section 5.2's "swaps only"), the automaton's output
  label (or state) after every prefix. ``tokens_per_transition = k`` writes every letter followed by ``k - 1``
  blank tokens (000, App. E.2.1, "4 tokens per transition": the blank acts as the identity; the target at
  position ``t`` is the output after the letters up to position ``t - k + 1``, the start state's output before).
* mod-arith expressions without brackets (000 App. E.1 / 002 ``ModArith(M)``): well-formed words
  ``d o d o ... d`` of the ``mod-arith:M`` automaton (``*`` before ``+ -``), supervised at every digit
  (``supervise="all"``, 002's transduction) or at the last position only (``"last"``, 000's one answer per
  sequence).
* :class:`BracketArithTask` -- modular arithmetic WITH brackets (000 App. E.1, context-free, not an FSA):
  random expressions over ``0..M-1``, ``+ - *``, unary ``-``, brackets, followed by ``=``; the target is the
  value mod M at the ``=`` position. Evaluated by a small recursive-descent evaluator (no ``eval``).

Named tasks (:func:`make_task`): ``parity``; ``group:S5`` / any SOURCE; ``S5-swaps`` / ``S5-3perm`` (letters
restricted to permutations moving at most 2 / 3 points; 000, Section 5.2); ``S5-4tok``, ``Z60-2tok`` (k tokens
per transition); ``sum:M`` (002's ``Sum(M)`` = ``counter``-like addition mod M over digits ``0..M-1``);
``even-pair:M`` (002's ``EvenPair(M)``); ``mod-arith:M`` (002 ``ModArith(M)``, all digits supervised);
``mod-arith-nb:M`` (000's "w/o brackets", last position); ``mod-arith-br:M`` (000's "w/ brackets");
``mod-arith-lr:M`` (004's modular arithmetic: operators applied left to right, no precedence, last position;
:func:`mod_arith_lr_fsa`);
``copy:V`` (:class:`CopyTask`: copy a string over V letters, 003 App. E.1 after Jelassi et al.). A name ending in
``+last`` (``parity+last``, ``sum:5+last``) is the same automaton task supervised at each word's last position only
(:data:`FINAL_ONLY`; 004 App. B.1: "the loss is calculated only on this final target prediction").

``chance`` is the accuracy of guessing uniformly among the output classes (000, App. E.1, ``Acc_rand``);
:func:`lrnnkit.learn.evaluate.scaled_accuracy` rescales by it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .. import limits
from ..errors import InputError
from ..fileio import recording_reads
from ..automata import builders
from ..automata.fsa import FSA
from ..automata.groups import named_group
from ..automata.sources import load_source

__all__ = ["Task", "AutomatonTask", "BracketArithTask", "CopyTask", "make_task", "batch_rng", "IGNORE", "PAD",
           "TASK_NAMES", "mod_arith_lr_fsa", "FINAL_ONLY"]

IGNORE = -100          # target value of positions without supervision (torch's cross_entropy ignore_index)
PAD = "<pad>"
BLANK = "<blank>"

TASK_NAMES = ("parity", "SOURCE (any lrnnkit source, e.g. group:S5)", "S5-swaps", "S5-3perm", "S5-4tok",
              "Z60-2tok", "<group>-swaps", "<group>-<k>tok", "sum:M", "even-pair:M", "mod-arith:M",
              "mod-arith-nb:M", "mod-arith-br:M", "copy:V", "mod-arith-lr:M", "<automaton task>+last")


def batch_rng(seed: int, step: int, stream: int = 0) -> np.random.Generator:
    """The generator of batch ``step`` of a run with ``seed`` (``stream`` separates train / test data):
    independent of every other batch, so data never depends on how a run was interrupted."""
    return np.random.default_rng([int(stream), int(seed), int(step)])


def _lengths(rng: np.random.Generator, batch: int, length) -> np.ndarray:
    if isinstance(length, (tuple, list)):
        lo, hi = int(length[0]), int(length[1])
    else:
        lo = hi = int(length)
    if lo < 1 or hi < lo:
        raise InputError(f"bad length range {length!r}: need 1 <= A <= B")
    return rng.integers(lo, hi + 1, size=batch)


@dataclass
class Task:
    """Base class: ``vocab`` (input token names, ``<pad>`` last), ``labels`` (output classes), ``chance``."""

    name: str
    vocab: tuple
    labels: tuple
    chance: float
    meta: dict = field(default_factory=dict)
    inputs = {}       # set by make_task: {absolute path: sha256} of the files the task was read from

    @property
    def n_in(self) -> int:
        return len(self.vocab)

    @property
    def n_out(self) -> int:
        return len(self.labels)

    @property
    def pad_id(self) -> int:
        return self.vocab.index(PAD)

    def sample(self, batch: int, length, rng: np.random.Generator):
        """``(tokens, targets)``, int64 arrays (B, T_max); ``length`` an int or an inclusive range ``(A, B)``."""
        lens = _lengths(rng, batch, length)
        T = int(lens.max())
        toks = np.full((batch, T), self.pad_id, dtype=np.int64)
        tgts = np.full((batch, T), IGNORE, dtype=np.int64)
        for L in np.unique(lens):
            rows = np.nonzero(lens == L)[0]
            x, y = self._sample_len(len(rows), int(L), rng)
            toks[rows, :L] = x
            tgts[rows, :L] = y
        return toks, tgts

    def _sample_len(self, n: int, L: int, rng):   # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self) -> dict:
        return {"name": self.name, "vocab": list(self.vocab), "labels": list(self.labels), "chance": self.chance,
                **self.meta}


class AutomatonTask(Task):
    """Random words of an FSA and its output label (``target="output"``) or state (``"state"``) per prefix.

    ``letters``: the allowed letters (indices; default all), drawn uniformly. ``supervise``: ``"all"`` positions,
    ``"last"`` position only, or ``"digits"`` (mod-arith: positions after a digit). ``words``: ``"uniform"`` or
    ``"alternate"`` (mod-arith: digit, operator, digit, ... of odd length)."""

    def __init__(self, fsa, *, name: str | None = None, target: str = "output", letters=None,
                 tokens_per_transition: int = 1, supervise: str = "all", words: str = "uniform"):
        if target not in ("output", "state"):
            raise InputError(f"target must be 'output' or 'state', got {target!r}")
        if supervise not in ("all", "last", "digits"):
            raise InputError(f"supervise must be 'all', 'last' or 'digits', got {supervise!r}")
        k = int(tokens_per_transition)
        if k < 1:
            raise InputError(f"tokens_per_transition must be >= 1, got {tokens_per_transition!r}")
        self.fsa = fsa
        self.letters = np.arange(fsa.n_letters) if letters is None else np.asarray(sorted(letters), dtype=np.int64)
        if self.letters.size == 0:
            raise InputError(f"no letters left for task {name or fsa.name!r}")
        self.k = k
        self.target = target
        self.supervise = supervise
        self.words = words
        vocab = tuple(fsa.alphabet) + ((BLANK,) if k > 1 else ()) + (PAD,)
        if target == "output":
            labels = fsa.output_alphabet
            self._lab = np.array([labels.index(o) for o in fsa.outputs], dtype=np.int64)
        else:
            labels = tuple(fsa.state_names or [str(q) for q in range(fsa.n_states)])
            self._lab = np.arange(fsa.n_states, dtype=np.int64)
        if words == "alternate":
            # mod-arith: well-formed words never reach the error state; drop its label from the classes
            labels = tuple(x for x in labels if x != "error")
            self._lab = np.array([labels.index(o) if o in labels else -1 for o in
                                  (fsa.outputs if target == "output" else labels)], dtype=np.int64)
        if len(labels) < 2:
            raise InputError(f"task {name or fsa.name!r} has a single output class ({', '.join(map(str, labels))}): "
                             "every answer is right, there is nothing to learn or to measure"[:240])
        super().__init__(name or fsa.name, vocab, labels, 1.0 / len(labels),
                         {"automaton": fsa.name, "letters": [fsa.alphabet[a] for a in self.letters],
                          "tokens_per_transition": k, "target": target, "supervise": supervise})

    def _letters(self, n: int, m: int, rng) -> np.ndarray:
        if self.words == "alternate":
            digits = np.array([a for a in self.letters if self.fsa.alphabet[a].isdigit()])
            ops = np.array([a for a in self.letters if not self.fsa.alphabet[a].isdigit()])
            w = np.empty((n, m), dtype=np.int64)
            w[:, 0::2] = rng.choice(digits, size=(n, (m + 1) // 2))
            if m > 1:
                w[:, 1::2] = rng.choice(ops, size=(n, m // 2))
            return w
        return rng.choice(self.letters, size=(n, m))

    def _sample_len(self, n: int, L: int, rng):
        k = self.k
        m = -(-L // k)                              # letters needed to fill L tokens
        w = self._letters(n, m, rng)
        states = self.fsa.trace_batch(w)            # (n, m): state after each letter
        lab = self._lab[states]
        if k == 1:
            x, y = w, lab
        else:
            x = np.full((n, m * k), self.fsa.n_letters, dtype=np.int64)   # BLANK
            x[:, 0::k] = w
            # the token at position j answers the letters up to position j - k + 1 (blanks are the identity)
            idx = (np.arange(m * k) - (k - 1)) // k                     # letter index answered at j, -1 = none
            start = self._lab[self.fsa.start]
            y = np.where(idx[None, :] >= 0, lab[:, np.maximum(idx, 0)], start)
            x, y = x[:, :L], y[:, :L]
        y = y.copy()
        if self.supervise == "last":
            y[:, :-1] = IGNORE
        elif self.supervise == "digits":
            isdig = np.array([s.isdigit() for s in self.fsa.alphabet] + [False] * (k > 1))
            y[~isdig[x]] = IGNORE
        return x, y


# ------------------------------------------------------------------------------------------------ brackets
class BracketArithTask(Task):
    """Modular arithmetic with brackets (000, App. E.1): ``E -> d | -d | ( E ) | E op E`` with ``op in + - *``
    (``*`` binds tighter, left associative), the word ``E =``, target = ``E mod M`` at ``=`` (other positions
    unsupervised). A word of exactly ``L`` tokens is drawn by choosing uniformly among the productions that can
    produce ``L - 1`` tokens (every length >= 2 is reachable)."""

    def __init__(self, M: int = 5, name: str | None = None):
        if M < 2:
            raise InputError(f"mod-arith-br: modulus must be >= 2, got {M}")
        self.M = M
        vocab = tuple(str(d) for d in range(M)) + ("+", "-", "*", "(", ")", "=", PAD)
        super().__init__(name or f"mod-arith-br:{M}", vocab, tuple(str(d) for d in range(M)), 1.0 / M,
                         {"modulus": M, "supervise": "last"})
        self._id = {s: i for i, s in enumerate(vocab)}

    def _gen(self, L: int, rng, out: list) -> None:
        M = self.M
        opts = []
        if L == 1:
            out.append(str(int(rng.integers(M))))
            return
        if L == 2:
            out += ["-", str(int(rng.integers(M)))]
            return
        opts = ["bracket", "binary"]
        choice = opts[int(rng.integers(2))]
        if choice == "bracket":
            out.append("(")
            self._gen(L - 2, rng, out)
            out.append(")")
        else:
            left = int(rng.integers(1, L - 1))      # 1 .. L-2 tokens on the left, L-1-left >= 1 on the right
            self._gen(left, rng, out)
            out.append("+-*"[int(rng.integers(3))])
            self._gen(L - 1 - left, rng, out)

    def evaluate(self, toks: list) -> int:
        """Value mod M of a token list (recursive descent; precedence * over + -)."""
        M, pos = self.M, [0]

        def peek():
            return toks[pos[0]] if pos[0] < len(toks) else None

        def atom():
            t = peek()
            pos[0] += 1
            if t == "(":
                v = expr()
                if peek() != ")":
                    raise InputError(f"unbalanced brackets in {' '.join(toks)!r}")
                pos[0] += 1
                return v
            if t == "-":
                return (-atom()) % M
            if t is not None and t.isdigit():
                return int(t) % M
            raise InputError(f"unexpected token {t!r} in {' '.join(toks)!r}")

        def term():
            v = atom()
            while peek() == "*":
                pos[0] += 1
                v = (v * atom()) % M
            return v

        def expr():
            v = term()
            while peek() in ("+", "-"):
                op = peek()
                pos[0] += 1
                w = term()
                v = (v + w) % M if op == "+" else (v - w) % M
            return v

        v = expr()
        if pos[0] != len(toks):
            raise InputError(f"trailing tokens in {' '.join(toks)!r}")
        return v

    def _sample_len(self, n: int, L: int, rng):
        if L < 2:
            raise InputError(f"mod-arith-br needs length >= 2 (an expression and '='), got {L}")
        x = np.empty((n, L), dtype=np.int64)
        y = np.full((n, L), IGNORE, dtype=np.int64)
        for i in range(n):
            toks: list = []
            self._gen(L - 1, rng, toks)
            x[i] = [self._id[t] for t in toks] + [self._id["="]]
            y[i, -1] = self.evaluate(toks)
        return x, y


# ------------------------------------------------------------------------------------------------ copying
class CopyTask(Task):
    """Copy a string (003, App. E.1, after Jelassi et al. 2024): for length ``L`` the word is ``w_1 .. w_L``
    (uniform over V letters), the token ``<copy>``, then ``w_1 .. w_{L-1}`` (teacher forcing: the model reads the
    copy so far); the target at ``<copy>`` and after it is the next letter of w (``w_1 .. w_L``), nothing before.
    A word of length L has ``2 L`` tokens; ``accuracy`` is 003's character accuracy, ``final_accuracy`` the last
    letter's."""

    def __init__(self, V: int = 26, name: str | None = None):
        if V < 2:
            raise InputError(f"copy: alphabet size must be >= 2, got {V}")
        self.V = V
        letters = tuple(f"c{i}" for i in range(V))
        super().__init__(name or f"copy:{V}", letters + ("<copy>", PAD), letters, 1.0 / V,
                         {"alphabet": V, "tokens_per_length": 2})

    def sample(self, batch: int, length, rng: np.random.Generator):
        lens = _lengths(rng, batch, length)
        T = 2 * int(lens.max())
        toks = np.full((batch, T), self.pad_id, dtype=np.int64)
        tgts = np.full((batch, T), IGNORE, dtype=np.int64)
        for i, L in enumerate(lens):
            w = rng.integers(self.V, size=int(L))
            toks[i, :2 * L] = np.concatenate([w, [self.V], w[:-1]])
            tgts[i, L:2 * L] = w
        return toks, tgts


# ------------------------------------------------------------------------------------------------ left to right
def mod_arith_lr_fsa(M: int) -> FSA:
    """Modular arithmetic applied left to right, without precedence (004, Section 3 'Tasks': 'a sequence
    alternating between integers ... and arithmetic operators; the model must compute and output the result of
    these operations, applied sequentially, with all calculations performed modulo' M; App. B.1's example
    ``3 * 9 - 17 + 6 + 12`` is ``((((3 * 9) - 17) + 6) + 12) mod M``). The operators are ``+ - *`` (the set is lost
    in the extraction; the example uses these three).

    Words ``d_0 o_1 d_1 ... o_r d_r`` over the digits ``0..M-1`` and ``+ - *``. States: ``(v, o)`` after an
    operator ``o`` (expecting a digit ``d``: ``v <- v o d mod M``), ``v`` after a digit (expecting an operator),
    the absorbing error state (two digits or two operators in a row, or a leading operator). The start state is
    ``(0, +)``: the first digit ``d`` gives ``0 + d = d``. Output: the value ``v`` (of the longest prefix ending in
    a digit, as :func:`lrnnkit.automata.builders.mod_arith`), ``"error"`` in the error state. ``4 M + 1`` states."""
    if not 2 <= M <= builders.MAX_MOD_ARITH:
        raise InputError(f"mod-arith-lr: the modulus must be in 2..{builders.MAX_MOD_ARITH}, got {M}")
    ops = ("+", "-", "*")
    apply = {"+": lambda v, d: (v + d) % M, "-": lambda v, d: (v - d) % M, "*": lambda v, d: (v * d) % M}
    keys = [("op", 0, "+")] + [("op", v, o) for v in range(M) for o in ops if (v, o) != (0, "+")] \
        + [("val", v) for v in range(M)] + [("error",)]
    index = {k: i for i, k in enumerate(keys)}
    err = index[("error",)]
    delta = np.full((len(keys), M + 3), err, dtype=np.int64)
    for k, q in index.items():
        if k[0] == "op":
            for d in range(M):
                delta[q, d] = index[("val", apply[k[2]](k[1], d))]
        elif k[0] == "val":
            for j, o in enumerate(ops):
                delta[q, M + j] = index[("op", k[1], o)]
    labels = tuple("error" if k[0] == "error" else str(k[1]) for k in keys)
    names = tuple("error" if k[0] == "error" else (f"v={k[1]}" if k[0] == "val" else f"v={k[1]},{k[2]}")
                  for k in keys)
    return FSA(tuple(str(d) for d in range(M)) + ops, delta, 0, None, labels, names, f"mod-arith-lr:{M}")


# ------------------------------------------------------------------------------------------------ names
def _moved_points_filter(group: str, max_moved: int) -> list[int]:
    G = named_group(group)
    P = np.array(G.perms, dtype=np.int64)
    moved = (P != np.arange(P.shape[1])[None, :]).sum(1)
    return [int(i) for i in np.nonzero(moved <= max_moved)[0]]


MAX_TOKENS_PER_LETTER = 64     # <group>-<k>tok: tokens written per letter


def _int_arg(name: str, arg: str, what: str = "modulus", hi: int = 10 ** 9) -> int:
    """A positive integer argument of a task name, at most ``hi``, checked as text before it is converted."""
    a = arg.strip()
    if not (a.isascii() and a.isdigit()) or len(a.lstrip("0")) > len(str(hi)) or not 1 <= int(a) <= hi:
        raise InputError(f"bad {what} {limits.shorten(arg, 30)} in task {limits.shorten(name, 60)}: expected an "
                         f"integer in 1..{hi}")
    return int(a)


def make_task(name: str, **kw) -> Task:
    """A task by name (module docstring): the papers' variants, or any lrnnkit SOURCE (per-position outputs).
    ``task.inputs`` maps the absolute path of each file the task was read from to the SHA-256 of its bytes
    (:func:`lrnnkit.fileio.recording_reads`; empty for presets): a checkpoint records it, so a run resumed on an
    edited file is refused (:func:`lrnnkit.learn.checkpoint.inputs_mismatch`)."""
    if not isinstance(name, str) or not name:
        raise InputError(f"empty task name {name!r}")
    with recording_reads() as seen:
        task = _make_task(name, **kw)
    task.inputs = dict(seen)
    return task


#: the task-name suffix that supervises each word's last position only (an automaton task's ``supervise="last"``)
FINAL_ONLY = "+last"


def _make_task(name: str, **kw) -> Task:
    if name.endswith(FINAL_ONLY) and len(name) > len(FINAL_ONLY):
        base = name[: -len(FINAL_ONLY)]
        if base.endswith(FINAL_ONLY):
            raise InputError(f"task {name!r}: {FINAL_ONLY!r} twice")
        task = _make_task(base, **{**kw, "supervise": "last"})    # tasks of another kind ignore the keyword
        if not isinstance(task, AutomatonTask) or task.k != 1:
            raise InputError(f"task {name!r}: {FINAL_ONLY!r} (supervise the last position only) applies to automaton "
                             f"tasks of one token per letter, not to {base!r}")
        task.name = name
        return task
    head, sep, arg = name.partition(":")
    if sep and head == "sum":
        M = _int_arg(name, arg, hi=math.isqrt(limits.MAX_TRANSITIONS))      # an M x M transition table
        # Sum(M) over digits 0..M-1: digit d adds d (002, Section 4.1); output = the sum mod M
        delta = [[(q + d) % M for d in range(M)] for q in range(M)]
        fsa = FSA(tuple(str(d) for d in range(M)), delta, 0, None, tuple(str(q) for q in range(M)), None,
                  f"sum:{M}")
        return AutomatonTask(fsa, name=name, **kw)
    if sep and head == "even-pair":
        return AutomatonTask(builders.even_pairs(_int_arg(name, arg)), name=name, **kw)
    if sep and head in ("mod-arith", "mod-arith-nb"):
        fsa = builders.mod_arith(_int_arg(name, arg))
        sup = "digits" if head == "mod-arith" else "last"
        return AutomatonTask(fsa, name=name, words="alternate", supervise=kw.pop("supervise", sup), **kw)
    if sep and head == "mod-arith-lr":
        fsa = mod_arith_lr_fsa(_int_arg(name, arg, hi=builders.MAX_MOD_ARITH))
        return AutomatonTask(fsa, name=name, words="alternate", supervise=kw.pop("supervise", "last"), **kw)
    if sep and head == "mod-arith-br":
        return BracketArithTask(_int_arg(name, arg), name=name)
    if sep and head == "copy":
        return CopyTask(_int_arg(name, arg), name=name)
    # <group>-swaps / <group>-3perm / <group>-<k>tok  (e.g. S5-swaps, S5-4tok, Z60-2tok)
    base, dash, variant = name.rpartition("-")
    ktok = variant.endswith("tok") and variant[:-3].isdigit()
    if not sep and dash and base and (variant in ("swaps", "3perm") or ktok):
        fsa = load_source(f"group:{base}")
        if variant in ("swaps", "3perm"):
            letters = _moved_points_filter(base, 2 if variant == "swaps" else 3)
            if len(letters) < 2:      # the identity alone: nothing to learn, every word maps to one state
                raise InputError(f"task {name!r}: no element of {base} but the identity moves at most "
                                 f"{2 if variant == 'swaps' else 3} points, so the task would train on the identity "
                                 f"letter alone; use group:{base}")
            return AutomatonTask(fsa, name=name, letters=letters, **kw)
        k = _int_arg(name, variant[:-3], "tokens per letter", MAX_TOKENS_PER_LETTER)
        return AutomatonTask(fsa, name=name, tokens_per_transition=k, **kw)
    return AutomatonTask(load_source(name), name=name, **kw)
