"""Export a compiled GH model to flash-linear-attention's delta-rule kernels (``lrnnkit export MODEL --to fla``).

**The kernel.** fla's DeltaNet / DeltaProduct kernels (``chunk_gated_delta_product`` with the gate ``g = 0``,
``chunk_delta_rule``, ``fused_recurrent_delta_rule``; 001, Section 3) run, per head, on a state ``S`` of shape
(K, V)::

    for every token t, for j = 1..n_h:   S <- (I - b_tj k_tj k_tj^T) S + b_tj k_tj v_tj^T;      o_t = scale S^T q_t

in the layout ``q: [B, T, H, K]``, ``k: [B, T n_h, H, K]``, ``v: [B, T n_h, H, V]``, ``beta: [B, T n_h, H]``
(the ``n_h`` steps of a token interleaved), ``initial_state: [B, H, K, V]``. Two layouts are written:

* ``"product"``: the DeltaProduct call above (``chunk_gated_delta_product(q, k, v, g, beta, num_householder=n_h)``,
  lrnnkit's ``chunk_gh(..., num_householder=n_h)``), one output per token, ``g = 0``;
* ``"delta_rule"``: the same steps as a sequence ``n_h`` times longer (``fused_recurrent_delta_rule``,
  ``chunk_delta_rule``: one step per call position, 001 Section 3), ``q = 0`` except at a token's last step, whose
  output is kept. With ``n_h = 1`` the two coincide.

**One layer.** A layer of kind ``gh`` (000 eq. 1 with ``A(s) = G_{n_h} .. G_1``, ``G_j = I - beta_j v_j v_j^T``,
docs/conventions.rst) or ``diagonal`` (``diag(a) = prod_i G(1 - a_i, e_i)``, a factor for every ``a_i != 1``, as
lrnnkit.model counts diagonal layers with entries in [-1, 1]) maps onto one kernel call:

* the state ``H`` (width d) is ``S`` with ``K = d``, ``V = 1``; ``initial_state = H_0`` in every head;
* factor j of layer symbol s: key ``k = v_j``, ``beta = beta_j``; symbols with fewer factors are padded with
  ``beta = 0`` (the identity) and the key ``e_1``;
* the additive term ``B(s)`` becomes the values: with ``V = 1`` the token adds
  ``sum_j beta_j (G_{n_h} .. G_{j+1}) v_j val_j``; the scalars ``val_j`` solve that linear system when ``B(s)``
  lies in the span (0 for every group construction, ``B = 0``), else the export refuses;
* **compact readout**: head h carries the same keys, betas and values and reads the state coordinate
  ``coords[h]`` (query ``e_{coords[h]}``, ``scale = 1``), so ``o_t[h] = H_t[coords[h]]``: one head per state
  coordinate some decoder row reads, not one per decoder row. The linear-argmax decoder
  ``y_t = argmax_i (W H_t + c)_i`` (``W(s_t)``, ``c(s_t)`` when per-symbol) runs on the host over these outputs.

**Several layers** (Krohn-Rhodes cascades, 000 Theorem 4; the two-layer dihedral construction, 001 Theorem 1):
layer l's symbol at step t is its input map (a table, :class:`~lrnnkit.model.layer.TableMap`) of the model input and the
decoded outputs of lower layers, each read at a lag (the BOS pad ``size - 1`` before the start), and the model's
output is the readout table of the layer outputs (lrnnkit.model). The export writes these tables down beside each
layer's kernel tables; :func:`run_fla` executes them: one kernel call per layer, in order, decoding each layer's
outputs on the host and gathering the next layer's per-token tensors from them (:func:`fla_inputs`,
:func:`decode_fla_outputs`). The files: ``fla_export.json`` (wiring, labels, recipe) and ``fla_export.safetensors``
(float64 tables). ``benchmarks/check_fla_export.py`` runs fla's own kernels through :func:`run_fla` on the GPU.
"""
from __future__ import annotations

import inspect
import json
import os
from dataclasses import dataclass, field

import numpy as np

from .errors import MESSAGE_CHARS, InputError
from .errors import SizeLimitError
from .certify import DEFAULT_MAX_PAIRS, certify
from .executor import read_values, run_float
from .fileio import atomic_write_bytes, atomic_write_text, make_dir, read_regular, read_safetensors
from . import limits
from .limits import check_int
from .model import Model, TableMap
from .model.consistency import consistency_problems

__all__ = ["FlaExport", "FlaLayer", "FlaRun", "export_fla", "fla_inputs", "decode_fla_outputs", "run_fla",
           "reference_kernel", "write_tokens"]

FORMAT = "lrnnkit.fla-export"
VERSION = 2
LAYOUTS = ("delta_rule", "product")
GH_KINDS = ("gh", "diagonal")
LAYER_ARRAYS = ("keys", "betas", "values", "initial_state", "decoder_W", "decoder_c")
DECODE_BLOCK = 8192  # tokens decoded at a time (bounds the (B, block, n_out) score array)


@dataclass
class FlaLayer:
    """One layer's kernel tables. ``keys`` (S, n_h, K); ``betas``, ``values`` (S, n_h); ``initial_state`` (K,);
    ``coords`` (H,): the state coordinate head h reads; decoder ``decoder_W`` (n_out, K) or (S, n_out, K) and
    ``decoder_c`` (n_out,) or (S, n_out) when per-symbol, naming ``labels``; ``input_map``: the layer symbol from
    the model input and the outputs of lower layers (S = its number of outputs)."""
    keys: np.ndarray
    betas: np.ndarray
    values: np.ndarray
    initial_state: np.ndarray
    coords: np.ndarray
    decoder_W: np.ndarray
    decoder_c: np.ndarray
    labels: list
    input_map: object
    name: str = ""

    @property
    def n_h(self) -> int:
        return int(self.keys.shape[1])

    @property
    def K(self) -> int:
        return int(self.keys.shape[2])

    @property
    def heads(self) -> int:
        return int(len(self.coords))

    @property
    def n_symbols(self) -> int:
        return int(self.keys.shape[0])

    @property
    def per_symbol(self) -> bool:
        return self.decoder_W.ndim == 3

    @property
    def n_out(self) -> int:
        return len(self.labels)


@dataclass
class FlaExport:
    """The export of a model: its layers (:class:`FlaLayer`, bottom-up) and the readout table from the layer
    outputs to ``output_labels``."""
    alphabet: list
    output_labels: list
    layers: list
    readout: object
    meta: dict = field(default_factory=dict)

    def source_size(self, src) -> int:
        return len(self.alphabet) if src == "input" else self.layers[src].n_out

    def to_json(self) -> dict:
        layers = []
        for i, ly in enumerate(self.layers):
            layers.append({"name": ly.name, "symbols": ly.n_symbols, "K": ly.K, "V": 1, "n_h": ly.n_h,
                           "heads": ly.heads, "coords": [int(c) for c in ly.coords], "labels": list(ly.labels),
                           "per_symbol": ly.per_symbol, "input_map": ly.input_map.to_json(),
                           "arrays": {a: f"layer{i}.{a}" for a in LAYER_ARRAYS}})
        return {"format": FORMAT, "version": VERSION, "arrays": "fla_export.safetensors",
                "alphabet": list(self.alphabet), "output_labels": list(self.output_labels), "layers": layers,
                "readout": self.readout.to_json(), "scale": 1.0, "g": 0.0,
                "layout": {"keys": "[S, n_h, K]", "betas": "[S, n_h]", "values": "[S, n_h]", "initial_state": "[K]",
                           "decoder_W": "[n_out, K] or [S, n_out, K] (per_symbol)",
                           "decoder_c": "[n_out] or [S, n_out] (per_symbol)"},
                "recipe": (
                    "layers run bottom-up. Layer l: its symbol at token t is input_map[reads] (a read of 'input' is "
                    "the word's letter index, of layer j the decoded output of layer j; at lag k the value at t - k, "
                    "or the pad size - 1 when t - k < 0). Kernel: every head h carries k = keys[s_t, j], "
                    "beta = betas[s_t, j], v = values[s_t, j] for j = 1..n_h (interleaved, fla step t*n_h + j), "
                    "query e_{coords[h]} (product layout: at every token; delta_rule layout: at j = n_h, zeros "
                    "before), initial_state[h] = initial_state (V = 1), scale = 1.0, g = 0. Decode: "
                    "H_t[coords[h]] = o[t, h, 0] (delta_rule: o[t*n_h + n_h - 1, h, 0]), y_t = "
                    "argmax(decoder_W[s_t] H_t + decoder_c[s_t]) (without [s_t] unless per_symbol). Output: "
                    "output_labels[readout[reads]]. lrnnkit.export.run_fla executes this."),
                **self.meta}

    def save(self, out_dir: str) -> list:
        from safetensors.numpy import save as st_save

        make_dir(out_dir, "export directory")
        arrays = {f"layer{i}.{a}": np.ascontiguousarray(getattr(ly, a), dtype=np.float64)
                  for i, ly in enumerate(self.layers) for a in LAYER_ARRAYS}
        p_st = os.path.join(out_dir, "fla_export.safetensors")
        p_js = os.path.join(out_dir, "fla_export.json")
        atomic_write_bytes(p_st, st_save(arrays))
        atomic_write_text(p_js, json.dumps(self.to_json(), indent=1) + "\n")
        return [p_js, p_st]

    @staticmethod
    def load(out_dir: str) -> "FlaExport":
        p_js = os.path.join(out_dir, "fla_export.json")
        raw = read_regular(p_js, limits.MAX_MODEL_BYTES, "fla export", "MAX_MODEL_BYTES")
        try:
            doc = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError, ValueError) as exc:
            raise InputError(f"{p_js!r} is not valid JSON: {exc}") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise InputError(f"{p_js!r} is not an lrnnkit fla export (format {FORMAT!r})")
        if doc.get("version") != VERSION:
            raise InputError(f"{p_js!r}: fla export version {doc.get('version')!r}; this lrnnkit reads version "
                             f"{VERSION} (run `lrnnkit export MODEL --to fla` again)")
        layers = doc.get("layers")
        if not isinstance(layers, list) or not layers:
            raise InputError(f"{p_js!r}: malformed fla export (no layers)")
        names = [f"layer{i}.{a}" for i in range(len(layers)) for a in LAYER_ARRAYS]
        arrays = read_safetensors(os.path.join(out_dir, "fla_export.safetensors"), names, limits.MAX_ARRAYS_BYTES,
                                  "fla export arrays")
        try:
            return _from_json(doc, arrays)
        except InputError as exc:
            raise InputError(f"{p_js!r}: {exc}") from None
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            raise InputError(f"{p_js!r}: malformed fla export ({type(exc).__name__}: {exc})") from None


def _from_json(doc: dict, arrays: dict) -> FlaExport:
    alphabet, labels = [str(x) for x in doc["alphabet"]], [str(x) for x in doc["output_labels"]]
    layers = []
    for i, ld in enumerate(doc["layers"]):
        missing = [a for a in LAYER_ARRAYS if f"layer{i}.{a}" not in arrays]
        if missing:
            raise InputError(f"layer {i}: arrays missing from the export: {', '.join(missing)}")
        a = {n: np.asarray(arrays[f"layer{i}.{n}"], dtype=np.float64) for n in LAYER_ARRAYS}
        ly = FlaLayer(a["keys"], a["betas"], a["values"], a["initial_state"], np.asarray(ld["coords"], np.int64),
                      a["decoder_W"], a["decoder_c"], [str(x) for x in ld["labels"]],
                      TableMap.from_json(ld["input_map"], f"layer {i} input map"), str(ld.get("name", "")))
        _check_layer(ly, i)
        layers.append(ly)
    exp = FlaExport(alphabet, labels, layers, TableMap.from_json(doc["readout"], "readout"),
                    {k: doc.get(k) for k in ("source_model", "construction", "automaton", "paper")})
    for i, ly in enumerate(layers):
        _check_reads(exp, ly.input_map, i, f"layer {i} input map")
    _check_reads(exp, exp.readout, len(layers), "readout")
    if exp.readout.n_out != len(labels):
        raise InputError(f"readout has {exp.readout.n_out} outputs for {len(labels)} labels")
    return exp


def _check_layer(ly: FlaLayer, i: int) -> None:
    S, n_h, K = ly.keys.shape if ly.keys.ndim == 3 else (0, 0, 0)
    want = {"keys": (S, n_h, K), "betas": (S, n_h), "values": (S, n_h), "initial_state": (K,)}
    n_out = len(ly.labels)
    dec = (S, n_out, K) if ly.decoder_W.ndim == 3 else (n_out, K)
    want.update(decoder_W=dec, decoder_c=dec[:-1])
    for name, shape in want.items():
        if getattr(ly, name).shape != shape or S < 1 or n_h < 1 or K < 1:
            raise InputError(f"layer {i}: {name} has shape {getattr(ly, name).shape}, expected {shape}")
        if not np.all(np.isfinite(getattr(ly, name))):
            raise InputError(f"layer {i}: {name} contains NaN or infinity")
    if ly.input_map.n_out != S:
        raise InputError(f"layer {i}: input map has {ly.input_map.n_out} outputs for {S} symbols")
    if ly.coords.ndim != 1 or len(ly.coords) < 1 or ly.coords.min() < 0 or ly.coords.max() >= K:
        raise InputError(f"layer {i}: coords must be state coordinates in 0..{K - 1}")
    if np.any(ly.betas < 0) or np.any(ly.betas > 2):
        raise InputError(f"layer {i}: betas outside [0, 2]")


def _check_reads(exp: FlaExport, tm, below: int, where: str) -> None:
    for r, s in zip(tm.reads, tm.sizes):
        if r.source != "input" and not (isinstance(r.source, int) and 0 <= r.source < below):
            raise InputError(f"{where}: reads {r.source!r}, which is not the input or a layer below")
        if s != exp.source_size(r.source) + (1 if r.lag > 0 else 0):
            raise InputError(f"{where}: read {r.source!r} (lag {r.lag}) has size {s}, which does not match its source")


# --------------------------------------------------------------------------- model -> export
def _factors(L, t, where: str) -> list:
    """The (beta, unit key) pairs of one transition, in order: GH factors, or diag(a) = prod_i G(1 - a_i, e_i)."""
    if L.kind == "gh":
        out = []
        for j, f in enumerate(t.factors or []):
            if not -1e-12 <= f.beta <= 2 + 1e-12:
                raise InputError(f"{where} factor {j}: beta {f.beta} outside [0, 2]")
            out.append((float(f.beta), np.asarray(f.v, dtype=np.float64)))
        return out
    a = np.diag(t.A)
    if np.any(np.abs(a) > 1):
        raise InputError(f"{where}: a diagonal entry outside [-1, 1] is not a product of GH factors")
    return [(float(1 - a[i]), np.eye(len(a))[i]) for i in range(len(a)) if a[i] != 1]


def _values_for_B(factors: list, d: int, B: np.ndarray, n_h: int, where: str) -> np.ndarray:
    """Scalars val_j with sum_j beta_j (G_n .. G_{j+1}) v_j val_j = B (exact solve, refusing a residual)."""
    vals = np.zeros(n_h)
    if not np.any(B):
        return vals
    cols = []
    for j, (beta, v) in enumerate(factors):
        P = np.eye(d)
        for b2, v2 in factors[j + 1:]:
            P = (np.eye(d) - b2 * np.outer(v2, v2)) @ P
        cols.append(beta * (P @ v))
    if not cols:
        raise InputError(f"{where}: B != 0 on a symbol without GH factors cannot be a delta-rule step")
    M = np.stack(cols, 1)
    sol, *_ = np.linalg.lstsq(M, B, rcond=None)
    if np.max(np.abs(M @ sol - B)) > 1e-9 * max(1.0, float(np.max(np.abs(B)))):
        raise InputError(f"{where}: the additive term B is not in the span of the symbol's delta-rule steps; "
                         "fla's delta rule cannot reproduce it")
    vals[: len(sol)] = sol
    return vals


def _not_gh(model, source_name: str) -> str | None:
    bad = [(i, L.kind) for i, L in enumerate(model.layers) if L.kind not in GH_KINDS]
    if not bad:
        return None
    i, kind = bad[0]
    cons = model.provenance.get("construction")
    return (f"export --to fla needs layers that are products of generalized Householder factors (kinds "
            f"{' / '.join(GH_KINDS)}); layer {i} of {source_name or 'the model'} is {kind!r}"
            + (f" (construction {cons})" if cons else "") + ": compile it with a GH construction")


def _check_verified(model, source_name: str, max_pairs: int) -> None:
    """Refuse (InputError) a model ``lrnnkit verify`` would not certify: one that contradicts itself (float weights
    that are not the rounding of its exact weights, a GH factor out of range; :func:`consistency_problems`) and,
    when it records its automaton, one the certifier does not certify for every input length (a wrong readout)."""
    where = source_name or "the model"
    problems = consistency_problems(model)
    if problems:
        raise InputError(f"not exported: {where} contradicts itself ({problems[0]}); `lrnnkit verify` refuses it"
                         [:400])
    if isinstance(model.provenance.get("automaton"), dict):
        cert = certify(model, max_pairs=max_pairs)
        if not cert.certified:
            raise InputError(f"not exported: {where} is not certified against its recorded automaton ({cert.method}: "
                             f"{cert.reason}); `lrnnkit verify` says why"[:400])


def export_fla(model, source_name: str = "", *, verify: bool = True, max_pairs: int | None = None) -> FlaExport:
    """The fla kernel tables of every layer of a GH model (kinds ``gh`` / ``diagonal``) and its wiring (see the
    module docstring). With ``verify`` (the default) a model that ``lrnnkit verify`` rejects is refused first
    (InputError): one whose float weights contradict its exact ones, or, when it records its automaton, one not
    certified for every input length within ``max_pairs`` (default :data:`lrnnkit.certify.DEFAULT_MAX_PAIRS`)
    reachable pairs -- the export would carry its wrong floats or wrong readout to fla."""
    if not isinstance(model, Model):
        raise InputError(f"export_fla expects an lrnnkit Model, got {type(model).__name__}")
    if not isinstance(verify, bool):
        raise InputError(f"export_fla: verify must be True or False, got {verify!r}"[:MESSAGE_CHARS])
    msg = _not_gh(model, source_name)
    if msg:
        raise InputError(msg)
    if verify:
        if max_pairs is None:
            max_pairs = DEFAULT_MAX_PAIRS
        check_int("max_pairs", max_pairs, 1, limits.MAX_PAIRS_LIMIT, "MAX_PAIRS_LIMIT")
        _check_verified(model, source_name, max_pairs)
    layers = []
    for li, L in enumerate(model.layers):
        S, d = L.n_symbols, L.width
        names = L.symbol_names or [str(s) for s in range(S)]
        facs = [_factors(L, t, f"layer {li} symbol {names[s] if s < len(names) else s!r}")
                for s, t in enumerate(L.transitions)]
        n_h = max(1, max(len(f) for f in facs))
        keys = np.zeros((S, n_h, d))
        keys[:, :, 0] = 1.0
        betas = np.zeros((S, n_h))
        values = np.zeros((S, n_h))
        for s, fs in enumerate(facs):
            for j, (beta, v) in enumerate(fs):
                keys[s, j] = v
                betas[s, j] = min(max(beta, 0.0), 2.0)
            values[s] = _values_for_B(fs, d, np.asarray(L.transitions[s].B, dtype=np.float64), n_h,
                                      f"layer {li} symbol {s}")
        D = L.decoder
        W = np.asarray(D.W, dtype=np.float64)
        used = np.flatnonzero(np.any(W.reshape(-1, d) != 0, axis=0))
        coords = used if used.size else np.zeros(1, dtype=np.int64)
        layers.append(FlaLayer(keys, betas, values, np.asarray(L.H0, dtype=np.float64), coords.astype(np.int64),
                               W, np.asarray(D.c, dtype=np.float64), list(D.labels), L.input_map, L.name))
    meta = {"source_model": source_name, "construction": model.provenance.get("construction"),
            "automaton": model.provenance.get("automaton") or model.provenance.get("source"),
            "paper": model.provenance.get("paper")}
    return FlaExport(list(model.alphabet), list(model.output_labels), layers, model.readout, meta)


# --------------------------------------------------------------------------- kernel tensors and decoding
def _words(exp: FlaExport, words) -> np.ndarray:
    w = np.asarray(words, dtype=np.int64)
    if w.ndim == 1:
        w = w[None]
    if w.ndim != 2:
        raise InputError(f"words: expected a (B, T) array of letter indices, got shape {w.shape}")
    if w.size and (w.min() < 0 or w.max() >= len(exp.alphabet)):
        raise InputError(f"word symbols must lie in 0..{len(exp.alphabet) - 1}")
    return w


def _sources(exp: FlaExport, w: np.ndarray, below, upto: int) -> dict:
    """{"input": words, j: outputs of layer j} for the layers below ``upto`` (checked against their sizes)."""
    src = {"input": w}
    below = list(below or [])
    for j, y in enumerate(below[:upto]):
        y = np.asarray(y, dtype=np.int64)
        if y.shape != w.shape:
            raise InputError(f"below[{j}]: shape {y.shape}, expected the words' {w.shape}")
        if y.size and (y.min() < 0 or y.max() >= exp.layers[j].n_out):
            raise InputError(f"below[{j}]: outputs of layer {j} must lie in 0..{exp.layers[j].n_out - 1}")
        src[j] = y
    return src


def _symbols(exp: FlaExport, w: np.ndarray, layer: int, below) -> np.ndarray:
    if not 0 <= layer < len(exp.layers):
        raise InputError(f"layer must lie in 0..{len(exp.layers) - 1}, got {layer}")
    tm = exp.layers[layer].input_map
    src = _sources(exp, w, below, layer)
    need = sorted({r.source for r in tm.reads if r.source != "input" and r.source not in src})
    if need:
        raise InputError(f"layer {layer} reads the outputs of layer(s) {need}: pass below=[outputs of layers "
                         f"0..{layer - 1}] (decode_fla_outputs of each), or use run_fla")
    return read_values(tm, src, w.shape[1])


def fla_inputs(exp: FlaExport, words, *, layer: int = 0, below=None, layout: str = "delta_rule", dtype=None,
               device="cpu", min_K: int | None = None) -> dict:
    """The kernel inputs of layer ``layer`` for ``words`` ((B, T) letter indices) as torch tensors in ``dtype``
    (default float32) on ``device``, keyed by fla's argument names so that ``kernel(**x)`` runs it.

    ``below``: the decoded outputs ((B, T) each, :func:`decode_fla_outputs`) of layers ``0..layer-1``, needed when
    the layer reads them. ``layout="delta_rule"``: ``q, k`` [B, T n_h, H, K], ``v`` [B, T n_h, H, 1], ``beta``
    [B, T n_h, H]; ``"product"``: ``q`` [B, T, H, K] (one query per token), ``k, v, beta`` as before, ``g``
    [B, T, H] zeros and ``num_householder = n_h``. Both: ``initial_state`` [B, H, K, 1], ``scale = 1.0``.
    ``min_K``: pad K with zero coordinates up to ``min_K`` (a key's zero coordinates leave those rows of S at 0),
    for kernels whose tiles need a minimum width."""
    import torch
    if layout not in LAYOUTS:
        raise InputError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
    dtype = torch.float32 if dtype is None else dtype
    w = _words(exp, words)
    s = torch.as_tensor(_symbols(exp, w, layer, below), device=device)
    ly = exp.layers[layer]
    Bn, T = w.shape
    H, n_h = ly.heads, ly.n_h
    K = max(ly.K, int(min_K or 0))

    def tab(a, pad_last: bool = False):
        a = np.asarray(a, dtype=np.float64)
        if pad_last and a.shape[-1] < K:
            a = np.concatenate([a, np.zeros(a.shape[:-1] + (K - a.shape[-1],))], axis=-1)
        return torch.as_tensor(a, device=device).to(dtype)

    k = tab(ly.keys, True)[s][:, :, :, None, :].expand(Bn, T, n_h, H, K).reshape(Bn, T * n_h, H, K)
    beta = tab(ly.betas)[s][..., None].expand(Bn, T, n_h, H).reshape(Bn, T * n_h, H)
    v = tab(ly.values)[s][..., None, None].expand(Bn, T, n_h, H, 1).reshape(Bn, T * n_h, H, 1)
    eye = torch.zeros(H, K, dtype=dtype, device=device)
    eye[torch.arange(H, device=device), torch.as_tensor(ly.coords, device=device)] = 1
    if layout == "product":
        q = eye.expand(Bn, T, H, K)
    else:
        q = torch.zeros(Bn, T, n_h, H, K, dtype=dtype, device=device)
        q[:, :, n_h - 1] = eye
        q = q.reshape(Bn, T * n_h, H, K)
    h0 = tab(ly.initial_state, True)[None, None, :, None].expand(Bn, H, K, 1)
    out = {"q": q.contiguous(), "k": k.contiguous(), "v": v.contiguous(), "beta": beta.contiguous(),
           "initial_state": h0.contiguous(), "scale": 1.0}
    if layout == "product":
        out["g"] = torch.zeros(Bn, T, H, dtype=dtype, device=device)
        out["num_householder"] = n_h
    return out


def decode_fla_outputs(exp: FlaExport, o, words, *, layer: int = 0, below=None) -> np.ndarray:
    """Layer ``layer``'s decoded outputs (indices into its ``labels``), shape (B, T), from the kernel's ``o``:
    [B, T, H, 1] (product layout) or [B, T n_h, H, 1] (delta_rule layout). ``below`` as in :func:`fla_inputs`
    (used by per-symbol decoders). The scores ``W H_t + c`` are computed in float64."""
    import torch
    w = _words(exp, words)
    ly = exp.layers[layer] if 0 <= layer < len(exp.layers) else None
    if ly is None:
        raise InputError(f"layer must lie in 0..{len(exp.layers) - 1}, got {layer}")
    Bn, T = w.shape
    o = torch.as_tensor(o).detach()
    if o.ndim != 4 or o.shape[0] != Bn or o.shape[2] != ly.heads or o.shape[1] not in (T, T * ly.n_h):
        raise InputError(f"o: expected shape (B, T, H, V) or (B, T*n_h, H, V) with B={Bn}, T={T}, n_h={ly.n_h}, "
                         f"H={ly.heads}; got {tuple(o.shape)}")
    if o.shape[1] != T:
        o = o[:, ly.n_h - 1::ly.n_h]
    st = o[..., 0].to("cpu", torch.float64).numpy()          # (B, T, H): H_t[coords[h]]
    W, c = ly.decoder_W[..., ly.coords], ly.decoder_c
    s = _symbols(exp, w, layer, below) if ly.per_symbol else None
    y = np.empty((Bn, T), dtype=np.int64)
    for a in range(0, T, DECODE_BLOCK):
        b = min(T, a + DECODE_BLOCK)
        if ly.per_symbol:
            sc = np.einsum("btnh,bth->btn", W[s[:, a:b]], st[:, a:b]) + c[s[:, a:b]]
        else:
            sc = st[:, a:b] @ W.T + c
        y[:, a:b] = np.argmax(sc, axis=-1)
    return y


# --------------------------------------------------------------------------- the multi-layer runner
@dataclass
class FlaRun:
    """What :func:`run_fla` computed: ``outputs`` (B, T) indices into ``output_labels``; per layer its decoded
    outputs and its symbols (B, T)."""
    outputs: np.ndarray
    layer_outputs: list
    layer_symbols: list
    output_labels: list

    def labels(self) -> np.ndarray:
        return np.asarray(self.output_labels, dtype=object)[self.outputs]


def reference_kernel(q, k, v, g=None, beta=None, num_householder: int = 1, scale: float | None = None,
                     initial_state=None, output_final_state: bool = False, **_):
    """A pure-torch stand-in for fla's ``chunk_gated_delta_product`` (same arguments and semantics: per token
    ``S <- exp(g_t) S``, then for j = 1..n_h ``S <- (I - b_j k_j k_j^T) S + b_j k_j v_j^T``, ``o_t = scale S^T
    q_t``; ``scale`` defaults to ``K^-1/2`` as in fla). Runs lrnnkit's sequential reference
    (:func:`lrnnkit.ops.gh.naive.delta_product_naive`) in the inputs' accumulation dtype (float64 for
    float64). Returns ``(o, final_state)``."""
    from .ops.gh.naive import delta_product_naive
    B, T, H, K = q.shape
    n = int(num_householder)
    scale = K ** -0.5 if scale is None else scale
    return delta_product_naive(q=q, k=k.reshape(B, T, n, H, K), v=v.reshape(B, T, n, H, v.shape[-1]),
                               beta=beta.reshape(B, T, n, H), g=g, scale=scale, initial_state=initial_state,
                               output_final_state=output_final_state)


def _kernel_call(kernel, layout: str | None):
    """(layout, call(x) -> o): fla's kernels and lrnnkit's ``chunk_gh`` called by keyword, with the layout their
    signature asks for (``num_householder`` or ``n_h``: product; otherwise delta_rule)."""
    try:
        params = inspect.signature(kernel).parameters
    except (TypeError, ValueError):
        params = {}
    any_kw = not params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    nh_name = "num_householder" if "num_householder" in params else ("n_h" if "n_h" in params else None)
    if layout is None:
        layout = "product" if nh_name else "delta_rule"
    if layout not in LAYOUTS:
        raise InputError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")

    def call(x: dict):
        kw = dict(x)
        n_h = kw.pop("num_householder", None)
        if n_h is not None:
            kw[nh_name or "num_householder"] = n_h
        if not any_kw:
            kw = {a: b for a, b in kw.items() if a in params}
        out = kernel(**kw)
        return out[0] if isinstance(out, (tuple, list)) else out
    return layout, call


def run_fla(exp: FlaExport, words, kernel=None, *, layout: str | None = None, dtype=None, device="cpu",
            min_K: int | None = None) -> FlaRun:
    """Run the exported model on ``words`` ((B, T) letter indices): one ``kernel`` call per layer, bottom-up,
    decoding each layer's outputs on the host and wiring them into the next layers' symbols (input maps, lags,
    readout: the module docstring), as the export file writes down.

    ``kernel``: fla's ``chunk_gated_delta_product`` / ``fused_recurrent_delta_rule`` / ``chunk_delta_rule``,
    lrnnkit's ``chunk_gh``, or any callable taking fla's keyword arguments (default :func:`reference_kernel`, a
    pure-torch stand-in); it is called by keyword, in the layout its signature asks for unless ``layout`` is given.
    ``dtype`` (default float32) and ``device``: those of the kernel inputs; ``min_K`` as in :func:`fla_inputs`."""
    kernel = reference_kernel if kernel is None else kernel
    layout, call = _kernel_call(kernel, layout)
    w = _words(exp, words)
    outs, syms = [], []
    for i in range(len(exp.layers)):
        x = fla_inputs(exp, w, layer=i, below=outs, layout=layout, dtype=dtype, device=device, min_K=min_K)
        o = call(x)
        del x
        syms.append(_symbols(exp, w, i, outs))
        outs.append(decode_fla_outputs(exp, o, w, layer=i, below=outs))
        del o
    final = read_values(exp.readout, _sources(exp, w, outs, len(outs)), w.shape[1])
    return FlaRun(final, outs, syms, list(exp.output_labels))


def write_tokens(exp: FlaExport, model, word, out_dir: str, layout: str = "delta_rule") -> str:
    """``tokens.safetensors``: one word's per-token kernel inputs of every layer l (float32, B = 1, the tensors of
    :func:`fla_inputs` named ``layer{l}.q`` ...), computed from the certified outputs of the layers below (the
    float64 reference executor's), with ``layer{l}.symbols`` and ``layer{l}.expected`` (that layer's outputs),
    ``word`` and ``expected`` (the model's output index after every letter; int64)."""
    import torch
    from safetensors.torch import save as st_save

    w = np.asarray([word], dtype=np.int64)
    ref = run_float(model, w)
    tensors = {"word": torch.as_tensor(w[0]), "expected": torch.as_tensor(ref.outputs[0].astype(np.int64))}
    for i in range(len(exp.layers)):
        x = fla_inputs(exp, w, layer=i, below=ref.layer_outputs, layout=layout, dtype=torch.float32)
        for name in ("q", "k", "v", "beta", "g", "initial_state"):
            if name in x:
                tensors[f"layer{i}.{name}"] = x[name].contiguous()
        tensors[f"layer{i}.symbols"] = torch.as_tensor(ref.layer_symbols[i][0].astype(np.int64))
        tensors[f"layer{i}.expected"] = torch.as_tensor(ref.layer_outputs[i][0].astype(np.int64))
    path = os.path.join(out_dir, "tokens.safetensors")
    atomic_write_bytes(path, st_save(tensors))
    return path


def _check_token_size(exp: FlaExport, T: int) -> None:
    """The per-token tensors ``q``, ``k`` of a word of ``T`` letters have ``T n_h H K`` entries each: refuse a word
    past EXPORT_MAX_TOKEN_VALUES before anything is allocated."""
    for i, ly in enumerate(exp.layers):
        n = T * ly.n_h * ly.heads * ly.K
        if n > limits.EXPORT_MAX_TOKEN_VALUES:
            raise SizeLimitError(f"a word of {T} letters makes per-token tensors of {T} x {ly.n_h} x {ly.heads} x "
                                 f"{ly.K} = {n} entries in layer {i} (T x n_h x heads x K); at most "
                                 f"{limits.EXPORT_MAX_TOKEN_VALUES} (lrnnkit.limits.EXPORT_MAX_TOKEN_VALUES)")
