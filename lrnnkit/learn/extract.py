"""Automaton extraction: learn the automaton a sequence model implements with Angluin's L* (AALpy), and compare it
with the target.

The model is a *membership oracle*: a callable ``oracle(word) -> label`` that returns the model's output at the last
position of ``word`` (a list of letter indices, length >= 1). L* (Angluin 1987, "Learning regular sets from queries
and counterexamples"; AALpy's ``run_Lstar`` with ``automaton_type="moore"``) builds the minimal Moore machine
consistent with the answers. Moore machines have an output for the empty word, which an LRNN does not emit: it is
the ``initial_output`` argument (default: the target's start output, so that only non-empty words are compared).

Equivalence queries (the teacher) are answered by one of:

* ``"target"``: the minimal automaton of the target (:func:`lrnnkit.automata.minimize`). A shortest word ``w`` on
  which the hypothesis and the target differ (breadth-first search over the product automaton,
  :func:`lrnnkit.automata.distinguishing_word`) is a counterexample only if the *model* also disagrees with the
  hypothesis on ``w`` (the model is queried on it); otherwise the model itself differs from the target there, and a
  bounded random search (``random_steps`` letters: AALpy's random walk, or, for an oracle with a ``batch`` method,
  random words run as one batch) looks for a genuine counterexample instead. When the model
  implements the target, this teacher is exact and L* returns the target after at most ``n`` rounds.
* ``"random-walk"``: AALpy's random walk oracle (``random_steps`` letters, reset probability 0.09): no target needed.
* ``"w-method"``: AALpy's W-method oracle for at most ``max_states`` states (complete for SULs with at most that
  many states, exponential in ``max_states - |hypothesis|``). With the ``"target"`` teacher, ``max_states`` (if
  given) stops learning once a hypothesis has more states (a trained network need not be finite-state).

After learning, the extracted automaton (minimized, canonical breadth-first numbering) is compared with the minimal
target: ``isomorphic`` (canonical forms equal) or the shortest distinguishing word, together with the model's and
the target's outputs on it. L* certifies nothing about words it never asked: for a compiled lrnnkit model, use
:func:`lrnnkit.certify` for the all-lengths guarantee; extraction is the tool for *trained* models, where it tells
which automaton gradient descent found (000, Section 5 and 001, Section 5 read trained models only through accuracy
curves; extraction names the automaton).
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from ..automata.fsa import FSA
from ..automata.minimize import distinguishing_word, minimize
from ..errors import InputError
from ..automata.bridges import to_aalpy
from ..automata.io import fsa_from_dict
from ..automata.sources import load_source
from ..model import Model
from .device import require_device
from .compare import model_outputs, shortest_disagreement, torch_outputs
from .locate import is_trained_path

__all__ = ["Extraction", "ExtractionStopped", "extract_automaton", "extract_from_trained", "extract_checkpoint", "model_oracle",
           "torch_oracle", "ModelOracle", "EQ_ORACLES", "have_aalpy"]

EQ_ORACLES = ("target", "random-walk", "w-method")


def _aalpy():
    try:
        import aalpy  # noqa: F401
        from aalpy.base import SUL, Oracle
        from aalpy.learning_algs import run_Lstar
        from aalpy.oracles import RandomWalkEqOracle, WMethodEqOracle
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise InputError("automaton extraction needs AALpy: pip install 'lrnnkit[learn]' (or pip install aalpy)") \
            from None
    return SUL, Oracle, run_Lstar, RandomWalkEqOracle, WMethodEqOracle


def have_aalpy() -> bool:
    """Whether automaton extraction can run in this environment (AALpy and what it imports are installed)."""
    try:
        _aalpy()
    except InputError:
        return False
    return True


# --------------------------------------------------------------------------- oracles from models
class ExtractionStopped(RuntimeError):
    """L* did not finish: AALpy stopped it (e.g. it saw two answers to one query)."""


class _BatchOracle:
    """A membership oracle over a batch function ``self.batch((B, T) int array) -> (B, T) labels``: ``oracle(word)``
    is the label after the last letter, ``oracle.trace(word)`` the label after every prefix (one run)."""
    batch = None

    def trace(self, word: Sequence[int]) -> list:
        if len(word) == 0:
            return []
        return [str(x) for x in self.batch(np.asarray([list(word)], dtype=np.int64))[0]]

    def __call__(self, word: Sequence[int]) -> str:
        if len(word) == 0:
            raise InputError("a membership query needs a non-empty word (a model has no output before input)")
        return self.trace(word)[-1]


class ModelOracle(_BatchOracle):
    """A compiled lrnnkit :class:`~lrnnkit.model.ir.Model` as a membership oracle.

    ``oracle(word)`` is the output label after the last letter; ``oracle.trace(word)`` the label after every
    prefix (one float64 run through :func:`lrnnkit.executor.run_float`, so a query of length T costs one pass);
    ``oracle.batch(words)`` the labels for a (B, T) array of words in one run."""

    def __init__(self, model):
        self.model = model
        self.alphabet = list(model.alphabet)
        self.batch = model_outputs(model)


def model_oracle(model) -> ModelOracle:
    """``model_oracle(model)(word) -> label``: a compiled Model (or a path to one) as a membership oracle."""
    if isinstance(model, (str,)):
        model = Model.load(model)
    if not isinstance(model, Model):
        raise InputError(f"model_oracle expects an lrnnkit Model, got {type(model).__name__}")
    return ModelOracle(model)


class _TorchOracle(_BatchOracle):
    def __init__(self, module, labels, device, alphabet=None):
        self.module, self.labels, self.device = module, list(labels), device
        self.batch = torch_outputs(module, self.labels, device)
        if alphabet is not None:
            self.alphabet = list(alphabet)


def torch_oracle(module, labels: Sequence[str], device="cpu", alphabet: Sequence[str] | None = None):
    """A trained torch sequence model as a membership oracle: ``module(tokens (1, T) long) -> logits (1, T, n_out)``
    (or a tuple whose first item is the logits); the label is ``labels[argmax]`` at the last position. Token ids
    are the letter indices (``alphabet``, e.g. an :class:`~lrnnkit.learn.tasks.AutomatonTask`'s automaton
    alphabet, whose ids come first in the task's vocabulary)."""
    return _TorchOracle(module, labels, device, alphabet)


def extract_from_trained(model, task, *, eq_oracle: str = "target", random_steps: int = 500,
                         max_rounds: int | None = 4, max_states: int | None = None, seed: int = 0,
                         device="cpu") -> Extraction:
    """Extract the automaton a trained :class:`~lrnnkit.learn.models.SequenceModel` computes on an
    :class:`~lrnnkit.learn.tasks.AutomatonTask` (one token per letter), with the task's automaton as the target.
    ``max_rounds`` and ``max_states`` (default 4 x the target's minimal states) bound L* (a trained network need
    not be finite-state: each counterexample may add states)."""
    fsa = getattr(task, "fsa", None)
    if fsa is None or getattr(task, "k", 1) != 1:
        raise InputError("extract_from_trained needs an automaton task with one token per letter")
    was = model.training
    model.eval()
    try:
        oracle = torch_oracle(model, task.labels, device, alphabet=fsa.alphabet)
        if max_states is None:
            max_states = 4 * minimize(fsa).n_states
        return extract_automaton(oracle, list(fsa.alphabet), target=fsa, eq_oracle=eq_oracle,
                                 random_steps=random_steps, max_rounds=max_rounds, max_states=max_states,
                                 seed=seed)
    finally:
        model.train(was)


# --------------------------------------------------------------------------- the result
@dataclass
class Extraction:
    """What L* found. ``automaton``: the extracted automaton, minimized (canonical BFS numbering), over the
    alphabet given to :func:`extract_automaton`. ``target``: the minimal target or None. ``isomorphic``: equal
    canonical forms (None without target). ``distinguishing_word``: a shortest word (letter indices) on which
    they differ, with ``model_output`` (the oracle's own answer on it, queried again) and ``target_output`` on
    it. ``stats``: rounds, membership queries, oracle calls, seconds, and where learning stopped early."""
    automaton: FSA
    target: FSA | None
    isomorphic: bool | None
    distinguishing_word: list | None
    model_output: str | None
    target_output: str | None
    eq_oracle: str
    stats: dict = field(default_factory=dict)
    comparison: object = None

    @property
    def distinguishing_symbols(self) -> list | None:
        if self.distinguishing_word is None:
            return None
        return [self.automaton.alphabet[a] for a in self.distinguishing_word]

    def to_aalpy(self, kind: str = "auto"):
        """The extracted automaton as an AALpy ``Dfa`` (outputs ``"0"``/``"1"``) or ``MooreMachine``
        (:func:`lrnnkit.automata.bridges.to_aalpy`)."""
        return to_aalpy(self.automaton, kind)

    def to_json(self) -> dict:
        a = self.automaton
        out = {"extracted_states": a.n_states,
               "target_states": None if self.target is None else self.target.n_states,
               "isomorphic": self.isomorphic, "distinguishing_word": self.distinguishing_symbols,
               "model_output": self.model_output, "target_output": self.target_output,
               "eq_oracle": self.eq_oracle, "automaton": a.to_dict(), **self.stats}
        if self.comparison is not None:
            out["comparison"] = self.comparison.to_json()
        return out


# --------------------------------------------------------------------------- the learner
def _make_sul(oracle: Callable, alphabet: list, initial_output: str):
    SUL, *_ = _aalpy()
    index = {s: i for i, s in enumerate(alphabet)}
    trace_fn = getattr(oracle, "trace", None)

    class _OracleSUL(SUL):
        """AALpy SUL over an oracle; answers are memoized per prefix (a trace call fills every prefix)."""

        def __init__(self):
            super().__init__()
            self.memo: dict = {}
            self.prefix: list = []
            self.oracle_calls = 0

        def _answer(self, word: tuple) -> str:
            got = self.memo.get(word)
            if got is None:
                self.oracle_calls += 1
                if trace_fn is not None:
                    outs = trace_fn(list(word))
                    if len(outs) != len(word):
                        raise InputError(f"oracle trace returned {len(outs)} outputs for a word of length {len(word)}")
                    for i, o in enumerate(outs):   # the first answer of a prefix stands: AALpy checks its
                        self.memo.setdefault(word[: i + 1], str(o))   # cache against every later one
                else:
                    self.memo[word] = str(oracle(list(word)))
                got = self.memo[word]
            return got

        def pre(self):
            self.prefix = []

        def post(self):
            pass

        def step(self, letter):
            if letter is None:
                return initial_output
            self.prefix.append(index[letter])
            return self._answer(tuple(self.prefix))

        def query(self, word):
            self.num_queries += 1
            if len(word) == 0:
                return [initial_output]
            w = tuple(index[x] for x in word)
            self.num_steps += len(w)
            if trace_fn is not None and w not in self.memo:
                self._answer(w)
            return [self._answer(w[: i + 1]) for i in range(len(w))]

    return _OracleSUL()


def _moore_to_fsa(hyp, alphabet: list, name: str) -> FSA:
    states = list(hyp.states)
    num = {id(s): i for i, s in enumerate(states)}
    delta = np.array([[num[id(s.transitions[a])] for a in alphabet] for s in states], dtype=np.int64)
    labels = tuple(str(s.output) for s in states)
    return minimize(FSA(tuple(alphabet), delta, num[id(hyp.initial_state)], None, labels, None, name))


def _fsa_output(fsa: FSA, word: Sequence[int]) -> str:
    return fsa.outputs[fsa.run(word)]


def _batched_walk(h: FSA, batch_fn: Callable, memo: dict, steps: int, rng) -> tuple | None:
    """Random words of geometric length (mean 1 / 0.09 letters, AALpy's reset probability) adding up to ``steps``
    letters, run through ``batch_fn`` at once (the answers of every prefix go to ``memo``); the shortest prefix on
    which the model and the hypothesis ``h`` differ (as symbols), or None."""
    lengths = []
    while sum(lengths) < steps:
        lengths.append(int(rng.geometric(0.09)))
    T = max(lengths)
    words = rng.integers(0, h.n_letters, size=(len(lengths), T))
    got = np.asarray(batch_fn(words)).astype(str)
    want = np.array(h.outputs, dtype=str)[h.trace_batch(words)]
    best = None
    for i, n in enumerate(lengths):
        w = words[i].tolist()
        for t in range(n):
            memo.setdefault(tuple(w[: t + 1]), str(got[i, t]))
        bad = np.nonzero(got[i, :n] != want[i, :n])[0]
        if bad.size and (best is None or bad[0] + 1 < len(best)):
            best = w[: int(bad[0]) + 1]
    return None if best is None else tuple(h.alphabet[a] for a in best)


def extract_automaton(oracle: Callable, alphabet: Sequence[str] | None = None, *, target: FSA | None = None,
                      initial_output: str | None = None, eq_oracle: str = "target", random_steps: int = 2000,
                      max_states: int | None = None, max_rounds: int | None = None, seed: int = 0,
                      known: dict | None = None) -> Extraction:
    """Extract the automaton behind ``oracle`` with L* and compare it with ``target``.

    ``oracle(word: list[int]) -> label`` (optionally with ``oracle.trace(word) -> labels of every prefix``, and
    ``oracle.batch(words (B, T)) -> labels (B, T)``: then the ``"target"`` teacher's random search draws its
    ``random_steps`` letters as a batch of random words, run at once, instead of AALpy's letter-by-letter walk);
    ``alphabet``: the symbol names (default: ``oracle.alphabet``, else the target's). ``target``: an FSA over the
    same alphabet (any, it is minimized here). ``known``: answers already computed, ``{word tuple: label}``
    (e.g. by :func:`lrnnkit.learn.compare.shortest_disagreement`). Returns an :class:`Extraction`.
    """
    _, Oracle, run_Lstar, RandomWalkEqOracle, WMethodEqOracle = _aalpy()
    if alphabet is None:
        alphabet = getattr(oracle, "alphabet", None) or (list(target.alphabet) if target is not None else None)
    if not alphabet:
        raise InputError("extract_automaton: give the alphabet (or an oracle/target that has one)")
    alphabet = [str(a) for a in alphabet]
    if eq_oracle not in EQ_ORACLES:
        raise InputError(f"unknown equivalence oracle {eq_oracle!r} (one of {', '.join(EQ_ORACLES)})")
    tmin = None
    if target is not None:
        if list(target.alphabet) != alphabet:
            raise InputError(f"the target's alphabet {list(target.alphabet)[:10]} differs from the oracle's "
                             f"{alphabet[:10]}")
        tmin = minimize(target)
    if eq_oracle == "target" and tmin is None:
        raise InputError("equivalence oracle 'target' needs a target automaton")
    if initial_output is None:
        initial_output = tmin.outputs[tmin.start] if tmin is not None else "<start>"
    if random_steps < 0:
        raise InputError(f"random_steps must be >= 0, got {random_steps}")

    sul = _make_sul(oracle, alphabet, str(initial_output))
    if known:
        sul.memo.update({tuple(int(a) for a in w): str(o) for w, o in known.items()})
    batch_fn = getattr(oracle, "batch", None)
    walk_rng = np.random.default_rng(seed)
    rng_state = random.getstate()
    random.seed(seed)  # AALpy's oracles draw from the global `random` module
    stats = {"counterexamples_from_target": 0, "counterexamples_from_walks": 0}
    try:
        if eq_oracle == "random-walk":
            eq = RandomWalkEqOracle(alphabet, sul, num_steps=max(random_steps, 1), reset_after_cex=True,
                                    reset_prob=0.09)
        elif eq_oracle == "w-method":
            if max_states is None:
                max_states = (tmin.n_states + 1) if tmin is not None else 8
            eq = WMethodEqOracle(alphabet, sul, max_number_of_states=int(max_states))
        else:
            walk = RandomWalkEqOracle(alphabet, sul, num_steps=max(random_steps, 1), reset_after_cex=True,
                                      reset_prob=0.09)

            class _TargetOracle(Oracle):
                def find_cex(self, hypothesis):
                    walk.sul = self.sul  # run_Lstar replaces eq.sul by its caching wrapper: share it
                    if max_states is not None and len(hypothesis.states) > max_states:
                        stats["stopped_at_state_bound"] = int(max_states)
                        return None
                    h = _moore_to_fsa(hypothesis, alphabet, "hypothesis")
                    w = distinguishing_word(h, tmin)
                    if w is not None and w:
                        sym = [alphabet[a] for a in w]
                        out = self.sul.query(tuple(sym))
                        if out[-1] != _fsa_output(h, w):
                            stats["counterexamples_from_target"] += 1
                            return tuple(sym)
                    if random_steps == 0:
                        return None
                    cex = (_batched_walk(h, batch_fn, sul.memo, random_steps, walk_rng) if batch_fn is not None
                           else walk.find_cex(hypothesis))
                    if cex is not None:
                        stats["counterexamples_from_walks"] += 1
                    return cex

            eq = _TargetOracle(alphabet, sul)
        t0 = time.perf_counter()
        try:
            hyp, info = run_Lstar(alphabet, sul, eq, automaton_type="moore", cache_and_non_det_check=True,
                                  max_learning_rounds=max_rounds, return_data=True, print_level=0)
        except SystemExit as exc:   # AALpy stops the interpreter on a non-deterministic answer: make it an error
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else "stopped"
            raise ExtractionStopped(f"AALpy stopped L*: {first}") from None
        seconds = time.perf_counter() - t0
    finally:
        random.setstate(rng_state)
    ext = _moore_to_fsa(hyp, alphabet, "extracted")
    stats.update(rounds=int(info.get("learning_rounds", 0)), membership_queries=int(info.get("queries_learning", 0)),
                 equivalence_queries_steps=int(info.get("steps_eq_oracle", 0)), oracle_calls=sul.oracle_calls,
                 seconds=round(seconds, 4))
    if tmin is None:
        return Extraction(ext, None, None, None, None, None, eq_oracle, stats)
    w = distinguishing_word(ext, tmin)
    if w is None:
        return Extraction(ext, tmin, True, None, None, None, eq_oracle, stats)
    model_out = str(oracle(list(w))) if w else str(initial_output)
    return Extraction(ext, tmin, ext == tmin, list(w), model_out, _fsa_output(tmin, w), eq_oracle, stats)


# --------------------------------------------------------------------------- from a file
def _is_checkpoint(path: str) -> bool:
    import os
    return os.path.isdir(path) or is_trained_path(path)     # a directory without one: load_checkpoint says so


def _aligned(target: FSA, alphabet: Sequence[str], where: str) -> FSA:
    """``target`` with its letters in the order ``alphabet`` (the model's token order)."""
    alphabet = list(alphabet)
    if list(target.alphabet) == alphabet:
        return target
    if sorted(target.alphabet) != sorted(alphabet):
        raise InputError(f"the target's alphabet {list(target.alphabet)[:10]} is not the alphabet of {where} "
                         f"{alphabet[:10]}")
    perm = [target.symbol_index[s] for s in alphabet]
    return FSA(tuple(alphabet), target.delta[:, perm], target.start, target.accepting, target.labels,
               target.state_names, target.name)


def extract_checkpoint(path: str, target=None, *, eq_oracle: str = "target", max_rounds: int | None = None,
                       max_states: int | None = None, random_steps: int = 500, seed: int = 0,
                       max_words: int = 2 ** 16, max_length: int = 64, device: str = "cpu") -> Extraction:
    """The automaton a trained model implements, compared with its target.

    ``path``: a ``lrnnkit train --out`` run directory or its ``checkpoint.json`` (the model is rebuilt through
    :func:`lrnnkit.learn.train.load_checkpoint`, its task from the recorded config), or a compiled model JSON.
    ``target``: an FSA or any source (default: the checkpoint's task automaton, or the automaton recorded in the
    compiled model). L* (:func:`extract_automaton`, teacher ``eq_oracle``; ``max_states`` defaults to 4 x the
    target's minimal states, a trained network need not be finite-state) gives ``automaton``,
    ``isomorphic`` and the shortest ``distinguishing_word`` between the extracted automaton and the target
    (product search, every length). ``comparison`` (:func:`lrnnkit.learn.compare.shortest_disagreement`) checks
    the model itself on every word up to the length that ``max_words`` allows: its shortest disagreement with the
    target, or agreement up to a stated length.
    """
    require_device(device)
    if _is_checkpoint(path):
        from .checkpoint import task_of
        from .train import load_checkpoint
        doc, net = load_checkpoint(path, device)
        net.eval()
        task = task_of(doc, f"checkpoint {path!r}")
        fsa = getattr(task, "fsa", None)
        if fsa is None or getattr(task, "k", 1) != 1:
            raise InputError(f"{path}: extraction needs a task with one token per letter of an automaton "
                             f"(task {doc['config']['task']!r} is not one)")
        alphabet = list(fsa.alphabet)
        oracle = torch_oracle(net, task.labels, device, alphabet=alphabet)
        batch = torch_outputs(net, task.labels, device)
        default = fsa
    else:
        model = Model.load(path)
        oracle = model_oracle(model)
        alphabet = list(model.alphabet)
        batch = model_outputs(model)
        rec = (model.provenance or {}).get("automaton")
        default = fsa_from_dict(rec, f"{path}: recorded automaton") if rec else None
    if target is None:
        target = default
        if target is None:
            raise InputError(f"{path}: no automaton recorded in the model; give a target")
    elif not isinstance(target, FSA):
        target = load_source(target)
    target = _aligned(target, alphabet, path)
    if max_states is None:
        max_states = 4 * minimize(target).n_states
    known: dict = {}
    comparison = shortest_disagreement(batch, target, max_words=max_words, max_length=max_length, record=known)
    ext = extract_automaton(oracle, alphabet, target=target, eq_oracle=eq_oracle, random_steps=random_steps,
                            max_rounds=max_rounds, max_states=max_states, seed=seed, known=known)
    ext.comparison = comparison
    return ext
