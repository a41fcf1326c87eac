"""The finite-precision executor: run any :class:`~lrnnkit.model.ir.Model` under (format, rounding, cast policy).

Semantics are those of the float64 reference executor (``lrnnkit.executor``; layers bottom-up, table-map symbols with
lagged reads, BOS pad ``size - 1`` before the start), with every layer step and decoder computed as the cast policy
says (:mod:`lrnnkit.precision.policy`). Steps are counted from 1: step ``t`` is the output after reading ``t``
symbols, ``x_1 .. x_t`` (paper 000's indexing); ``first_wrong_step`` uses the same count.

Finite precision makes every layer a finite-state machine: under a deterministic rounding mode, the state after a
step is a function of (state, symbol). Two consequences are used here.

* Memoization: a single long sequence is run layer by layer through a table ``(state id, symbol) -> (next state id,
  output)``, filled on first use (each state interned by its bytes, NaN canonicalized). Per step this is one dict
  lookup; only new (state, symbol) pairs cost a policy step.
* Exact periodicity: on an eventually periodic input ``u v v v ...`` (for instance ``1^k``), the pair (layer state,
  phase of the layer's input sequence) repeats; the first repeat gives the layer output's exact pre-period and period
  (no threshold, no sampling), and the next layer's input is again eventually periodic. The automaton's output on the
  same input is eventually periodic too (pair (automaton state, phase)), so comparing the two over
  ``max(pre-periods) + lcm(periods)`` steps decides *for every length* whether and where the finite-precision model
  first disagrees with the automaton: ``first_wrong_step`` is exact and ``None`` means "never, at any length".

Stochastic rounding is not a function of (state, symbol): it runs without memoization and without period detection.
The ``proof`` policy is not a recurrence (each state is recomputed from the unrolled sum): it runs exactly, O(t d^2)
per step, capped at ``PROOF_MAX_STEPS``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError, SizeLimitError
from ..executor import read_values as _read
from ..model import Model, TableMap
from .formats import get_format
from .policy import LayerKernel, ProofLayer, Rounder, canonical_policy
from ..automata.io import fsa_from_dict
from ..progress import Progress

__all__ = ["Simulator", "SimResult", "EventuallyPeriodic", "CollapseResult", "collapse", "fsa_of_model",
           "PROOF_MAX_STEPS"]

PROOF_MAX_STEPS = 3000
DEFAULT_PERIOD_CAP = 2_000_000
#: the length of the random word ``collapse`` runs when no length is given (the command line's default too)
DEFAULT_COLLAPSE_STEPS = 100_000


@dataclass
class EventuallyPeriodic:
    """A sequence ``x_0 x_1 ...`` given by ``values`` (its first ``mu + lam`` terms) with ``x_{t + lam} = x_t`` for
    ``t >= mu``. ``lam = 0`` means a finite sequence of length ``len(values)`` (no periodic tail)."""
    values: np.ndarray
    mu: int
    lam: int

    def at(self, t: int) -> int:
        if self.lam == 0 or t < self.mu:
            return int(self.values[t])
        return int(self.values[self.mu + (t - self.mu) % self.lam])

    def take(self, n: int) -> np.ndarray:
        if self.lam == 0:
            if n > len(self.values):
                raise InputError(f"sequence of length {len(self.values)} has no term {n - 1}")
            return self.values[:n]
        if n <= len(self.values):
            return self.values[:n]
        idx = np.arange(n)
        idx = np.where(idx < self.mu, idx, self.mu + (idx - self.mu) % self.lam)
        return self.values[idx]

    @property
    def finite(self) -> bool:
        return self.lam == 0


@dataclass
class SimResult:
    outputs: np.ndarray                  # (B, T) indices into model.output_labels
    layer_outputs: list                  # per layer (B, T)
    model: Model
    states: list | None = None           # per layer (B, T, d) when kept

    def labels(self) -> np.ndarray:
        return np.asarray(self.model.output_labels, dtype=object)[self.outputs]


@dataclass
class CollapseResult:
    first_wrong_step: int | None         # 1-based; None: no disagreement (for periodic inputs: at any length)
    format: str
    policy: str
    rounding: str
    steps: int                           # length of the run (or of the checked window for periodic inputs)
    input: str                           # description of the input
    exact_for_all_lengths: bool          # True when the verdict covers every length (periodic input)
    pre_period: int | None = None        # of the model's output on a periodic input
    period: int | None = None
    layer_periods: list = field(default_factory=list)
    distinct_states: list = field(default_factory=list)

    def to_json(self) -> dict:
        return {"first_wrong_step": self.first_wrong_step, "format": self.format, "policy": self.policy,
                "rounding": self.rounding, "steps": self.steps, "input": self.input,
                "exact_for_all_lengths": self.exact_for_all_lengths, "pre_period": self.pre_period,
                "period": self.period, "layer_periods": self.layer_periods,
                "distinct_states": self.distinct_states}


def _read_periodic(tm: TableMap, sources: dict) -> EventuallyPeriodic:
    """A table map of eventually periodic sources (with lags) is eventually periodic: pre-period
    max(mu + lag), period lcm(lam)."""
    mu, lam = 0, 1
    finite_len = None
    for r in tm.reads:
        s = sources[r.source]
        if s.finite:
            finite_len = len(s.values) + r.lag if finite_len is None else min(finite_len, len(s.values) + r.lag)
        mu = max(mu, s.mu + r.lag)
        lam = math.lcm(lam, max(s.lam, 1))
    if finite_len is not None:
        n = min(len(sources[r.source].values) for r in tm.reads)
        mu, lam = n, 0
    else:
        n = mu + lam
    vals = []
    for r, size in zip(tm.reads, tm.sizes):
        vals.append(r.at_lag(np.asarray(sources[r.source].take(n), dtype=np.int64)[None, :], size))
    out = tm.lookup_batch(vals)[0] if tm.reads else np.full(n, int(tm.table[0]), dtype=np.int64)
    return EventuallyPeriodic(out, mu if lam else n, lam)


class _Memo:
    """Interned states and the transition table of one layer under a deterministic policy."""

    def __init__(self, kernel: LayerKernel):
        self.k = kernel
        self.ids: dict = {}
        self.states: list = []
        self.trans: dict = {}
        self.outs: dict = {}
        self.h0 = self.intern(kernel.H0)
        D = kernel.layer.decoder
        self.per_symbol = D.per_symbol
        self.np_decode = D.n_out * kernel.d > 40   # many outputs: numpy's vectorized logits win

    def intern(self, H) -> int:
        h = [float("nan") if x != x else x for x in (H.tolist() if isinstance(H, np.ndarray) else H)]
        key = np.array(h, dtype=np.float64).tobytes()  # bytes: tells -0.0 from 0.0
        i = self.ids.get(key)
        if i is None:
            i = len(self.states)
            self.ids[key] = i
            self.states.append(h)
        return i

    def compute(self, sid: int, s: int):
        h = self.k.step1(self.states[sid], s)
        nid = self.intern(h)
        key = (nid, s) if self.per_symbol else nid   # the output depends on the state (and the symbol if per-symbol)
        y = self.outs.get(key)
        if y is None:
            if self.np_decode:
                y = int(self.k.decode(np.array([h]), np.array([s]))[0])
            else:
                y = self.k.decode1(h, s)
            self.outs[key] = y
        r = (nid, y)
        self.trans[(sid, s)] = r
        return r


class Simulator:
    """A model under (format, rounding, policy). ``gh`` selects how GH layers compute (policy module)."""

    def __init__(self, model: Model, fmt, rounding: str = "nearest-even", policy: str = "matvec", *,
                 gh: str = "factors", seed: int = 0, renorm: bool = False, decoder_fp64: bool = False):
        if not isinstance(model, Model):
            raise InputError(f"expected an lrnnkit Model, got {type(model).__name__}")
        self.model = model
        self.fmt = get_format(fmt)
        self.policy = canonical_policy(policy)
        self.fl = Rounder(self.fmt, rounding, seed)
        self.rounding = self.fl.rounding
        self.gh = gh
        if self.policy != "proof":
            self.kernels = [LayerKernel(L, self.fl, self.policy, gh, renorm, decoder_fp64) for L in model.layers]
            self.memos = [_Memo(k) for k in self.kernels] if self.fl.deterministic else None

    @property
    def memoized(self) -> bool:
        return self.policy != "proof" and self.fl.deterministic

    # ------------------------------------------------------------------ batch (no memo)
    def run(self, words, keep_states: bool = False) -> SimResult:
        """Run a batch of words (int array (B, T)) vectorized over the batch (``op`` / ``matvec`` policies)."""
        words = self._check_words(words)
        if self.policy == "proof":
            outs = [self.run_single(w) for w in words]
            return SimResult(np.stack([o.outputs[0] for o in outs]) if outs else np.zeros((0, 0), np.int64),
                             [np.stack([o.layer_outputs[i][0] for o in outs]) for i in range(len(self.model.layers))],
                             self.model)
        B, T = words.shape
        sources: dict = {"input": words}
        louts, states = [], []
        for i, (L, K) in enumerate(zip(self.model.layers, self.kernels)):
            s = _read(L.input_map, sources, T)
            H = np.broadcast_to(K.H0, (B, L.width)).copy()
            ys = np.empty((B, T), dtype=np.int64)
            Hs = np.empty((B, T, L.width)) if keep_states else None
            for t in range(T):
                H = K.step(H, s[:, t])
                ys[:, t] = K.decode(H, s[:, t])
                if keep_states:
                    Hs[:, t] = H
            sources[i] = ys
            louts.append(ys)
            states.append(Hs)
        out = _read(self.model.readout, sources, T)
        return SimResult(out, louts, self.model, states if keep_states else None)

    def _check_words(self, words) -> np.ndarray:
        words = np.asarray(words, dtype=np.int64)
        if words.ndim == 1:
            words = words[None, :]
        if words.ndim != 2:
            raise InputError(f"words must be a (B, T) integer array, got shape {words.shape}")
        if words.size and (words.min() < 0 or words.max() >= len(self.model.alphabet)):
            raise InputError(f"word symbols must lie in 0..{len(self.model.alphabet) - 1}")
        return words

    # ------------------------------------------------------------------ one sequence
    def run_single(self, word) -> SimResult:
        """One word (1-D int sequence), memoized where the policy allows."""
        w = self._check_words(word)
        if self.memoized:
            seq = self.run_sequence(EventuallyPeriodic(w[0], len(w[0]), 0))
            return SimResult(seq["outputs"].values[None, :], [y.values[None, :] for y in seq["layer_outputs"]],
                             self.model)
        if self.policy == "proof":
            return self._run_proof(w[0])
        return self.run(w)

    def _run_proof(self, word: np.ndarray) -> SimResult:
        T = len(word)
        if T > PROOF_MAX_STEPS:
            raise SizeLimitError(f"the proof policy recomputes the unrolled sum at every step (O(t) exact terms): "
                                 f"{T} steps exceed the cap of {PROOF_MAX_STEPS}")
        sources: dict = {"input": word[None, :]}
        louts = []
        for i, L in enumerate(self.model.layers):
            s = _read(L.input_map, sources, T)[0]
            P = ProofLayer(L, self.fl)
            ys = np.empty(T, dtype=np.int64)
            for t in range(T):
                H = P.step(int(s[t]))
                ys[t] = P.decode(H, int(s[t]))
            sources[i] = ys[None, :]
            louts.append(ys[None, :])
        return SimResult(_read(self.model.readout, sources, T), louts, self.model)

    def run_sequence(self, inp: EventuallyPeriodic, period_cap: int = DEFAULT_PERIOD_CAP) -> dict:
        """Memoized run on a finite or eventually periodic input (deterministic ``op`` / ``matvec`` only).

        Returns ``{"outputs": EventuallyPeriodic, "layer_outputs": [...], "layer_periods": [(mu, lam) of each layer's
        (state, phase) sequence], "distinct_states": [...]}``. For a periodic input each layer runs until its pair
        (state, input phase) repeats (at most ``period_cap`` steps, else SizeLimitError)."""
        if not self.memoized:
            raise InputError("memoized runs need a deterministic rounding mode and the op or matvec policy")
        sources: dict = {"input": inp}
        louts, periods = [], []
        for i, (L, M) in enumerate(zip(self.model.layers, self.memos)):
            s = _read_periodic(L.input_map, sources)
            y, per = self._run_layer(M, s, period_cap)
            sources[i] = y
            louts.append(y)
            periods.append(per)
        out = _read_periodic(self.model.readout, sources)
        return {"outputs": out, "layer_outputs": louts, "layer_periods": periods,
                "distinct_states": [len(M.states) for M in self.memos]}

    @staticmethod
    def _run_layer(M: _Memo, s: EventuallyPeriodic, cap: int):
        trans = M.trans
        cur = M.h0
        if s.finite:
            T = len(s.values)
            ys = np.empty(T, dtype=np.int64)
            sv = s.values.tolist()
            bar = _progress(T, "simulate")      # long runs: a bar on a terminal after 2 s; Ctrl-C stops them
            try:
                for t in range(T):
                    if not t & 8191 and bar is not None:
                        bar.update(t - bar.n)
                    st = sv[t]
                    r = trans.get((cur, st))
                    if r is None:
                        r = M.compute(cur, st)
                    cur, ys[t] = r
            finally:
                if bar is not None:
                    bar.close()
            return EventuallyPeriodic(ys, T, 0), (None, None)
        seen: dict = {}
        ys: list = []
        mu_s, lam_s = s.mu, s.lam
        t = 0
        while True:
            if t >= mu_s:
                key = (cur, (t - mu_s) % lam_s)
                t1 = seen.get(key)
                if t1 is not None:
                    return EventuallyPeriodic(np.array(ys, dtype=np.int64), t1, t - t1), (t1, t - t1)
                seen[key] = t
            if t >= cap:
                raise SizeLimitError(f"no period of the finite-precision run within {cap} steps "
                                     f"({len(M.states)} distinct states so far)")
            st = s.at(t)
            r = trans.get((cur, st))
            if r is None:
                r = M.compute(cur, st)
            cur, y = r
            ys.append(y)
            t += 1


def _progress(total: int, desc: str):
    """The progress of runs of at least 50,000 steps (None below; :class:`lrnnkit.progress.Progress`)."""
    if total < 50_000:
        return None
    return Progress(desc, total, "steps")


# --------------------------------------------------------------------------- automata and the collapse test
def fsa_of_model(model: Model, fsa=None):
    """The automaton a model implements: ``fsa`` if given, else ``model.provenance["automaton"]``."""
    if fsa is not None:
        return fsa
    d = (model.provenance or {}).get("automaton")
    if not d:
        raise InputError(f"model {model.name!r} records no automaton in its provenance: pass the automaton")
    return fsa_from_dict(d, "model provenance automaton")


def _fsa_outputs(fsa, inp: EventuallyPeriodic) -> EventuallyPeriodic:
    """The automaton's output labels (as indices into ``labels``) on an eventually periodic input."""
    delta = np.asarray(fsa.delta, dtype=np.int64)
    q = int(fsa.start)
    if inp.finite:
        T = len(inp.values)
        qs = np.empty(T, dtype=np.int64)
        for t, a in enumerate(inp.values.tolist()):
            q = int(delta[q, a])
            qs[t] = q
        return EventuallyPeriodic(qs, T, 0)
    seen: dict = {}
    qs: list = []
    t = 0
    while True:
        if t >= inp.mu:
            key = (q, (t - inp.mu) % inp.lam)
            if key in seen:
                t1 = seen[key]
                return EventuallyPeriodic(np.array(qs, dtype=np.int64), t1, t - t1)
            seen[key] = t
        q = int(delta[q, inp.at(t)])
        qs.append(q)
        t += 1


def _first_mismatch(a: EventuallyPeriodic, la: list, b: EventuallyPeriodic, lb: list, n: int | None):
    """First index where label la[a_t] != lb[b_t], over n terms (finite) or over every t (both periodic)."""
    if n is None:
        n = max(a.mu, b.mu) + math.lcm(max(a.lam, 1), max(b.lam, 1))
    A = np.asarray(la, dtype=object)[a.take(n)]
    B = np.asarray(lb, dtype=object)[b.take(n)]
    bad = np.nonzero(A != B)[0]
    return (int(bad[0]) if len(bad) else None), n


def _model_symbols(model: Model, word) -> np.ndarray:
    if isinstance(word, str):
        return np.array(model.encode(word), dtype=np.int64)
    w = list(word)
    if w and isinstance(w[0], str):
        return np.array(model.encode(w), dtype=np.int64)
    return np.asarray(w, dtype=np.int64)


def collapse(model: Model, format="bf16", policy: str = "matvec", steps: int = DEFAULT_COLLAPSE_STEPS,
             rounding: str = "nearest-even", *, fsa=None, word=None, prefix=None, cycle=None, seed: int = 0,
             gh: str = "factors", renorm: bool = False, decoder_fp64: bool = False,
             period_cap: int = DEFAULT_PERIOD_CAP) -> CollapseResult:
    """The first step at which the model, run in ``format`` under ``policy``, outputs a label different from its
    automaton's.

    Input: ``word`` (symbols or indices), or the eventually periodic ``prefix cycle cycle ...`` (exact verdict for
    every length), or by default a seeded uniformly random word of length ``steps`` (a one-letter alphabet gives the
    periodic word ``a a a ...`` instead)."""
    fsa = fsa_of_model(model, fsa)
    if list(fsa.alphabet) != list(model.alphabet):
        raise InputError(f"the automaton's alphabet {list(fsa.alphabet)[:8]} differs from the model's "
                         f"{list(model.alphabet)[:8]}")
    if not isinstance(steps, int) or steps < 1:
        raise InputError(f"steps must be a positive integer, got {steps!r}")
    sim = Simulator(model, format, rounding, policy, gh=gh, seed=seed, renorm=renorm, decoder_fp64=decoder_fp64)
    fl = [str(x) for x in fsa.outputs]
    auto_periodic = word is None and cycle is None and len(model.alphabet) == 1
    if auto_periodic:
        prefix, cycle = [], [0]
        # ``steps`` bounds the work here too: the period is searched within ``steps`` steps, and past that the
        # first ``steps`` outputs are checked (a counter:7 model used to run 2,000,000 steps)
        period_cap = min(period_cap, steps)
    periodic = cycle is not None
    if periodic:
        pre = _model_symbols(model, prefix or [])
        cyc = _model_symbols(model, cycle)
        if len(cyc) == 0:
            raise InputError("the periodic part of the input is empty")
        inp = EventuallyPeriodic(np.concatenate([pre, cyc]), len(pre), len(cyc))
        desc = f"periodic: prefix {len(pre)} symbols, cycle {' '.join(model.alphabet[i] for i in cyc[:10])}"
    else:
        w = _model_symbols(model, word) if word is not None else \
            np.random.default_rng(seed).integers(0, len(model.alphabet), steps)
        inp = EventuallyPeriodic(np.asarray(w, dtype=np.int64), len(w), 0)
        desc = "word" if word is not None else f"random word (seed {seed})"
    run = None
    if periodic and sim.memoized:
        try:
            run = sim.run_sequence(inp, period_cap)
        except SizeLimitError:
            if not auto_periodic:
                raise
            run = None        # no period within ``steps``: check the first ``steps`` outputs below
    if run is not None:
        out = run["outputs"]
        qs = _fsa_outputs(fsa, inp)
        bad, n = _first_mismatch(out, model.output_labels, qs, fl, None)
        return CollapseResult(None if bad is None else bad + 1, sim.fmt.label, sim.policy, sim.rounding, n, desc,
                              True, out.mu, out.lam, [list(p) for p in run["layer_periods"]],
                              run["distinct_states"])
    if periodic:
        inp = EventuallyPeriodic(inp.take(steps), steps, 0)
        if auto_periodic:
            desc = (f"the word {model.alphabet[0]}^{steps} (one-letter alphabet; the run showed no period within "
                    f"{steps} steps)")
    if sim.memoized:
        run = sim.run_sequence(inp)
        out, dist = run["outputs"], run["distinct_states"]
    else:
        r = sim.run_single(inp.values)
        out, dist = EventuallyPeriodic(r.outputs[0], len(inp.values), 0), []
    qs = _fsa_outputs(fsa, inp)
    bad, n = _first_mismatch(out, model.output_labels, qs, fl, len(inp.values))
    return CollapseResult(None if bad is None else bad + 1, sim.fmt.label, sim.policy, sim.rounding, n, desc,
                          False, None, None, [], dist)
