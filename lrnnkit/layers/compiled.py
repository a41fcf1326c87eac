"""Run a compiled lrnnkit :class:`~lrnnkit.model.ir.Model` batched on torch / Triton.

A layer's symbol depends on the decoded outputs of the layers below it, so a model runs layer by layer
(docs/model_format.rst): the whole batch of sequences goes through layer 1 (one fused recurrent scan
that also decodes), then layer 2's symbols are looked up from its :class:`~lrnnkit.model.layer.TableMap` over the
model input and the lower layers' outputs (each read at its lag, with the BOS pad ``size - 1`` before the start),
and so on; the readout table maps the layer outputs to the model's output labels.

Weights are taken from the exact forms where the model has them (rounded once to the run's dtype), else from
the float64 arrays. GH layers run as precomputed letter matrices by default (``gh_mode="matrix"``: permutation
letters are then exact 0/1 matrices in every dtype) or factor by factor as DeltaProduct does
(``gh_mode="factors"``); block-diagonal, bilinear and dense layers run their letter matrices; diagonal layers their
diagonals. States accumulate in float32 (float64 for ``dtype=torch.float64``); bf16/fp16 round the weights only.
"""
from __future__ import annotations

import numpy as np
import torch

from ..errors import InputError
from ..exact import to_float

BACKENDS = ("torch", "triton")
DTYPES = {"float64": torch.float64, "float32": torch.float32, "bfloat16": torch.bfloat16,
          "float16": torch.float16, "fp64": torch.float64, "fp32": torch.float32, "bf16": torch.bfloat16,
          "fp16": torch.float16}


def _f(exact, approx) -> np.ndarray:
    """float64 array from the exact form when present (correctly rounded), else the stored float64 array."""
    if exact is None:
        return np.asarray(approx, dtype=np.float64)
    if exact and isinstance(exact[0], (list, tuple)):
        if exact[0] and isinstance(exact[0][0], (list, tuple)):
            return np.array([[[to_float(x) for x in r] for r in m] for m in exact], dtype=np.float64)
        return np.array([[to_float(x) for x in r] for r in exact], dtype=np.float64)
    return np.array([to_float(x) for x in exact], dtype=np.float64)


def layer_tables(layer, dtype: torch.dtype = torch.float32, device="cpu", gh_mode: str = "matrix") -> dict:
    """The arrays a layer scan needs: mode, A (S,d,d) | beta,v (S,NF),(S,NF,d) | diag (S,d); B (S,d); H0 (d,);
    decoder W (S or 1, n_out, d), c (S or 1, n_out); all in ``dtype`` on ``device``."""
    if gh_mode not in ("matrix", "factors"):
        raise InputError(f"gh_mode must be 'matrix' or 'factors', got {gh_mode!r}")
    d, S = layer.width, layer.n_symbols
    if S == 0:
        raise InputError(f"layer {layer.name!r} has no symbols")

    def T(x):
        return torch.as_tensor(np.asarray(x, dtype=np.float64), dtype=dtype, device=device)

    tabs: dict = {}
    kind = layer.kind
    if kind == "gh" and gh_mode == "factors" and all(t.factors is not None for t in layer.transitions):
        nf = max(1, max(len(t.factors) for t in layer.transitions))
        beta = np.zeros((S, nf))
        v = np.zeros((S, nf, d))
        for s, t in enumerate(layer.transitions):
            for j, f in enumerate(t.factors):
                beta[s, j] = to_float(f.beta_exact) if f.beta_exact is not None else f.beta
                v[s, j] = f.v
        tabs.update(mode="gh", beta=T(beta), v=T(v))
    elif kind == "diagonal":
        diag = np.stack([t.diag if t.diag is not None else np.diag(_f(t.A_exact, t.A)) for t in layer.transitions])
        tabs.update(mode="diagonal", diag=T(diag))
    elif kind in ("gh", "block_diagonal", "bilinear", "dense"):
        tabs.update(mode="dense", A=T(np.stack([_f(t.A_exact, t.A) for t in layer.transitions])))
    else:
        raise InputError(f"layer {layer.name!r}: unsupported kind {kind!r}")
    tabs["B"] = T(np.stack([_f(t.B_exact, t.B) for t in layer.transitions]))
    tabs["H0"] = T(_f(layer.H0_exact, layer.H0))
    D = layer.decoder
    W = _f(D.W_exact, D.W) if D.W_exact is not None else np.asarray(D.W, np.float64)
    c = _f(D.c_exact, D.c) if D.c_exact is not None else np.asarray(D.c, np.float64)
    if not D.per_symbol:
        W, c = W[None], c[None]
    if W.shape[-1] != d or W.shape[1] != c.shape[1] or W.shape[1] < 1:
        raise InputError(f"layer {layer.name!r}: decoder shapes W {W.shape}, c {c.shape} do not fit width {d}")
    tabs["W"], tabs["c"] = T(W), T(c)
    return tabs


def _lookup(tmap, values: dict, words: torch.Tensor) -> torch.Tensor:
    """Apply a TableMap to whole sequences: read each source at its lag (BOS pad ``size - 1`` before t = 1)."""
    nb, T = words.shape
    idx = torch.zeros(nb, T, dtype=torch.int64, device=words.device)
    for rd, size in zip(tmap.reads, tmap.sizes):
        idx = idx * size + rd.at_lag(words if rd.source == "input" else values[rd.source], size, xp=torch)
    table = torch.as_tensor(tmap.table, dtype=torch.int64, device=words.device)
    return table[idx]


class LoadedModel(torch.nn.Module):
    """A compiled Model as a torch module: ``forward(words (B, T) int) -> (B, T) output indices`` (indices into
    ``model.output_labels``); ``last_layer_outputs`` keeps each layer's decoded outputs of the last call."""

    def __init__(self, model, *, backend: str = "triton", dtype: torch.dtype = torch.float32, device=None,
                 gh_mode: str = "matrix"):
        super().__init__()
        if backend not in BACKENDS:
            raise InputError(f"unknown kernel backend {backend!r} (choose from {', '.join(BACKENDS)})")
        if isinstance(dtype, str):
            if dtype not in DTYPES:
                raise InputError(f"unknown dtype {dtype!r} (choose from {', '.join(DTYPES)})")
            dtype = DTYPES[dtype]
        if dtype not in (torch.float64, torch.float32, torch.bfloat16, torch.float16):
            raise InputError(f"unsupported dtype {dtype}")
        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"
        if backend == "triton":
            from ..ops._triton import INTERPRET
            if torch.device(device).type == "cpu" and not INTERPRET:
                raise InputError("backend 'triton' on the CPU needs TRITON_INTERPRET=1 (no GPU found)")
        self.model, self.backend, self.dtype, self.device_ = model, backend, dtype, torch.device(device)
        self.tables = [layer_tables(L, dtype, self.device_, gh_mode) for L in model.layers]
        self.last_layer_outputs: list = []

    def forward(self, words) -> torch.Tensor:
        words = torch.as_tensor(np.asarray(words) if not isinstance(words, torch.Tensor) else words)
        if words.ndim == 1:
            words = words[None]
        if words.ndim != 2:
            raise InputError(f"words: expected shape (B, T), got {tuple(words.shape)}")
        if words.dtype.is_floating_point or words.dtype == torch.bool or words.dtype.is_complex:
            raise InputError(f"words: expected integer symbol indices, got dtype {words.dtype}")
        n = len(self.model.alphabet)
        if words.numel() and (int(words.min()) < 0 or int(words.max()) >= n):
            bad = words[(words < 0) | (words >= n)][0]
            raise InputError(f"words: symbol index {int(bad)} outside the alphabet 0..{n - 1}")
        words = words.to(self.device_, torch.int64)
        if self.backend == "triton":
            from ..ops.table.fused_recurrent import table_scan_triton as scan
        else:
            from ..ops.table.naive import table_scan_naive as scan
        outs: dict = {}
        for i, (L, tabs) in enumerate(zip(self.model.layers, self.tables)):
            sym = _lookup(L.input_map, outs, words)
            outs[i], _ = scan(sym, tabs)
        self.last_layer_outputs = [outs[i] for i in range(len(self.model.layers))]
        return _lookup(self.model.readout, outs, words)


def load(model, *, backend: str = "triton", dtype: torch.dtype = torch.float32, device=None,
         gh_mode: str = "matrix") -> LoadedModel:
    """``lrnnkit.layers.load(model) -> torch.nn.Module`` running the whole compiled model batched (Triton on
    the GPU, or the interpreter on the CPU with TRITON_INTERPRET=1; ``backend="torch"`` for plain torch)."""
    return LoadedModel(model, backend=backend, dtype=dtype, device=device, gh_mode=gh_mode)


def run_model(model, words, backend: str = "torch", dtype=torch.float32, *, device=None,
              gh_mode: str = "matrix") -> np.ndarray:
    """Run ``model`` on ``words`` ((B, T) int array of alphabet indices) and return the (B, T) int64 array of
    output indices into ``model.output_labels`` (what ``lrnnkit run --backend torch|triton --dtype D`` prints)."""
    mod = load(model, backend=backend, dtype=dtype, device=device, gh_mode=gh_mode)
    with torch.no_grad():
        return mod(words).cpu().numpy()
