"""Export a compiled GH model to flash-linear-attention's delta-rule layout (``lrnnkit export MODEL --to fla``).

fla's ``fla.ops.delta_rule.fused_recurrent_delta_rule(q, k, v, beta, scale, initial_state)`` runs, per head and
step t, on a state ``S`` of shape (K, V)::

    S <- S + beta_t k_t (v_t - S^T k_t)^T  =  (I - beta_t k_t k_t^T) S + beta_t k_t v_t^T,     o_t = scale S^T q_t

with tensors in the layout ``q, k: [B, T, H, K]``, ``v: [B, T, H, V]``, ``beta: [B, T, H]``,
``initial_state: [B, H, K, V]``. A one-layer ``gh`` model (docs/conventions.rst; 000 eq. 1 with
``A(x) = G_{n_h} .. G_1``, ``G_j = I - beta_j v_j v_j^T``) maps onto it as DeltaProduct does (001, Section 3: a token's ``n_h`` Householder
steps become ``n_h`` consecutive delta-rule steps of a sequence ``n_h`` times longer, and every ``n_h``-th output is
kept):

* the state vector ``H`` (width d) is the state ``S`` with ``K = d``, ``V = 1``; ``initial_state = H_0``;
* factor j of symbol s: key ``k = v_j``, ``beta = beta_j``; tokens with fewer factors are padded with
  ``beta = 0`` (the identity) and the key ``e_1``;
* the additive term ``B(s)`` becomes the values: with ``V = 1`` the token adds
  ``sum_j beta_j (G_{n_h} .. G_{j+1}) v_j val_j``; the scalars ``val_j`` solve that linear system exactly when
  ``B(s)`` lies in the span (0 for every group construction, ``B = 0``), else the export refuses;
* the linear-argmax decoder ``argmax_i (W H + c)_i`` becomes one **head per decoder row**: every head carries the
  same keys, betas and values, and head i reads with the query ``W_i`` (``W_i(s)`` for per-symbol decoders) at the
  token's last sub-step (zero queries elsewhere) and ``scale = 1``, so ``o_t[head i] = W_i . H_t`` and the decoded
  output is ``argmax_i (o_t[i] + c_i(s_t))``, mapped through the readout table to the model's output labels.

The export holds the per-symbol tables (small; the per-token tensors of a word are gathered from them by
:func:`fla_inputs`), saved as ``fla_export.safetensors`` + ``fla_export.json``; with ``--word`` / ``--random N`` the
command also writes one word's per-token tensors, ready for the kernel, to ``tokens.safetensors``
(:func:`write_tokens`). The GPU check
``benchmarks/check_fla_export.py`` runs fla's kernel on 10^5-token words and compares with the certified outputs.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass

import numpy as np

from .errors import InputError

__all__ = ["FlaExport", "export_fla", "fla_inputs", "decode_fla_outputs", "delta_rule_reference", "write_tokens",
           "add_parser", "run"]

FORMAT = "lrnnkit.fla-export"
VERSION = 1
ARRAYS = ("keys", "betas", "values", "queries", "bias", "initial_state")


@dataclass
class FlaExport:
    """Per-symbol tables. ``keys`` (S, n_h, K); ``betas``, ``values`` (S, n_h); ``queries`` (S, H, K) (decoder rows,
    one head each); ``bias`` (S, H); ``initial_state`` (K,); ``head_labels`` (H,) index into ``output_labels``."""
    alphabet: list
    output_labels: list
    head_labels: np.ndarray
    keys: np.ndarray
    betas: np.ndarray
    values: np.ndarray
    queries: np.ndarray
    bias: np.ndarray
    initial_state: np.ndarray
    meta: dict

    @property
    def n_h(self) -> int:
        return int(self.keys.shape[1])

    @property
    def heads(self) -> int:
        return int(self.queries.shape[1])

    @property
    def K(self) -> int:
        return int(self.keys.shape[2])

    def to_json(self) -> dict:
        return {"format": FORMAT, "version": VERSION, "arrays": "fla_export.safetensors",
                "alphabet": list(self.alphabet), "output_labels": list(self.output_labels),
                "head_labels": [int(x) for x in self.head_labels], "n_h": self.n_h, "heads": self.heads,
                "K": self.K, "V": 1, "scale": 1.0,
                "layout": {"keys": "[S, n_h, K]", "betas": "[S, n_h]", "values": "[S, n_h]", "queries": "[S, H, K]",
                           "bias": "[S, H]", "initial_state": "[K]"},
                "recipe": ("for a word x_1..x_T: sub-step (t, j), j = 1..n_h, is fla step t*n_h + j with "
                           "k = keys[x_t, j] "
                           "and beta = betas[x_t, j] and v = values[x_t, j] in every head, q = queries[x_t] at j = n_h "
                           "(zeros before); initial_state[h] = initial_state for every head h (V = 1); call "
                           "fused_recurrent_delta_rule(q, k, v, beta, scale=1.0, initial_state=...); output at token t "
                           "= output_labels[head_labels[argmax_h(o[t*n_h + n_h - 1, h, 0] + bias[x_t, h])]]"),
                **self.meta}

    def save(self, out_dir: str) -> list:
        from safetensors.numpy import save as st_save

        from .fileio import atomic_write_bytes, atomic_write_text
        if os.path.exists(out_dir) and not os.path.isdir(out_dir):
            raise InputError(f"cannot write the export to {out_dir!r}: it exists and is not a directory")
        try:
            os.makedirs(out_dir, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot create {out_dir!r}: {exc.strerror}") from None
        arrays = {name: np.ascontiguousarray(getattr(self, name), dtype=np.float64) for name in ARRAYS}
        p_st = os.path.join(out_dir, "fla_export.safetensors")
        p_js = os.path.join(out_dir, "fla_export.json")
        atomic_write_bytes(p_st, st_save(arrays))
        atomic_write_text(p_js, json.dumps(self.to_json(), indent=1) + "\n")
        return [p_js, p_st]

    @staticmethod
    def load(out_dir: str) -> "FlaExport":
        p_js = os.path.join(out_dir, "fla_export.json")
        try:
            with open(p_js, encoding="utf-8") as fh:
                doc = json.load(fh)
        except OSError as exc:
            raise InputError(f"cannot read {p_js!r}: {exc.strerror}") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"{p_js!r} is not valid JSON: {exc}") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("version") != VERSION:
            raise InputError(f"{p_js!r} is not an lrnnkit fla export (format {FORMAT!r}, version {VERSION})")
        from safetensors.numpy import load_file
        try:
            arrays = load_file(os.path.join(out_dir, "fla_export.safetensors"))
        except Exception as exc:  # safetensors raises its own error types
            raise InputError(f"cannot read the arrays of {out_dir!r}: {exc}") from None
        missing = [a for a in ARRAYS if a not in arrays]
        if missing:
            raise InputError(f"{out_dir!r}: arrays missing from the export: {', '.join(missing)}")
        meta = {k: v for k, v in doc.items() if k in ("source_model", "construction", "automaton", "paper")}
        return FlaExport(doc["alphabet"], doc["output_labels"], np.asarray(doc["head_labels"], dtype=np.int64),
                         *(arrays[a] for a in ARRAYS), meta)


def _values_for_B(factors, d: int, B: np.ndarray, n_h: int, where: str) -> np.ndarray:
    """Scalars val_j with sum_j beta_j (G_n .. G_{j+1}) v_j val_j = B (exact solve, refusing a residual)."""
    vals = np.zeros(n_h)
    if not np.any(B):
        return vals
    cols = []
    for j, f in enumerate(factors):
        P = np.eye(d)
        for g in factors[j + 1:]:
            P = g.matrix() @ P
        cols.append(f.beta * (P @ f.v))
    if not cols:
        raise InputError(f"{where}: B != 0 on a token without GH factors cannot be a delta-rule step")
    M = np.stack(cols, 1)
    sol, *_ = np.linalg.lstsq(M, B, rcond=None)
    if np.max(np.abs(M @ sol - B)) > 1e-9 * max(1.0, float(np.max(np.abs(B)))):
        raise InputError(f"{where}: the additive term B is not in the span of the token's delta-rule steps; "
                         "fla's delta rule cannot reproduce it")
    vals[: len(sol)] = sol
    return vals


def export_fla(model, source_name: str = "") -> FlaExport:
    """The per-symbol fla tables of a one-layer ``gh`` model (see the module docstring)."""
    from .model import Model
    if not isinstance(model, Model):
        raise InputError(f"export_fla expects an lrnnkit Model, got {type(model).__name__}")
    if len(model.layers) != 1:
        raise InputError(f"export --to fla handles one-layer models; {source_name or 'the model'} has "
                         f"{len(model.layers)} layers (multi-layer cascades read decoded outputs between layers, "
                         "which fla's kernel cannot)")
    L = model.layers[0]
    if L.kind != "gh":
        raise InputError(f"export --to fla needs a 'gh' layer (products of Householder factors), got {L.kind!r}")
    im = L.input_map
    if len(im.reads) != 1 or im.reads[0].source != "input" or im.reads[0].lag != 0:
        raise InputError("export --to fla needs a layer that reads the model input directly (no token shift)")
    ro = model.readout
    if len(ro.reads) != 1 or ro.reads[0].source != 0 or ro.reads[0].lag != 0:
        raise InputError("export --to fla needs a readout of the layer's decoder at lag 0")
    S = len(model.alphabet)
    d = L.width
    n_h = max(1, L.max_factors() or 0)
    syms = [int(im.lookup([x])) for x in range(S)]
    D = L.decoder
    n_out = D.n_out
    keys = np.zeros((S, n_h, d))
    keys[:, :, 0] = 1.0
    betas = np.zeros((S, n_h))
    values = np.zeros((S, n_h))
    queries = np.zeros((S, n_out, d))
    bias = np.zeros((S, n_out))
    for x in range(S):
        s = syms[x]
        t = L.transitions[s]
        fs = list(t.factors or [])
        for j, f in enumerate(fs):
            if not -1e-12 <= f.beta <= 2 + 1e-12:
                raise InputError(f"symbol {model.alphabet[x]!r} factor {j}: beta {f.beta} outside [0, 2]")
            keys[x, j] = f.v
            betas[x, j] = f.beta
        values[x] = _values_for_B(fs, d, np.asarray(t.B, dtype=np.float64), n_h, f"symbol {model.alphabet[x]!r}")
        queries[x] = D.W[s] if D.per_symbol else D.W
        bias[x] = D.c[s] if D.per_symbol else D.c
    head_labels = np.asarray([ro.lookup([i]) for i in range(n_out)], dtype=np.int64)
    meta = {"source_model": source_name, "construction": model.provenance.get("construction"),
            "automaton": model.provenance.get("automaton") or model.provenance.get("source"),
            "paper": model.provenance.get("paper")}
    return FlaExport(list(model.alphabet), list(model.output_labels), head_labels, keys, betas, values, queries,
                     bias, np.asarray(L.H0, dtype=np.float64), meta)


def fla_inputs(exp: FlaExport, words, dtype=None, device="cpu") -> dict:
    """Gather the per-token tensors of ``words`` ((B, T) letter indices) in fla's layout: ``q, k`` [B, T n_h, H, K],
    ``v`` [B, T n_h, H, 1], ``beta`` [B, T n_h, H], ``initial_state`` [B, H, K, 1] (torch tensors in ``dtype``,
    default float32), plus ``scale = 1.0``."""
    import torch
    dtype = torch.float32 if dtype is None else dtype
    w = np.asarray(words, dtype=np.int64)
    if w.ndim == 1:
        w = w[None]
    if w.size and (w.min() < 0 or w.max() >= len(exp.alphabet)):
        raise InputError(f"word symbols must lie in 0..{len(exp.alphabet) - 1}")
    Bn, T = w.shape
    H, K, n_h = exp.heads, exp.K, exp.n_h
    wt = torch.as_tensor(w, device=device)

    def tab(a):
        return torch.as_tensor(np.asarray(a, dtype=np.float64), device=device)

    k = tab(exp.keys)[wt]                                   # (B, T, n_h, K)
    k = k[:, :, :, None, :].expand(Bn, T, n_h, H, K).reshape(Bn, T * n_h, H, K)
    beta = tab(exp.betas)[wt][..., None].expand(Bn, T, n_h, H).reshape(Bn, T * n_h, H)
    v = tab(exp.values)[wt][..., None, None].expand(Bn, T, n_h, H, 1).reshape(Bn, T * n_h, H, 1)
    q = torch.zeros(Bn, T, n_h, H, K, dtype=torch.float64, device=device)
    q[:, :, n_h - 1] = tab(exp.queries)[wt]
    q = q.reshape(Bn, T * n_h, H, K)
    h0 = tab(exp.initial_state)[None, None, :, None].expand(Bn, H, K, 1)
    cast = lambda x: x.to(dtype).contiguous()  # noqa: E731
    return {"q": cast(q), "k": cast(k), "v": cast(v), "beta": cast(beta), "initial_state": cast(h0), "scale": 1.0}


def decode_fla_outputs(exp: FlaExport, o, words) -> np.ndarray:
    """Output indices (into ``output_labels``), shape (B, T), from fla's ``o`` [B, T n_h, H, 1]."""
    import torch
    w = np.asarray(words, dtype=np.int64)
    if w.ndim == 1:
        w = w[None]
    o = torch.as_tensor(o).detach().to("cpu", torch.float64)
    n_h = exp.n_h
    scores = o[:, n_h - 1::n_h, :, 0].numpy() + exp.bias[w]
    return exp.head_labels[np.argmax(scores, axis=-1)]


def delta_rule_reference(q, k, v, beta, initial_state, scale: float = 1.0):
    """fla's delta rule, step by step in float64 numpy (the semantics of ``fused_recurrent_delta_rule``; the naive
    loop of fla's ``ops/delta_rule/naive.py`` without its default ``K^-1/2`` scale). Shapes as in fla."""
    q, k, v, beta, S = (np.asarray(getattr(x, "cpu", lambda: x)(), dtype=np.float64) for x in
                        (q, k, v, beta, initial_state))
    Bn, T, H, K = q.shape
    S = S.copy()
    o = np.zeros((Bn, T, H, v.shape[-1]))
    for t in range(T):
        kt = k[:, t]                                         # (B, H, K)
        u = v[:, t] - np.einsum("bhkv,bhk->bhv", S, kt)
        S = S + np.einsum("bhk,bhv->bhkv", kt, beta[:, t][..., None] * u)
        o[:, t] = scale * np.einsum("bhkv,bhk->bhv", S, q[:, t])
    return o, S


def write_tokens(exp: FlaExport, model, word, out_dir: str) -> str:
    """``tokens.safetensors``: the per-token fla tensors of one word (float32, fla's layout with B = 1: ``q``, ``k``
    [1, T n_h, H, K], ``v`` [1, T n_h, H, 1], ``beta`` [1, T n_h, H], ``initial_state`` [1, H, K, 1]), the word
    (int64 letter indices), ``bias`` [T, H] and ``expected`` (int64, the float64 reference executor's output index
    after every letter, which the certified model guarantees)."""
    import torch
    from safetensors.torch import save as st_save

    from .executor import run_float
    from .fileio import atomic_write_bytes
    w = np.asarray([word], dtype=np.int64)
    x = fla_inputs(exp, w, dtype=torch.float32)
    tensors = {k: x[k].contiguous() for k in ("q", "k", "v", "beta", "initial_state")}
    tensors["word"] = torch.as_tensor(w[0])
    tensors["bias"] = torch.as_tensor(exp.bias[w[0]], dtype=torch.float32).contiguous()
    tensors["head_labels"] = torch.as_tensor(exp.head_labels)
    tensors["expected"] = torch.as_tensor(run_float(model, w).outputs[0].astype(np.int64))
    path = os.path.join(out_dir, "tokens.safetensors")
    atomic_write_bytes(path, st_save(tensors))
    return path


# --------------------------------------------------------------------------- CLI
def add_parser(sub) -> None:
    s = sub.add_parser("export", help="export a compiled model for another library (fla: per-token delta-rule "
                       "tensors)")
    s.add_argument("model", help="a model JSON written by `lrnnkit compile`")
    s.add_argument("--to", required=True, choices=["fla"], help="target library (fla = flash-linear-attention)")
    s.add_argument("-o", "--output", help="output directory (default: MODEL stem + '_fla')")
    g = s.add_mutually_exclusive_group()
    g.add_argument("--word", help='also write the per-token fla tensors of this word ("a b c") to tokens.safetensors')
    g.add_argument("--random", type=int, metavar="N", help="also write the per-token tensors of a random word of N "
                   "letters")
    s.add_argument("--seed", type=int, default=0, help="seed of --random")
    s.add_argument("--json", action="store_true", help="print a JSON summary")


def run(a) -> int:
    from .limits import MAX_SEED, check_int
    from .model import Model
    check_int("--seed", a.seed, 0, MAX_SEED, "MAX_SEED")
    model = Model.load(a.model)
    exp = export_fla(model, os.path.basename(a.model))
    out = a.output or (os.path.splitext(a.model)[0] + "_fla")
    files = exp.save(out)
    word = None
    if a.word is not None:
        word = model.encode(a.word)
    elif a.random is not None:
        if a.random < 1:
            raise InputError(f"--random must be >= 1, got {a.random}")
        word = np.random.default_rng(a.seed).integers(0, len(model.alphabet), size=a.random).tolist()
    if word is not None:
        if not word:
            raise InputError("--word: the word is empty")
        files.append(write_tokens(exp, model, word, out))
    summary = {"output": out, "files": files, "n_h": exp.n_h, "heads": exp.heads, "K": exp.K, "V": 1,
               "symbols": len(exp.alphabet), "construction": exp.meta.get("construction")}
    if a.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"wrote {out}: {exp.heads} head(s) of K = {exp.K}, V = 1, n_h = {exp.n_h} delta-rule steps per token, "
              f"{len(exp.alphabet)} symbols")
    return 0

