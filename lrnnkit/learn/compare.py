"""A model against an automaton on every word up to a length: the shortest word on which they disagree, or the
statement that none exists up to that length.

The model is a *batch oracle*: ``outputs(words)`` maps an integer array of words, shape ``(B, L)`` (letter
indices), to the model's output label after every prefix, shape ``(B, L)`` (a causal sequence model gives all
prefixes in one pass). The lengths ``L = 1, 2, ...`` are enumerated in turn, all ``k^L`` words of each in
lexicographic order (letter index order), comparing the output after the last letter with the automaton's
(shorter prefixes were compared at the lengths before). The first length with a disagreement gives the shortest
disagreeing word, the lexicographically first of that length; the search stops there. Otherwise it stops before
the total number of words would pass ``max_words`` (or at ``max_length``), and the model agrees with the automaton
on *every* word of length at most ``agrees_up_to`` -- an exhaustive statement, not a sample; beyond that length
nothing is claimed.

This is the exact half of :mod:`lrnnkit.learn.extract`'s comparison: L* with lrnnkit's product search
(:func:`lrnnkit.automata.distinguishing_word`) compares the *extracted* automaton with the target for words of
every length; this module checks the *model itself*, up to a stated length.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..automata.fsa import FSA
from ..errors import InputError
from ..executor import run_float

__all__ = ["Comparison", "shortest_disagreement", "torch_outputs", "model_outputs"]


@dataclass
class Comparison:
    """``word``: a shortest word (letter indices) on which the model and the automaton disagree, with both
    outputs on it, or None. ``agrees_up_to``: every word of length <= this was checked and agrees.
    ``words_checked``: how many words were run (all words of lengths 1..``agrees_up_to``, plus those of the length
    where a disagreement was found)."""
    word: list | None
    model_output: str | None
    target_output: str | None
    agrees_up_to: int
    words_checked: int
    alphabet: tuple

    @property
    def symbols(self) -> list | None:
        return None if self.word is None else [self.alphabet[a] for a in self.word]

    def statement(self) -> str:
        if self.word is not None:
            return (f"shortest disagreement: {' '.join(self.symbols)!r} (length {len(self.word)}; model outputs "
                    f"{self.model_output!r}, target {self.target_output!r}); every shorter word agrees")
        return (f"no disagreement on any word of length <= {self.agrees_up_to} ({self.words_checked} words checked "
                f"exhaustively); longer words were not checked")

    def to_json(self) -> dict:
        return {"word": self.symbols, "model_output": self.model_output, "target_output": self.target_output,
                "agrees_up_to": self.agrees_up_to, "words_checked": self.words_checked,
                "statement": self.statement()}


def _words(k: int, L: int, lo: int, hi: int) -> np.ndarray:
    """Words number ``lo .. hi-1`` of length ``L`` over ``k`` letters, in lexicographic order."""
    idx = np.arange(lo, hi, dtype=np.int64)
    powers = k ** np.arange(L - 1, -1, -1, dtype=np.int64)
    return (idx[:, None] // powers[None, :]) % k


def shortest_disagreement(outputs: Callable, target: FSA, *, max_words: int = 2 ** 16, max_length: int = 64,
                          batch: int = 4096, record: dict | None = None) -> Comparison:
    """Compare ``outputs`` (module docstring) with ``target`` on all words of length 1, 2, ... (at most
    ``max_words`` words in all, lengths at most ``max_length``). ``record``: a dict that receives the model's
    answer on every word run, ``{word tuple: label}`` (L* reuses them as membership queries)."""
    if max_words < 1 or max_length < 1 or batch < 1:
        raise InputError(f"max_words, max_length and batch must be >= 1 (got {max_words}, {max_length}, {batch})")
    k = target.n_letters
    touts = np.array(target.outputs, dtype=str)
    checked, agrees = 0, 0
    for L in range(1, max_length + 1):
        n = k ** L
        if checked + n > max_words:
            break
        for lo in range(0, n, batch):
            w = _words(k, L, lo, min(n, lo + batch))
            got = np.asarray(outputs(w)).astype(str)   # labels compare as strings
            if got.shape != w.shape:
                raise InputError(f"the model gave outputs of shape {got.shape} for words of shape {w.shape}")
            want = touts[target.trace_batch(w)[:, -1]]
            if record is not None:
                record.update(zip(map(tuple, w.tolist()), got[:, -1].tolist()))
            bad = np.nonzero(got[:, -1] != want)[0]
            if bad.size:
                i = int(bad[0])
                return Comparison(w[i].tolist(), str(got[i, -1]), str(want[i]), L - 1, checked + lo + i + 1,
                                  target.alphabet)
        checked += n
        agrees = L
    return Comparison(None, None, None, agrees, checked, target.alphabet)


def torch_outputs(module, labels: Sequence[str], device="cpu") -> Callable:
    """The batch oracle of a torch sequence model: ``module(tokens (B, L) long) -> logits (B, L, n_out)`` (or a
    tuple whose first item is the logits); the label is ``labels[argmax]``."""
    import torch
    lab = np.array(list(labels), dtype=object)

    def outputs(words: np.ndarray) -> np.ndarray:
        x = torch.as_tensor(words, dtype=torch.long, device=device)
        with torch.no_grad():
            logits = module(x)
        if isinstance(logits, (tuple, list)):
            logits = logits[0]
        return lab[logits.argmax(-1).cpu().numpy()]

    return outputs


def model_outputs(model) -> Callable:
    """The batch oracle of a compiled lrnnkit :class:`~lrnnkit.model.ir.Model` (float64 reference executor)."""
    lab = np.array(list(model.output_labels) + ["<tie>"], dtype=object)

    def outputs(words: np.ndarray) -> np.ndarray:
        return lab[np.asarray(run_float(model, np.asarray(words, dtype=np.int64)).outputs)]

    return outputs
