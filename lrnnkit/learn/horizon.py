"""The horizon of a trained model: the shortest input on which it is wrong, or the statement that none exists up to
a stated length, beside its accuracy against length and the automaton it implements.

A trained sequence model ``M`` and a target automaton ``A`` (the task's: the output label after every prefix) over
the letters the task draws. Three measurements, each exact about what it states:

* **Exhaustive search** (:func:`lrnnkit.learn.compare.shortest_disagreement`): every word of length 1, 2, ... in
  turn, while the total stays within ``max_words``. Either a word ``w`` with ``M(w) != A(w)`` is found at length
  ``L`` -- then it is a *shortest* wrong word, every shorter word having been checked -- and the ``horizon`` is
  ``L``; or ``M`` is right on every word of length ``<= exhaustive_up_to``.
* **Accuracy against length**: ``samples`` uniformly random words of length ``max_len`` (seeded); a causal model's
  output after the first ``t`` letters is its answer on a uniformly random word of length ``t``, so one batch gives
  the whole curve, ``accuracy_by_length[t]`` = the fraction of the samples right after ``t`` letters.
  ``wrong_at_length`` is the shortest length at which any wrong word is known (from the search, the samples, or the
  extraction below, every one re-run on the model): an upper bound on the horizon where the search did not reach.
* **Extraction** (:func:`lrnnkit.learn.extract.extract_automaton`, Angluin's L* with the target as teacher): the
  minimal automaton consistent with the model's answers, its number of states, whether it is isomorphic to the
  minimal target, and otherwise a shortest word distinguishing the two (product search, any length). L* sees
  finitely many words: an isomorphic extraction is evidence, not proof, that ``M`` implements ``A``; the proven part
  is the exhaustive one.

A compiled lrnnkit model certified by :func:`lrnnkit.certify` has horizon infinity (000, Theorem 3 and 001,
Theorem 1 constructions; the certificate covers every length). A trained model's horizon is where state drift in
finite precision, or a wrong automaton, first shows (000, Section 5 and 001, Section 5 report only accuracy at a
few lengths).
"""
from __future__ import annotations

import time

import numpy as np

from ..automata.fsa import FSA
from ..automata.minimize import minimize
from ..errors import InputError
from .compare import shortest_disagreement, torch_outputs
from .extract import ExtractionStopped, _BatchOracle, extract_automaton, have_aalpy
from .device import require_device
from .tasks import AutomatonTask, make_task

__all__ = ["horizon", "horizon_checkpoint", "horizon_target", "horizon_statement"]


def horizon_target(task_or_fsa):
    """``(fsa, letters, labels)``: the target automaton over the task's letters (outputs = the task's labels per
    state), the token id of each of its letters, and the model's output classes in order. Raises InputError (with
    the reason) for tasks whose inputs are not all words over their letters, one token per letter."""
    if isinstance(task_or_fsa, FSA):
        fsa = task_or_fsa
        return fsa, np.arange(fsa.n_letters), list(fsa.output_alphabet)
    task = make_task(task_or_fsa) if isinstance(task_or_fsa, str) else task_or_fsa
    if not isinstance(task, AutomatonTask):
        raise InputError(f"task {task.name!r} is not an automaton task: no horizon")
    if task.k != 1:
        raise InputError(f"task {task.name!r} has {task.k} tokens per letter: no horizon (one token per letter only)")
    if task.words != "uniform" or task.supervise == "digits":
        raise InputError(f"task {task.name!r} draws only well-formed words: no horizon over all words")
    fsa, letters, labels = task.fsa, np.asarray(task.letters), list(task.labels)
    outs = tuple(labels[i] for i in task._lab)      # the label of each state, as the task trains it
    sub = FSA(tuple(fsa.alphabet[a] for a in letters), fsa.delta[:, letters], fsa.start, None, outs, None,
              f"{task.name} (task labels)")
    return sub, letters, labels


class _Budget(Exception):
    """L*'s budget of model runs or seconds is spent (a trained model need not be finite-state: its observation
    table can grow without end before the first equivalence query)."""


class _Oracle(_BatchOracle):
    """The model's label after every prefix, for words over the target's letters (indices into ``letters``)."""

    def __init__(self, model, letters, labels, device, autocast: bool = False, autocast_cpu: bool = False):
        self.letters = np.asarray(letters, dtype=np.int64)
        if autocast or autocast_cpu:  # bf16 autocast: the precision CUDA training evaluates in, or the CPU's
            import torch
            inner = model

            def model(x):
                on = autocast if x.is_cuda else autocast_cpu
                with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=on):
                    return inner(x)
        self._out = torch_outputs(model, labels, device)
        self.calls = 0
        self.limit = None           # (max calls, deadline) while L* runs

    def batch(self, words) -> np.ndarray:
        self.calls += 1
        if self.limit is not None and self.calls > self.limit[0]:
            raise _Budget(f"stopped after {self.limit[2]} model runs")
        if self.limit is not None and time.perf_counter() > self.limit[1]:
            raise _Budget(f"stopped after {self.limit[3]:g} s")
        return np.asarray(self._out(self.letters[np.asarray(words, dtype=np.int64)])).astype(str)


CURVE_TOKENS = 1 << 17     # tokens per forward pass of the accuracy curve (memory of one inference batch)


def _curve_lengths(max_len: int) -> list:
    ls, L = [], 1
    while L < max_len:
        ls.append(L)
        L *= 2
    return ls + [max_len]


def _outputs(oracle, words: np.ndarray) -> np.ndarray:
    """The model's label after every prefix of ``words`` (N, L), :data:`CURVE_TOKENS` tokens per forward pass."""
    per = max(1, CURVE_TOKENS // words.shape[1])
    return np.concatenate([oracle.batch(words[i:i + per]) for i in range(0, len(words), per)])


def _shortest_known(wrong: list, sym) -> dict:
    """``wrong_at_length`` and ``wrong_word``: the shortest of the words (re-run on the model) known wrong."""
    if not wrong:
        return {"wrong_at_length": None, "wrong_word": None}
    best = min(wrong, key=len)
    return {"wrong_at_length": len(best), "wrong_word": sym(best)}


WRONG_PAIRS = 5     # the most frequent (target, model) pairs kept per curve length


def _wrong_pairs(got: np.ndarray, want: np.ndarray, right: np.ndarray, lengths) -> dict:
    """{length: {"target->model": count}} of the wrong answers of the sampled curve at each length where any is
    wrong, the :data:`WRONG_PAIRS` most frequent pairs: whether a model's errors are systematic (one wrong answer
    per target, e.g. the count shifted by the same amount on every word of a length) or scattered."""
    out = {}
    for L in lengths:
        bad = ~right[:, L - 1]
        if bad.any():
            pairs, counts = np.unique(np.stack([want[bad, L - 1], got[bad, L - 1]], 1), axis=0, return_counts=True)
            top = sorted(zip(counts.tolist(), pairs.tolist()), key=lambda x: (-x[0], x[1]))[:WRONG_PAIRS]
            out[str(L)] = {f"{t}->{m}": int(c) for c, (t, m) in top}
    return out


def horizon(model, task_or_fsa, *, max_len: int = 256, max_words: int = 2 ** 14, samples: int = 256,
            extract: bool = True, max_extract_cells: int = 512, max_extract_queries: int = 5000,
            max_extract_seconds: float = 30.0, max_rounds: int = 4, random_steps: int = 500,
            seed: int = 0, device: str = "cpu", autocast: bool = False, autocast_cpu: bool = False) -> dict:
    """The horizon of ``model`` (a torch module: tokens ``(B, T)`` long -> logits ``(B, T, n_out)``, or a tuple
    whose first item is the logits) on ``task_or_fsa`` (an :class:`~lrnnkit.learn.tasks.AutomatonTask`, a task name,
    or an FSA whose letter ``i`` is token ``i`` and whose output labels are the model's classes in
    ``output_alphabet`` order). Module docstring for the math.

    ``max_words``: the exhaustive search's budget (all words of length 1..L while the total fits); ``max_len`` and
    ``samples``: the accuracy curve's length and number of random words; ``extract``: run L* when the minimal target
    has at most ``max_extract_cells`` (states x letters) cells (``max_rounds`` rounds, ``random_steps`` letters of
    random search per equivalence query, stopped after ``max_extract_queries`` model runs or
    ``max_extract_seconds``); ``autocast``: run the model under bf16 autocast on CUDA (as training
    evaluates it; the horizon is the model's in the precision it runs in); ``autocast_cpu``: under bf16 autocast
    on the CPU (torch's CPU autocast: bf16 matrix products, the CPU chunk equations' included -- a bf16 run, not
    the CUDA kernels' numerics). Returns a JSON-able dict: ``bf16_autocast`` (whether autocast applied),
    ``horizon`` (the length of a shortest wrong word, when the search found one, else None),
    ``shortest_wrong_word`` (its symbols) with ``model_output`` and ``target_output`` on it, ``exhaustive_up_to``,
    ``words_checked``, ``wrong_at_length`` and ``wrong_word`` (the shortest wrong word known from any source),
    ``accuracy_by_length`` ({length: accuracy} at 1, 2, 4, ..., ``max_len``), ``wrong_pairs_by_length`` (at those
    lengths, the most frequent ``"target->model"`` pairs among the wrong answers: :func:`_wrong_pairs`),
    ``first_length_below_1`` of the sampled curve, ``extracted_states``, ``target_states``,
    ``isomorphic_to_target``, ``extraction_word`` (a shortest word separating extraction and target), ``seconds``
    and ``statement`` (one line). Without AALpy the extraction is skipped (``extraction.missing = "aalpy"``); the
    shortest wrong word and the curve do not need it. A task that draws only well-formed words (002's ModArith)
    is measured over those words alone (:func:`_well_formed_horizon`: ``words`` = ``"well-formed"``, no
    extraction)."""
    if max_len < 1 or max_words < 1 or samples < 1:
        raise InputError(f"max_len, max_words and samples must be >= 1 (got {max_len}, {max_words}, {samples})")
    t0 = time.perf_counter()
    task = make_task(task_or_fsa) if isinstance(task_or_fsa, str) else task_or_fsa
    if isinstance(task, AutomatonTask) and task.words == "alternate" and task.k == 1:
        out = _well_formed_horizon(model, task, max_len=max_len, max_words=max_words, samples=samples, seed=seed,
                                   device=device, autocast=autocast, autocast_cpu=autocast_cpu)
        return {**out, "seconds": round(time.perf_counter() - t0, 3), "statement": horizon_statement(out)}
    fsa, letters, labels = horizon_target(task_or_fsa)
    was = getattr(model, "training", None)
    if was is not None:
        model.eval()
    try:
        oracle = _Oracle(model, letters, labels, device, autocast, autocast_cpu)
        sym = lambda w: [fsa.alphabet[a] for a in w]  # noqa: E731
        known: dict = {}
        comp = shortest_disagreement(oracle.batch, fsa, max_words=max_words, max_length=max_len, record=known)
        out = {"target": fsa.name, "letters": len(letters),
               "bf16_autocast": bool(autocast if str(device).startswith("cuda") else autocast_cpu),
               "horizon": None, "shortest_wrong_word": None,
               "model_output": None, "target_output": None, "exhaustive_up_to": comp.agrees_up_to,
               "words_checked": comp.words_checked}
        wrong = []      # (length, word) on which the model is wrong, re-run on the model
        if comp.word is not None:
            got = oracle(comp.word)
            want = fsa.outputs[fsa.run(comp.word)]
            if got == want:     # pragma: no cover - a model whose answer changes between two runs
                raise InputError("the model answered the same word differently on two runs")
            out.update(horizon=len(comp.word), shortest_wrong_word=sym(comp.word), model_output=got,
                       target_output=want)
            wrong.append(comp.word)
        # the accuracy curve: one batch of random words of length max_len, read at every prefix
        rng = np.random.default_rng(seed)
        words = rng.integers(0, fsa.n_letters, size=(samples, max_len))
        got = _outputs(oracle, words)
        want = np.array(fsa.outputs, dtype=str)[fsa.trace_batch(words)]
        right = got == want
        acc = right.mean(axis=0)
        out["accuracy_by_length"] = {str(L): round(float(acc[L - 1]), 4) for L in _curve_lengths(max_len)}
        out["wrong_pairs_by_length"] = _wrong_pairs(got, want, right, _curve_lengths(max_len))
        out["samples"] = samples
        below = np.nonzero(~right.all(axis=0))[0]
        out["first_length_below_1"] = int(below[0]) + 1 if below.size else None
        if below.size:
            t = int(below[0])
            i = int(np.nonzero(~right[:, t])[0][0])
            wrong.append(words[i, : t + 1].tolist())
        out.update(extracted_states=None, target_states=minimize(fsa).n_states, isomorphic_to_target=None,
                   extraction_word=None, extraction=None)
        cells = out["target_states"] * fsa.n_letters
        ext = None
        wanted = extract and cells <= max_extract_cells
        if wanted and not have_aalpy():
            out["extraction"] = {"skipped": "AALpy is not installed (pip install 'lrnnkit[learn]'): the shortest wrong "
                                            "word and the accuracy curve above do not need it", "missing": "aalpy"}
        elif wanted:
            oracle.limit = (oracle.calls + max_extract_queries, time.perf_counter() + max_extract_seconds,
                            max_extract_queries, max_extract_seconds)
            try:
                ext = extract_automaton(oracle, list(fsa.alphabet), target=fsa, eq_oracle="target",
                                        random_steps=random_steps, max_rounds=max_rounds,
                                        max_states=4 * out["target_states"], seed=seed, known=known)
            except _Budget as exc:
                out["extraction"] = {"stopped": f"{exc} before L* finished"}
            except ExtractionStopped as exc:
                out["extraction"] = {"stopped": str(exc)}
            finally:
                oracle.limit = None
        if ext is not None:
            out.update(extracted_states=ext.automaton.n_states, isomorphic_to_target=bool(ext.isomorphic),
                       extraction_word=None if ext.distinguishing_word is None else sym(ext.distinguishing_word),
                       extraction={k: ext.stats.get(k) for k in ("rounds", "membership_queries", "seconds",
                                                                  "stopped_at_state_bound")})
            w = ext.distinguishing_word
            if w and oracle(w) != fsa.outputs[fsa.run(w)]:
                wrong.append(list(w))
        if extract and cells > max_extract_cells:
            out["extraction"] = {"skipped": f"{cells} cells (states x letters) > max_extract_cells "
                                            f"{max_extract_cells}"}
        out.update(_shortest_known(wrong, sym))
    finally:
        if was is not None:
            model.train(was)
    out["seconds"] = round(time.perf_counter() - t0, 3)
    out["statement"] = horizon_statement(out)
    return out


WELL_FORMED = "well-formed"


def _odd_lengths(max_len: int) -> list:
    """The curve's lengths for words whose answers are read after a digit (odd prefix lengths): 1, 3, 7, 15, ...
    and the longest odd length <= ``max_len``."""
    return sorted({L if L % 2 else L - 1 for L in _curve_lengths(max_len)} - {0})


def _digits_ops(task) -> tuple:
    """The task's digit letters and operator letters (indices), the two alternating classes of its words."""
    return ([a for a in task.letters if task.fsa.alphabet[a].isdigit()],
            [a for a in task.letters if not task.fsa.alphabet[a].isdigit()])


def _all_well_formed(task, L: int) -> np.ndarray:
    """Every word of ``task``'s well-formed family of length ``L`` (digit, operator, digit, ...), lexicographic."""
    digits, ops = _digits_ops(task)
    choice = [digits if i % 2 == 0 else ops for i in range(L)]
    idx = np.indices([len(c) for c in choice]).reshape(L, -1).T
    return np.stack([np.asarray(choice[i])[idx[:, i]] for i in range(L)], axis=1)


def _well_formed_horizon(model, task, *, max_len: int, max_words: int, samples: int, seed: int, device: str,
                         autocast: bool, autocast_cpu: bool) -> dict:
    """:func:`horizon` for a task that draws only well-formed words (``words="alternate"``: 002's ModArith(M),
    004's left-to-right modular arithmetic): the model's answers on other words are not the task's, so the search,
    the curve and the wrong words range over the well-formed words alone, read after each digit (odd prefix
    lengths; a causal model's answer after ``t`` letters is its answer on the prefix, itself well formed, so a
    task that supervises only the last position is read the same way). The exhaustive search checks every
    well-formed word of length 1, 3, 5, ... in turn while the total stays within ``max_words`` (a first wrong word
    is a shortest wrong well-formed word); the curve reads ``samples`` random well-formed words of length
    ``max_len`` at every odd prefix; no automaton is extracted (L* asks about every word)."""
    fsa = task.fsa
    labels = list(task.labels)
    names = np.array(labels + ["error"], dtype=str)          # the error state's label (-1) never occurs here
    oracle = _Oracle(model, np.arange(fsa.n_letters), labels, device, autocast, autocast_cpu)
    sym = lambda w: [fsa.alphabet[a] for a in w]  # noqa: E731

    def want_of(words):
        return names[task._lab[fsa.trace_batch(words)]]

    out = {"target": fsa.name, "words": WELL_FORMED, "letters": int(len(task.letters)),
           "bf16_autocast": bool(autocast if str(device).startswith("cuda") else autocast_cpu),
           "horizon": None, "shortest_wrong_word": None, "model_output": None, "target_output": None}
    checked, up_to, wrong = 0, 0, []
    n_digits, n_ops = (len(c) for c in _digits_ops(task))
    L = 1
    while L <= max_len:
        n = n_digits ** ((L + 1) // 2) * n_ops ** (L // 2)
        if checked + n > max_words:
            break
        words = _all_well_formed(task, L)
        got, want = _outputs(oracle, words)[:, -1], want_of(words)[:, -1]
        checked += n
        bad = np.nonzero(got != want)[0]
        if bad.size:
            w = words[bad[0]].tolist()
            out.update(horizon=L, shortest_wrong_word=sym(w), model_output=str(got[bad[0]]),
                       target_output=str(want[bad[0]]))
            wrong.append(w)
            break
        up_to = L
        L += 2
    out.update(exhaustive_up_to=up_to, words_checked=checked)
    rng = np.random.default_rng(seed)
    words = task._letters(samples, max_len, rng)
    got, want = _outputs(oracle, words), want_of(words)
    lengths = _odd_lengths(max_len)
    right = got == want
    read = np.zeros(max_len, dtype=bool)
    read[0::2] = True                                   # after a digit: odd prefix lengths
    acc = right.mean(axis=0)
    out["accuracy_by_length"] = {str(n): round(float(acc[n - 1]), 4) for n in lengths}
    out["wrong_pairs_by_length"] = _wrong_pairs(got, want, right, lengths)
    out["samples"] = samples
    below = np.nonzero(read & ~right.all(axis=0))[0]
    out["first_length_below_1"] = int(below[0]) + 1 if below.size else None
    if below.size:
        t = int(below[0])
        wrong.append(words[int(np.nonzero(~right[:, t])[0][0]), : t + 1].tolist())
    out.update(extracted_states=None, target_states=minimize(fsa).n_states, isomorphic_to_target=None,
               extraction_word=None,
               extraction={"skipped": "the task's words are well formed only: L* would ask about every word"})
    out.update(_shortest_known(wrong, sym))
    return out


def horizon_checkpoint(path: str, *, max_len: int | None = None, device: str = "cpu", **kw) -> dict:
    """:func:`horizon` of a trained checkpoint (a ``lrnnkit train --out`` run directory or its checkpoint JSON,
    loaded by :func:`lrnnkit.learn.train.load_checkpoint`) on its own task, up to ``max_len`` (default: its longest
    test length); ``kw`` go to :func:`horizon`."""
    from .checkpoint import task_of
    from .train import load_checkpoint
    require_device(device)
    doc, net = load_checkpoint(path, device)
    cfg = doc["config"]
    return horizon(net, task_of(doc, f"checkpoint {path!r}"), max_len=int(max_len or max(cfg["test_len"])),
                   device=device, **kw)


def horizon_statement(h: dict) -> str:
    """One line for a :func:`horizon` result."""
    if h.get("skipped"):
        return f"horizon not computed ({h['skipped']})"
    if h["horizon"] is not None:
        kind = f"{h['words']} " if h.get("words") else ""
        s = (f"horizon {h['horizon']}: wrong on {' '.join(h['shortest_wrong_word'])!r} (model "
             f"{h['model_output']!r}, target {h['target_output']!r}); right on every shorter {kind}word")
    else:
        kind = f"{h['words']} " if h.get("words") else ""
        s = f"right on every {kind}word of length <= {h['exhaustive_up_to']} ({h['words_checked']} words)"
        if h["wrong_at_length"] is not None:
            s += f"; wrong at length {h['wrong_at_length']}"
        else:
            s += f"; no wrong word found up to length {max(int(k) for k in h['accuracy_by_length'])} " \
                 f"({h['samples']} samples)"
    if (h.get("extraction") or {}).get("stopped"):
        s += f"; extraction {h['extraction']['stopped']}"
    if (h.get("extraction") or {}).get("missing") == "aalpy":
        s += "; no automaton extracted (AALpy not installed)"
    if h["extracted_states"] is not None:
        s += (f"; extracted {h['extracted_states']} states, "
              f"{'' if h['isomorphic_to_target'] else 'not '}isomorphic to the {h['target_states']}-state target")
        bound = (h.get("extraction") or {}).get("stopped_at_state_bound")
        if bound:
            s += f" (L* stopped past its {bound}-state bound)"
    return s
