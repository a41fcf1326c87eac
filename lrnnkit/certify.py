"""Certification: a compiled model implements its automaton for inputs of EVERY length.

Method ``exact-bfs`` (docs/algorithms.rst, "Certification"). A model whose weights are exact (rationals or cyclotomic numbers,
lrnnkit.exact) is a deterministic system over exactly represented states. Run a breadth-first search over the
reachable pairs ``(q, M)`` of automaton state ``q`` and joint model state ``M`` (every layer's state plus the lag
histories), starting from ``(start, initial)``, applying every input symbol to every pair, and check at every
transition that the model's decoded output equals the automaton's output label of the new state. Decoders must
have a strict maximum (a tie fails). If the search closes (no new pairs), the model is correct on every word: by
induction on the length, every prefix of every word ends in an explored pair whose outputs were checked. If it does
not close within ``max_pairs`` (or an exact state entry outgrows ``executor.MAX_BITS`` bits, the sign of an
infinite reachable set such as the powers 2^-k of a contracting eigenvalue), nothing is certified and the
certificate says so: "not certified" then means "not proved", not "wrong"; a wrong output gives a counterexample.

The first failing transition found by BFS gives a shortest counterexample word (parents are kept).

Before the search, the model must be *consistent* (lrnnkit.model.consistency): its float arrays are the
rounding of its exact weights (which is what every backend executes), every GH factor has beta in [0, 2] (checked
exactly) and a unit key, every exact letter matrix is the exact product of its GH factors, diagonal layers are
diagonal. Otherwise the certificate is refused (method ``consistency``) with the problems as the reason: a
certificate of the exact weights would not cover what runs.

A second, independent check runs long random words through the float64 executor (lrnnkit.executor.run_float) and
compares with the automaton (``float_check``); it does not count towards ``certified``.
"""
from __future__ import annotations

from collections import deque
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from math import lcm

import numpy as np

from .automata.fsa import FSA
from .automata.io import fsa_from_dict
from .errors import InputError
from .executor import ExactModel, StateGrowthError, run_float
from .model import Model, Read
from .model.consistency import MAX_PROBLEMS, consistency_problems
from .progress import Progress

__all__ = ["Certificate", "certify", "fsa_of_model", "resource_profile"]

DEFAULT_MAX_PAIRS = 2_000_000
#: steps of each random word in the float64 cross-check (:func:`float_check`), unless a caller says otherwise
DEFAULT_FLOAT_STEPS = 10_000


@dataclass
class Certificate:
    certified: bool
    method: str
    reachable_states: int
    explored_transitions: int
    layers: int
    widths: list
    max_factors_per_token: int | None
    eigenvalues_in_unit_interval: bool
    reason: str = ""
    counterexample: list | None = None      # shortest failing word (symbol names)
    expected: str | None = None
    got: str | None = None
    float_check: dict = field(default_factory=dict)
    construction: str | None = None
    automaton: str | None = None
    automaton_states: int | None = None
    problems: list = field(default_factory=list)   # method "consistency": what contradicts what in the model

    def to_json(self) -> dict:
        return asdict(self)


def fsa_of_model(model: Model) -> FSA:
    d = model.provenance.get("automaton")
    if not isinstance(d, dict):
        raise InputError("the model does not record its source automaton (provenance.automaton); pass one")
    return fsa_from_dict(d, "provenance.automaton")    # what FSA.to_dict wrote, checked as an automaton file is


def resource_profile(model: Model) -> dict:
    facs = []
    for L in model.layers:
        if L.kind == "gh":
            facs.append(L.max_factors())
        elif L.kind == "diagonal":
            facs.append(max(int(np.sum(t.diag != 1)) if t.diag is not None else L.width for t in L.transitions))
    return {"layers": len(model.layers), "widths": model.widths,
            "max_factors_per_token": max(facs) if facs else None,
            "eigenvalues_in_unit_interval": all(L.gh_certified_spectrum() for L in model.layers)}


def _align(model: Model, fsa: FSA) -> list:
    """Model symbol index for each automaton letter (by name)."""
    idx = {s: i for i, s in enumerate(model.alphabet)}
    missing = [s for s in fsa.alphabet if s not in idx]
    if missing or len(model.alphabet) != fsa.n_letters:
        raise InputError(f"model alphabet {model.alphabet[:10]} does not match the automaton's {list(fsa.alphabet)[:10]}")
    return [idx[s] for s in fsa.alphabet]


def float_check(model: Model, fsa: FSA, steps: int = DEFAULT_FLOAT_STEPS, batch: int = 4, seed: int = 0) -> dict:
    """Run ``batch`` random words of length ``steps`` in float64; count disagreements with the automaton."""
    if steps <= 0:
        return {}
    rng = np.random.default_rng(seed)
    amap = np.array(_align(model, fsa))
    words = rng.integers(0, fsa.n_letters, size=(batch, steps))
    res = run_float(model, amap[words])
    got = np.asarray(model.output_labels, dtype=object)[res.outputs]
    want = np.asarray(fsa.outputs, dtype=object)[fsa.trace_batch(words)]
    bad = got != want
    first = None
    if bad.any():
        b, t = np.argwhere(bad)[0]
        first = {"word": int(b), "step": int(t + 1)}
    return {"words": batch, "steps": steps, "seed": seed, "mismatches": int(bad.sum()), "first_mismatch": first}


def _certify_vectorized(model: Model, fsa: FSA, amap: list, em: ExactModel, max_pairs: int, fc: dict,
                        base: dict, bar=None) -> Certificate | None:
    """The same breadth-first search, vectorized with numpy, for the most common shape: one layer with integer
    weights (permutations, reflections along e_i - e_j, resets) that reads the input directly, a rational decoder
    and a readout of the layer's output. Frontiers are processed level by level in the same (pair, letter) order
    as the generic search, so the first failure found is the same shortest counterexample. Returns None when the
    model does not have this shape (the generic search then runs)."""
    if len(model.layers) != 1:
        return None
    L, EL = model.layers[0], em.layers[0]
    if not EL.integer or EL.per_symbol or em.hist_sources:
        return None
    if L.input_map.reads != [Read("input", 0)] or model.readout.reads != [Read(0, 0)]:
        return None
    if any(not isinstance(x, Fraction) for r in EL.W for x in r) or any(not isinstance(x, Fraction) for x in EL.c):
        return None
    den = 1
    for x in [x for r in EL.W for x in r] + list(EL.c):
        den = lcm(den, x.denominator)
    Wi = np.array([[int(x * den) for x in r] for r in EL.W], dtype=np.int64)
    ci = np.array([int(x * den) for x in EL.c], dtype=np.int64)
    syms = L.input_map.table[np.asarray(amap)]            # automaton letter -> layer symbol
    A, Bv = EL.A[syms], EL.B[syms]                         # (k, d, d), (k, d)
    names: dict = {}
    model_lab = np.array([names.setdefault(model.output_labels[model.readout.table[y]], len(names))
                          for y in range(L.decoder.n_out)])
    fsa_lab = np.array([names.setdefault(o, len(names)) for o in fsa.outputs])
    d, k = L.width, fsa.n_letters
    cap = 2 ** 40  # keeps every product and score inside int64; larger states fall back to the generic search
    Q = [fsa.start]
    H = [np.array(EL.H0, dtype=np.int64)]
    if np.abs(H[0]).max(initial=0) >= cap:
        return None
    index = {(fsa.start,) + tuple(EL.H0): 0}
    par, par_letter = [-1], [-1]
    start, explored = 0, 0
    while start < len(Q):
        if bar is not None:
            bar.update(len(Q) - bar.n)
        F = np.arange(start, len(Q))
        Hf = np.stack(H[start:])
        succ = np.einsum("kij,fj->fki", A, Hf) + Bv[None]          # (f, k, d)
        if np.abs(succ).max(initial=0) >= cap:
            return None
        # decode each distinct successor layer state once (decoders can have many rows: one per group element)
        flat = np.ascontiguousarray(succ.reshape(-1, d))
        hkeys = flat.view(np.dtype((np.void, 8 * d))).ravel()
        _, ufirst, inv = np.unique(hkeys, return_index=True, return_inverse=True)
        scores = flat[ufirst] @ Wi.T + ci                            # (distinct states, n_out)
        yu = scores.argmax(-1)
        tu = (scores == scores.max(-1, keepdims=True)).sum(-1) > 1
        y = yu[inv.ravel()].reshape(succ.shape[:2])
        tie = tu[inv.ravel()].reshape(succ.shape[:2])
        q2 = fsa.delta[np.array(Q[start:])]                          # (f, k)
        ok = ~tie & (model_lab[y] == fsa_lab[q2])
        if not ok.all():
            i, a = (int(v) for v in np.argwhere(~ok)[0])
            explored += i * k + a + 1
            w, node = [a], start + i
            while par[node] >= 0:
                w.append(par_letter[node])
                node = par[node]
            word = [fsa.alphabet[x] for x in reversed(w)]
            got = None if tie[i, a] else model.output_labels[model.readout.table[y[i, a]]]
            # the generic search has registered the new pairs of the transitions before this one: count them too
            done = np.concatenate([q2[..., None], succ], axis=-1).reshape(-1, d + 1)[:i * k + a]
            seen = {tuple(r) for r in done.tolist()}
            new_pairs = sum(1 for key in seen if key not in index)
            return Certificate(False, "exact-bfs", len(Q) + new_pairs, explored, reason="decoder tie" if tie[i, a] else
                               "wrong output", counterexample=word, expected=fsa.outputs[int(q2[i, a])], got=got,
                               float_check=fc, **base)
        explored += len(F) * k
        rows = np.concatenate([q2[..., None], succ], axis=-1).reshape(-1, d + 1)
        keys = np.ascontiguousarray(rows).view(np.dtype((np.void, 8 * (d + 1)))).ravel()
        _, first = np.unique(keys, return_index=True)
        first.sort()                                                 # BFS order: (pair, letter)
        stop = len(Q)
        for j in first.tolist():
            key = tuple(rows[j].tolist())
            if key not in index:
                if len(Q) >= max_pairs:
                    return Certificate(False, "exact-bfs", len(Q), explored,
                                       reason=f"search did not close within {max_pairs} reachable pairs",
                                       float_check=fc, **base)
                index[key] = len(Q)
                Q.append(key[0])
                H.append(rows[j, 1:].copy())
                par.append(start + j // k)
                par_letter.append(j % k)
        start = stop
    if bar is not None:
        bar.update(len(Q) - bar.n)
    return Certificate(True, "exact-bfs", len(Q), explored, reason="search closed; every output matched",
                       float_check=fc, **base)


def _progress(desc: str):
    """The progress of a long search (:class:`lrnnkit.progress.Progress`: a bar on a terminal after 2 s, a status
    line every few seconds elsewhere). Ctrl-C stops the search (KeyboardInterrupt; the CLI exits 130)."""
    return Progress(desc, unit="pairs")


def certify(model: Model, fsa: FSA | None = None, *, max_pairs: int = DEFAULT_MAX_PAIRS,
            float_steps: int = DEFAULT_FLOAT_STEPS, seed: int = 0, vectorized: bool = True) -> Certificate:
    """Certify ``model`` against ``fsa`` (default: the automaton in the model's provenance) for all input lengths."""
    if fsa is None:
        fsa = fsa_of_model(model)
    prof = resource_profile(model)
    base = dict(layers=prof["layers"], widths=prof["widths"], max_factors_per_token=prof["max_factors_per_token"],
                eigenvalues_in_unit_interval=prof["eigenvalues_in_unit_interval"],
                construction=model.provenance.get("construction"), automaton=fsa.name,
                automaton_states=fsa.n_states)
    amap = _align(model, fsa)
    problems = consistency_problems(model)
    if problems:
        more = f" (and {len(problems) - MAX_PROBLEMS} more)" if len(problems) > MAX_PROBLEMS else ""
        return Certificate(False, "consistency", 0, 0,
                           reason="the model contradicts itself, so no certificate of its exact weights would cover "
                           "what the backends execute: " + "; ".join(problems[:MAX_PROBLEMS]) + more,
                           problems=problems, **base)
    fc = float_check(model, fsa, float_steps, seed=seed)
    if not model.is_exact:
        return Certificate(False, "none", 0, 0, reason="the model has weights without an exact form; "
                           "only the float64 check ran", float_check=fc, **base)
    em = ExactModel(model)
    if vectorized:
        bar = _progress("certify (exact search)")
        try:
            fast = _certify_vectorized(model, fsa, amap, em, max_pairs, fc, base, bar)
        finally:
            bar.close()
        if fast is not None:
            return fast
    bar = _progress("certify (exact search)")
    try:
        return _certify_generic(model, fsa, amap, em, max_pairs, fc, base, bar)
    finally:
        bar.close()


def _certify_generic(model: Model, fsa: FSA, amap: list, em: ExactModel, max_pairs: int, fc: dict,
                     base: dict, bar) -> Certificate:
    """The breadth-first search over (automaton state, model state) pairs, one transition at a time."""
    labels = model.output_labels
    outs = fsa.outputs
    delta = fsa.delta
    start = (fsa.start, em.initial())
    parent: dict = {start: None}
    queue = deque([start])
    explored = 0
    k = fsa.n_letters

    def word_to(pair, last_letter):
        w = [last_letter]
        p = pair
        while parent[p] is not None:
            p, a = parent[p]
            w.append(a)
        return [fsa.alphabet[a] for a in reversed(w)]

    popped = 0
    while queue:
        pair = queue.popleft()
        q, M = pair
        popped += 1
        if popped % 1024 == 0:
            bar.update(len(parent) - bar.n)
        for a in range(k):
            try:
                M2, y, _ = em.step(M, amap[a])
            except StateGrowthError as exc:
                return Certificate(False, "exact-bfs", len(parent), explored,
                                   reason=f"search did not close: {exc} (the reachable set looks infinite, e.g. an "
                                   "eigenvalue of modulus strictly between 0 and 1)", float_check=fc, **base)
            explored += 1
            q2 = int(delta[q, a])
            if y < 0 or labels[y] != outs[q2]:
                return Certificate(False, "exact-bfs", len(parent), explored,
                                   reason="decoder tie" if y < 0 else "wrong output",
                                   counterexample=word_to(pair, a), expected=outs[q2],
                                   got=None if y < 0 else labels[y], float_check=fc, **base)
            nxt = (q2, M2)
            if nxt not in parent:
                if len(parent) >= max_pairs:
                    return Certificate(False, "exact-bfs", len(parent), explored,
                                       reason=f"search did not close within {max_pairs} reachable pairs",
                                       float_check=fc, **base)
                parent[nxt] = (pair, a)
                queue.append(nxt)
    bar.update(len(parent) - bar.n)
    return Certificate(True, "exact-bfs", len(parent), explored, reason="search closed; every output matched",
                       float_check=fc, **base)
