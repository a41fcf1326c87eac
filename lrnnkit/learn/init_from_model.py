"""The reverse direction: a compiled construction as the initial weights of a trainable LRNN, before and after
fine-tuning.

Why a dedicated layer and not :class:`~lrnnkit.learn.models.SequenceModel`: the constructions of 000 (Theorem 3,
Section 4) and 001 (Section 3, 5.1) start from a non-zero state ``H_0`` (e.g. ``(1, 2, ..., n)`` for S_n by
transposition reflections, ``-1`` for parity) with ``B = 0``, while SequenceModel's DeltaNet / DeltaProduct mixer
starts every sequence from the zero state (fla's convention: no learned initial state, no BOS token), so with
``B = 0`` its state stays 0 and no input-independent way exists to inject ``H_0`` at the first token. Its keys also
pass through a short convolution and SiLU before normalisation, and its outputs through an RMSNorm, a residual
stream and a head, none of which the constructions use. Mapping a construction into it would mean changing the
construction, so the weights are loaded into :class:`ConstructionLRNN`, the minimal trainable model of the same
family (one DeltaProduct layer, 001 eq. for the recurrence):

* per letter ``x`` and factor j: a key ``k_j(x)`` (a free vector, L2-normalised in the forward pass), a
  ``beta_j(x)`` clamped to [0, 2] (eigenvalue range [-1, 1]) or [0, 1] (range [0, 1]), a value ``val_j(x)``;
* one token applies ``H <- (I - beta_j k_j k_j^T) H + beta_j k_j val_j`` for j = 1..n_h (later factor on the left,
  docs/conventions.rst), from a learned ``H_0``;
* logits: ``W H_t + c`` (the construction's linear-argmax decoder; a label with several decoder rows takes their
  maximum).

:meth:`ConstructionLRNN.from_model` reads these tables from :func:`lrnnkit.export.export_fla` (the same mapping as
the fla export: keys, betas, values, decoder rows, ``H_0``), so at initialisation the model computes exactly the
compiled model's scores. :func:`finetune_from_construction` measures the accuracy at a long length (10^4) before and
after fine-tuning on short words with cross-entropy (AdamW), and the same for the same class from a random
initialisation (the control), and for the construction loaded into the [0, 1] range (betas clipped to 1: the
negative eigenvalues 000 Theorems 1-2 require are gone).
"""
from __future__ import annotations

import time

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from ..automata.sources import load_source
from ..constructions import compile as compile_model
from ..errors import InputError
from ..export import export_fla
from .models import parse_eig_range
from .tasks import IGNORE, AutomatonTask, batch_rng

__all__ = ["ConstructionLRNN", "finetune_from_construction", "accuracy_at"]


class ConstructionLRNN(nn.Module):
    """One trainable GH (DeltaProduct) layer with per-letter weights; see the module docstring.

    ``forward(tokens (B, T)) -> logits (B, T, n_labels)``. ``transition_matrices`` / ``betas`` / ``keys`` follow
    :class:`~lrnnkit.learn.models.SequenceModel`'s shapes (one layer, one head) so that
    :func:`lrnnkit.learn.analysis.analyze` reads both."""

    def __init__(self, n_letters: int, n_labels: int, width: int, n_h: int, n_rows: int | None = None,
                 eig_range=(-1.0, 1.0), row_labels=None, dtype=torch.float32):
        super().__init__()
        self.beta_max = 2.0 if parse_eig_range(eig_range)[0] < 0 else 1.0
        n_rows = n_rows or n_labels
        self.config = {"vocab": n_letters, "n_out": n_labels, "layer": "deltaproduct", "n_h": n_h,
                       "width": width, "eig_range": list(parse_eig_range(eig_range)), "rows": n_rows}
        g = torch.Generator().manual_seed(0)
        self.keys_raw = nn.Parameter(torch.randn(n_letters, n_h, width, generator=g, dtype=dtype))
        self.beta_raw = nn.Parameter(torch.rand(n_letters, n_h, generator=g, dtype=dtype) * self.beta_max)
        self.vals = nn.Parameter(0.1 * torch.randn(n_letters, n_h, generator=g, dtype=dtype))
        self.h0 = nn.Parameter(torch.randn(width, generator=g, dtype=dtype))
        self.W = nn.Parameter(torch.randn(n_rows, width, generator=g, dtype=dtype) / width ** 0.5)
        self.c = nn.Parameter(torch.zeros(n_rows, dtype=dtype))
        rl = torch.arange(n_rows) % n_labels if row_labels is None else torch.as_tensor(row_labels)
        self.register_buffer("row_labels", rl.long())

    # ------------------------------------------------------------------ the recurrence
    def _tables(self):
        k = F.normalize(self.keys_raw, dim=-1)
        beta = self.beta_raw.clamp(0.0, self.beta_max)
        return k, beta

    def states(self, tokens: torch.Tensor) -> torch.Tensor:
        """All states ``H_t`` (B, T, width)."""
        k, beta = self._tables()
        tokens = tokens.long()
        Bn, T = tokens.shape
        kt, bt, vt = k[tokens], beta[tokens], self.vals[tokens]      # (B,T,n_h,K), (B,T,n_h), (B,T,n_h)
        H = self.h0.expand(Bn, -1)
        out = []
        for t in range(T):
            for j in range(kt.shape[2]):
                kj = kt[:, t, j]
                bj = bt[:, t, j, None]
                H = H - bj * kj * (kj * H).sum(-1, keepdim=True) + bj * kj * vt[:, t, j, None]
            out.append(H)
        return torch.stack(out, 1)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        H = self.states(tokens)
        rows = H @ self.W.T + self.c                                   # (B, T, rows)
        n_lab = self.config["n_out"]
        if rows.shape[-1] == n_lab and torch.equal(self.row_labels, torch.arange(n_lab, device=rows.device)):
            return rows
        out = torch.full(rows.shape[:-1] + (n_lab,), -1e4, dtype=rows.dtype, device=rows.device)
        for lab in range(n_lab):
            sel = (self.row_labels == lab).nonzero().flatten()
            if sel.numel():
                out[..., lab] = rows[..., sel].amax(-1)
        return out

    # ------------------------------------------------------------------ analysis interface
    @torch.no_grad()
    def transition_matrices(self, tokens):
        k, beta = self._tables()
        kt, bt = k[tokens.long()], beta[tokens.long()]
        K = kt.shape[-1]
        A = torch.eye(K, dtype=kt.dtype).expand(*tokens.shape, K, K).clone()
        for j in range(kt.shape[2]):
            kj = kt[:, :, j]
            A = (torch.eye(K, dtype=kt.dtype) - bt[:, :, j, None, None] * kj[..., :, None] * kj[..., None, :]) @ A
        return [A[:, :, None]]

    @torch.no_grad()
    def betas(self, tokens):
        return [self._tables()[1][tokens.long()][..., None]]

    @torch.no_grad()
    def keys(self, tokens):
        return [self._tables()[0][tokens.long()][..., None, :]]

    # ------------------------------------------------------------------ from a compiled model
    @classmethod
    def from_model(cls, model, labels=None, *, eig_range=(-1.0, 1.0), extra_letters: int = 1,
                   dtype=torch.float32) -> "ConstructionLRNN":
        """Load a compiled one-layer ``gh`` model (per-letter keys, betas, values from the additive term, ``H_0``,
        decoder rows). ``labels``: the label order of the logits (default ``model.output_labels``);
        ``extra_letters``: identity letters appended to the alphabet (a task's ``<pad>``). With
        ``eig_range=(0, 1)`` the betas are clamped to [0, 1] (the construction loses its reflections)."""
        exp = export_fla(model)
        if len(exp.layers) != 1:
            raise InputError(f"construction-as-init needs a one-layer model; this one has {len(exp.layers)} layers")
        ly = exp.layers[0]
        if ly.per_symbol:
            raise InputError("construction-as-init needs a decoder that does not read the letter (per_symbol=False)")
        im, ro = ly.input_map, exp.readout
        if [(r.source, r.lag) for r in im.reads] != [("input", 0)] or [(r.source, r.lag) for r in ro.reads] \
                != [(0, 0)]:
            raise InputError("construction-as-init needs a layer that reads the letter and a readout of its decoder")
        labels = list(model.output_labels) if labels is None else [str(x) for x in labels]
        letter_sym = im.table                  # the layer symbol of every letter
        S, n_h, K = len(letter_sym), ly.n_h, ly.K
        row_names = [exp.output_labels[int(ro.table[i])] for i in range(ly.n_out)]
        missing = sorted(set(row_names) - set(labels))
        if missing:
            raise InputError(f"the model outputs labels {missing[:5]} that the task does not have")
        m = cls(S + extra_letters, len(labels), K, n_h, n_rows=len(row_names), eig_range=eig_range,
                row_labels=[labels.index(r) for r in row_names], dtype=dtype)
        keys = np.zeros((S + extra_letters, n_h, K))
        keys[:, :, 0] = 1.0
        keys[:S] = ly.keys[letter_sym]
        betas = np.zeros((S + extra_letters, n_h))
        betas[:S] = ly.betas[letter_sym]
        vals = np.zeros((S + extra_letters, n_h))
        vals[:S] = ly.values[letter_sym]
        with torch.no_grad():
            m.keys_raw.copy_(torch.as_tensor(keys))
            m.beta_raw.copy_(torch.as_tensor(betas))
            m.vals.copy_(torch.as_tensor(vals))
            m.h0.copy_(torch.as_tensor(ly.initial_state))
            m.W.copy_(torch.as_tensor(ly.decoder_W))
            m.c.copy_(torch.as_tensor(ly.decoder_c))
        return m


@torch.no_grad()
def accuracy_at(model, task, length: int, n: int = 4, seed: int = 0) -> float:
    """Token accuracy on ``n`` words of exactly ``length`` letters from the task's test stream."""
    x, y = task.sample(n, int(length), batch_rng(seed, int(length), stream=1))
    pred = model(torch.as_tensor(x)).argmax(-1).numpy()
    m = y != IGNORE
    return float((pred[m] == y[m]).mean())


def _finetune(model, task, steps: int, batch: int, train_len, lr: float, seed: int) -> float:
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    loss = torch.tensor(float("nan"))
    for s in range(steps):
        x, y = task.sample(batch, train_len, batch_rng(seed, s))
        logits = model(torch.as_tensor(x))
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), torch.as_tensor(y).reshape(-1),
                               ignore_index=IGNORE)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    return float(loss.detach())


def finetune_from_construction(source: str, construction: str | None = None, *, steps: int = 100,
                               batch: int = 16, train_len=(3, 40), lr: float = 1e-2, long_length: int = 10_000,
                               short_length: int = 40, n_eval: int = 4, seed: int = 0,
                               controls: bool = True) -> dict:
    """Compile ``source``, load it into :class:`ConstructionLRNN`, measure accuracy at ``short_length`` and
    ``long_length`` before / after ``steps`` of AdamW fine-tuning on words of ``train_len`` letters. With
    ``controls``: the same budget from a random initialisation, and the construction loaded with betas clipped to
    the [0, 1] range. Returns a JSON-able dict (the numbers the registry and docs quote)."""
    fsa = load_source(source)
    model = compile_model(fsa, construction)
    if list(model.alphabet) != list(fsa.alphabet):
        raise InputError("the compiled model's alphabet differs from the automaton's")
    task = AutomatonTask(fsa)
    torch.manual_seed(seed)

    def run(m, label):
        t0 = time.perf_counter()
        with torch.no_grad():
            k0, b0 = (x.detach().clone() for x in m._tables())
        before = {"short": accuracy_at(m, task, short_length, n_eval, seed),
                  "long": accuracy_at(m, task, long_length, n_eval, seed)}
        loss = _finetune(m, task, steps, batch, train_len, lr, seed)
        after = {"short": accuracy_at(m, task, short_length, n_eval, seed),
                 "long": accuracy_at(m, task, long_length, n_eval, seed)}
        with torch.no_grad():
            k1, b1 = m._tables()
            S = len(fsa.alphabet)
            drift = {"max_beta_change": float((b1[:S] - b0[:S]).abs().max()),
                     "max_key_change": float((k1[:S] - k0[:S]).norm(dim=-1).max()),
                     "min_abs_eigenvalue_after": float(torch.linalg.eigvals(
                         m.transition_matrices(torch.arange(S)[None])[0].double()).abs().min())}
        return {"init": label, "before": before, "after": after, "final_loss": loss, **drift,
                "seconds": round(time.perf_counter() - t0, 2)}

    rows = [run(ConstructionLRNN.from_model(model, task.labels), "construction")]
    if controls:
        exp_nh = max(1, model.layers[0].max_factors() or 0)
        torch.manual_seed(seed)
        rnd = ConstructionLRNN(task.n_in, task.n_out, model.layers[0].width, exp_nh)
        rows.append(run(rnd, "random"))
        rows.append(run(ConstructionLRNN.from_model(model, task.labels, eig_range=(0.0, 1.0)),
                        "construction, betas clipped to [0, 1]"))
    return {"source": source, "construction": model.provenance.get("construction"), "steps": steps, "batch": batch,
            "train_len": list(train_len), "lr": lr, "long_length": long_length, "short_length": short_length,
            "n_eval": n_eval, "seed": seed, "chance": task.chance, "runs": rows}
