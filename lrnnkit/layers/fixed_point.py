"""``FixedPointLayer``: a dense linear RNN computed as the fixed point in depth of a diagonal one (paper 003,
Movahedi et al., "Fixed-Point RNNs": Section 2, eqs. (3)-(6), Theorems 2.1 and 2.2, App. D).

**The dense RNN and its diagonal iteration.** Write the dense transition as ``A_t = Q_t^{-1} Lambda_t`` with
``Lambda_t`` diagonal and ``Q_t`` a channel mixer; the dense states are the fixed point ``h* = f(x, h*)`` of the
diagonal RNN of eq. (3), found by iterating in depth (eq. 4, with Theorem 2.1's input normalisation ``I - Lambda``)::

    h^l_t = Lambda_t h^l_{t-1} + (I - Lambda_t) (Q_t v_t + (I - Q_t) h^{l-1}_t),      h^0 = 0      (vector state)

Each iteration is one channel mix ``x~ = Q_t (v_t - h^{l-1}_t) + h^{l-1}_t`` (O(d r) per token) and one diagonal
scan over the sequence (:func:`lrnnkit.ops.diagonal.parallel.diagonal_scan`: the chunk-parallel Triton
kernel on CUDA, a torch scan elsewhere: step by step or by log-depth doubling, by shape). At the fixed point
``(Lambda + (I - Lambda) Q) h_t = Lambda h_{t-1} + (I - Lambda) Q v_t``: a dense RNN with
``A_t = (Lambda_t + (I - Lambda_t) Q_t)^{-1} Lambda_t`` (:meth:`FixedPointLayer.transitions`).

``state_size = N`` gives the matrix state of eq. (6) (003, Section 2.3 and App. D.2, "Bedouin")::

    h^l_t = lambda_t (.) h^l_{t-1} + (1 - lambda_t) (.) B^_t (x~^l_t)^T,    y^l_t = (C^_t)^T h^l_t   (h_t: N x d)
    x~^l_t = Q_t (x_t - y^{l-1}_t) + y^{l-1}_t

with unit vectors ``B^ = B / ||B||``, ``C^ = C / ||C||`` (App. D.2: "L2 normalized, to limit the Lipschitz
constant"). ``normalization``: ``"theorem-2.1"`` scales the input by ``1 - lambda_t`` (the default of the vector
state), ``"delta"`` by the selective ``Delta_t`` (App. D.2, "to stay compatible with the Mamba implementation"; the
default of the matrix state, as the paper's Bedouin).

**Parametrisation** (003, App. D.3, for hidden input u_t and the previous output ``y^{l-1}_{t-1}``, 0 at t = 0):
``lambda_t = exp(-c softplus(omega) Delta_t)``, ``Delta_t = sigmoid(W_D u_t + b_D [+ W'_D y_{t-1}])``, c = 8
(Griffin); ``Q_t = H_r ... H_1`` (eq. 10; later factor on the left), ``H_i = I - 2 alpha_i u_i u_i^T``, ``u_i``
the unit direction of ``W_u u_t [+ W'_u y_{t-1}]``, ``alpha_i = alpha_max sigmoid(w_a . u_t [+ w'_a . y_{t-1}])``;
``B_t = W_B u_t [+ W'_B y_{t-1}]`` (matrix state; in the vector state ``v_t = W_v u_t [+ W'_v y_{t-1}]`` is
``B_t x_t``), ``C_t`` likewise; output ``o = W_o RMSNorm_head((y* + D x) * silu(G_t))`` with
``G_t = W_G u_t [+ W'_G y*_{t-1}]``. The bracketed terms are the dependence on the previous output of 003,
App. C.1 / Table 2 (``dependence``: any of "lambda", "B", "C", "Q", "G"; default all that apply: the paper's best
model, Table 2's last row). The skip ``D x`` is added after the iteration, so the fixed point stays the dense RNN's
(the authors' code adds it inside).

``alpha_range``: ``"paper"`` gives ``alpha_max = 1`` (003, eq. 10: ``0 < alpha < 1``, so ``Q_t`` can have negative
eigenvalues); ``"contractive"`` gives ``alpha_max = 1 / (2r)``, so ``sum_i alpha_i < 1/2`` and ``||I - Q_t||_2 < 1``
(lrnnkit's registry: ``003:claim-D.3.2.contractive`` holds only as corrected), which with ``0 < lambda < 1`` makes
the iteration a contraction (``003:theorem-2.1`` as corrected). The paper's range does not guarantee convergence;
the stopping rule's cap then ends the iteration.

**Stopping rule** (003, App. D.2): stop after iteration l when ``||y^l - y^{l-1}||_inf < tol ||y^l||_inf``
(tol = 0.1) for every sequence of the batch (norms over its tokens and channels; padding excluded), or after
``max_iters`` iterations in all. Training caps the iterations at ``train_max_iters`` (003, Figs. 1 and 3: 16 on
A5 / S5) or, with ``sample_max_iters``, at a cap drawn per forward from Gamma(4, 1) (003, Section 3.1: "mean 4
and mode 3"; rounded up, at least 1).

**The authors' iteration** (``iteration="authors"``; the printed rule above is ``"paper"``, the default). The
authors' code (fp-rnn at 4c28602, models/model_utils.py, ``FixedPointOptimizer``, with the settings its
models/fp_mamba_block.py gives it: their matrix-state block FPMamba, 003's Bedouin) damps the iteration and stops
on a quantile of per-sequence residues. Each sequence b keeps its best residue ``r_b`` (initially +inf), a step
size ``s_b`` (initially :data:`AUTHORS_STEPSIZE`) and a patience ``p_b`` (initially :data:`AUTHORS_DECAY_PATIENCE`).
One step, with candidate ``h = f(x, y)``::

    e_b = max_t ||y_t - h_t||_inf / (||h_t||_inf + 1e-8)        (t over b's tokens, norms over channels)
    y  <- s_b h + (1 - s_b) y                                     (damped, with the step size before this step)
    e_b < r_b:  r_b = e_b, p_b = P        else  p_b = p_b - 1
    p_b = 0:    p_b = P, s_b = decay * s_b

and the iteration goes on while no step has run yet, or ``quantile_q(r) >= thresh`` (over the batch's sequences;
``r`` the BEST residues so far, not the last ones) and ``max_b s_b >= 1e-3`` and fewer than ``cap`` steps have run;
``q = 1 - outlier_quantile`` (0.75) in training and 1 (the largest) at evaluation (``not self.training``). Under
this rule the cap counts damped steps, as theirs does (fp-rnn at 4c28602, models/model_utils.py
(FixedPointOptimizer.cont): ``max_iter`` no-grad steps at most, always at least one; then the block applies one more
step, the differentiable one): ``min(cap, k)`` damped steps run, ``k`` the first step after which the test to go on
fails (at least 1, so cap 1 still runs one), and :attr:`last_iterations` is that plus one, at most ``cap + 1``. The
cap is the training cap in training (``train_max_iters or max_iters``, 003's l_max = 16 for state tracking, or the
sampled one) and at evaluation :data:`AUTHORS_EVAL_MAX_ITERS` (1000, their ``cont``'s) in place of ``max_iters``: up
to 1001 iterations in all. (Under the printed rule a cap counts the final differentiable iteration too: at most
``cap - 1`` iterations before it.) Packed sequences (``cu_seqlens``) each count as one sequence of the batch; an
empty one is left out of the quantile and of the step-size test. Their vector block FPRNN (models/fp_rnn_block.py)
runs the same rule undamped (step size 1, decay 1) with ``outlier_quantile`` 0.1; here both states take the FPMamba
settings. :attr:`last_residual` is then the stop test's statistic ``quantile_q(r)`` after the last step (None / NaN
when none ran). Implemented once, :func:`authors_iterate`, for the host loop, the training forward without host
reads and :mod:`lrnnkit.learn.batched`.

**Training without host reads** (``sync_free=True``, the default). Deciding the stopping rule on the host reads the
device every iteration, so a training step could not be captured as a CUDA graph. In training the layer therefore
runs a static number of iterations under no_grad, ``S - 1`` for the static bound ``S = train_max_iters or
max_iters`` (``S`` damped steps under the authors' rule, whose caps count those: ``S + 1`` iterations in all), and
decides the rule on the device: iteration ``l`` is applied (``y^l = f(x, y^{l-1})``) while ``l < cap`` (authors:
``l <= cap``, and always at ``l = 1``) and the rule has not yet stopped it, and after that the iterate is frozen
with ``torch.where`` on a device flag. Every applied iteration is the host loop's on the same operands, and a frozen one
changes nothing, so ``y*``, the output and every gradient are exactly the early-stopped ones;
:attr:`last_iterations` (0-d int64) and :attr:`last_residual` (0-d, NaN when no iteration ran) are then device
tensors, read only by whoever asks. The sampled cap is drawn on the device as ``ceil(-(log U_1 + ... + log U_4))``
clamped to ``[1, S]`` (four uniforms: Gamma(4, 1) is the sum of four independent Exp(1) variables, so the
distribution is exact and the draw reproducible under ``torch.manual_seed``; other random numbers than the host draw
:meth:`FixedPointLayer.iteration_cap`). The cost: every training forward runs all ``S`` scans (``S - 1`` under
no_grad plus the differentiable one; ``S + 1`` under the authors' rule) where the early-stopped loop runs ``l + 1``
for the first ``l`` at which the rule holds: at 003's training cap of 16 (Figs. 1 and 3) that is 16 iterations'
FLOPs per forward against ``E[l] + 1`` (``16 / (E[l] + 1)`` times the early-stopped work: 4x where the rule holds
after 3 iterations, the same work where it never holds within the cap). Evaluation (``not self.training``) keeps the
early-exit host loop (``max_iters = 100`` would otherwise always run 100 iterations); ``sync_free=False`` keeps it
in training too. :func:`lrnnkit.learn.train.build` sets ``sync_free`` by the training loop: on for the device loop
(its step is then captured as one CUDA graph), off for the host loop, which reads the device every step anyway and
so loses nothing by the early exit.

**Gradient at the fixed point** (003, Section 2.2, Theorem 2.2; the authors' code): the iterations run under
``torch.no_grad``; the output is one more iteration, differentiable, from the (detached) last iterate, so the
gradient is ``J_theta(h*)^T delta`` -- the first term of the implicit gradient's Neumann series
``J_theta^T (I - J_h^T)^{-1} delta`` -- at the cost of one iteration, with no backpropagation through the loop.
:attr:`last_iterations` counts every iteration of the last forward, that final one included (one scan each).

Packed sequences (``cu_seqlens``, B = 1) reset the scan and the previous-output shift at every start, and the
stopping rule runs per sequence; a 2-D 0/1 ``attention_mask`` is packed the same way and the outputs put back
(zeros at padding). Computed in float32 (float64 stays float64) whatever the input dtype, autocast off inside;
the output has the input's dtype. No incremental decoding (``use_cache``): the previous-output dependence needs the
fixed point of every token, which a cached state does not hold.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ..errors import InputError
from ..limits import check_int
from ..ops.diagonal.parallel import diagonal_scan
from .layer_io import pack

__all__ = ["FixedPointLayer", "FixedPointMixer", "MODES", "DEPENDENCES", "ITERATIONS", "authors_iterate",
           "freeze_iterate", "shift_output"]

MODES = ("chunk", "torch", "naive")
DEPENDENCES = ("lambda", "B", "C", "Q", "G")
ITERATIONS = ("paper", "authors")       # the stopping rule: 003, App. D.2 as printed; the authors' code (module text)
GAMMA_SHAPE, GAMMA_RATE = 4.0, 1.0      # 003, Section 3.1: l_max ~ Gamma(4, 1)
# The authors' iteration (module text): fp-rnn at 4c28602, models/model_utils.py (FixedPointOptimizer: the residue's
# 1e-8 and the step-size floor 1e-3 are its defaults; FixedPointOptimizer.cont caps the damped steps, at least one,
# at max_iter in training and at 1000 at evaluation), with the settings of models/fp_mamba_block.py (FPMamba, 003's
# Bedouin: stepsize 0.99, decay_patience 15, outlier_quantile 0.25, and its constructor's defaults
# damping_decay_rate 0.9 and convergence_threshold 0.1). Read when a forward starts.
AUTHORS_STEPSIZE = 0.99
AUTHORS_STEPSIZE_DECAY = 0.9
AUTHORS_DECAY_PATIENCE = 15
AUTHORS_THRESH = 0.1
AUTHORS_OUTLIER_QUANTILE = 0.25
AUTHORS_STEPSIZE_THRESH = 1e-3
AUTHORS_EPS = 1e-8
AUTHORS_EVAL_MAX_ITERS = 1000          # evaluation: at most 1000 damped no-grad steps (cont), then the final
                                       # differentiable one: last_iterations at most 1001


def _lin(mod: torch.nn.Linear | None, x: torch.Tensor):
    """``mod(x)`` with the weights in x's dtype (the layer computes in float32 / float64 whatever its parameters)."""
    if mod is None:
        return 0
    return F.linear(x, mod.weight.to(x.dtype), None if mod.bias is None else mod.bias.to(x.dtype))


def _at_starts(x: torch.Tensor, starts: torch.Tensor | None) -> torch.Tensor:
    """``x`` (B, T, ...) with every packed sequence's first token set to 0; ``starts`` a (T,) bool mask of them
    (a mask, not indices: no device-to-host read)."""
    if starts is None:
        return x
    return x.masked_fill(starts.reshape(-1, *([1] * (x.dim() - 2))), 0)


def shift_output(y: torch.Tensor, starts: torch.Tensor | None) -> torch.Tensor:
    """``y_{t-1}`` along the time axis (``y``: (..., T, d)), 0 at t = 0 and at every packed sequence's first token."""
    return _at_starts(F.pad(y[..., :-1, :], (0, 0, 1, 0)), starts)


def _reflect(U: torch.Tensor, alpha: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """``Q v`` with ``Q = H_r ... H_1``, ``H_i = I - 2 alpha_i u_i u_i^T``: U (..., r, d) unit rows, alpha (..., r)."""
    for i in range(U.shape[-2]):
        u = U[..., i, :]
        v = v - 2 * alpha[..., i, None] * u * (u * v).sum(-1, keepdim=True)
    return v


def _as_flag(flag: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """A per-run flag (0-d, or (R,) for runs stacked on the leading axis) shaped to broadcast against ``like``."""
    return flag.reshape(flag.shape + (1,) * (like.dim() - flag.dim()))


def freeze_iterate(step, converged, y: torch.Tensor, cap: torch.Tensor, bound: int, exit_when_done: bool = False):
    """``(y*, iterations, residual)``: iterations ``l = 1 .. bound - 1`` of ``y <- step(y)`` under no_grad, iteration
    ``l`` applied only while ``l < cap`` and ``converged(y_new, y)`` (-> ``(ok, worst)``) has not yet held, the
    iterate frozen after with ``torch.where`` (module text: training without host reads). ``cap``, ``ok`` and the
    returned counts are 0-d for one layer, (R,) for R runs stacked on ``y``'s leading axis (each run stops on its
    own). ``exit_when_done``: stop early once every run is frozen (one host read per iteration, for evaluation)."""
    it = torch.zeros(cap.shape, dtype=torch.long, device=y.device)
    stopped = torch.zeros(cap.shape, dtype=torch.bool, device=y.device)
    rel = torch.full(cap.shape, float("nan"), dtype=y.dtype, device=y.device)
    with torch.no_grad():
        for l in range(1, bound):
            y_new = step(y)
            ok, worst = converged(y_new, y)
            live = ~stopped & (cap > l)             # the host loop would run iteration l
            y = torch.where(_as_flag(live, y), y_new, y)
            it = it + live
            rel = torch.where(live, worst, rel)
            stopped = stopped | ok                  # frozen from here (or by the cap, which only grows nearer)
            if exit_when_done and bool((stopped | (cap <= l + 1)).all()):
                break
    return y, it, rel


def authors_residue(y: torch.Tensor, h: torch.Tensor, seg=None) -> torch.Tensor:
    """The authors' residue per sequence (module text), ``max_t ||y_t - h_t||_inf / (||h_t||_inf + 1e-8)``:
    ``(..., B)`` for ``y``, ``h`` (..., B, T, d), or ``(..., n)`` for n packed sequences (``seg``: the sequence of
    every token and n; B = 1). NaN (from an overflowed iterate) reads as +inf, which the rule treats alike (neither
    is below a best residue)."""
    e = (y - h).abs().amax(-1) / (h.abs().amax(-1) + AUTHORS_EPS)
    e = torch.where(torch.isnan(e), torch.full_like(e, math.inf), e)
    if seg is None:
        return e.amax(-1)
    idx, n = seg
    e = e[..., 0, :]
    return torch.zeros(e.shape[:-1] + (n,), dtype=e.dtype, device=e.device).scatter_reduce(
        -1, idx.expand(e.shape), e, "amax")


def _per_token(s: torch.Tensor, seg, y: torch.Tensor) -> torch.Tensor:
    """Per-sequence values ``s`` (..., B) or (..., n) shaped to broadcast against the iterate ``y`` (..., B, T, d)."""
    if seg is None:
        return s[..., None, None]
    return s[..., seg[0]][..., None, :, None]


def _authors_go(best: torch.Tensor, step: torch.Tensor, q: float) -> torch.Tensor:
    """The authors' test to go on, per run: ``quantile_q(best) >= thresh`` and ``max step >= 1e-3`` over the
    present sequences. An absent one (an empty packed sequence) has best NaN, which nanquantile leaves out (on the
    others it is torch.quantile, 'linear' interpolation); it never improves, so its step size decays at the
    fastest rate there is and is never above a present one's: the maximum needs no mask."""
    quant = torch.nanquantile(best, q, dim=-1)
    return (quant >= AUTHORS_THRESH) & (step.amax(-1) >= AUTHORS_STEPSIZE_THRESH)


def authors_iterate(step, y: torch.Tensor, cap: torch.Tensor, bound: int, training: bool, seg=None,
                    exit_when_done: bool = False):
    """``(y*, steps, statistic)``: the authors' damped iteration (module text; fp-rnn at 4c28602,
    models/model_utils.py, ``FixedPointOptimizer.cont``) of ``h = step(y)`` from ``y``, steps ``l = 1 .. max(bound,
    1)`` under no_grad, step ``l`` applied while ``l = 1`` or (``l <= cap`` and the test to go on holds): ``cap``
    counts damped steps as their ``max_iter`` does (the final differentiable iteration not included), so at most
    ``max(cap, 1)`` run, and at least one. The iterate and the rule's state are frozen after with ``torch.where``, so
    no host read is needed. ``q = 1 - outlier_quantile`` in ``training``, 1 otherwise. ``cap`` and the returned
    counts are 0-d for one layer, (R,) for R runs stacked on ``y``'s leading axis (each run its own state and
    quantile over its own sequences); ``bound``: the static bound on damped steps (at least every cap);
    ``seg``: packed sequences (module text). ``exit_when_done``: leave once no run goes on (one host read per step:
    the host loop). ``steps``: the damped steps applied; ``statistic``: ``quantile_q`` of the best residues after
    the last applied step (NaN where none was)."""
    lead, dev, dt = tuple(cap.shape), y.device, y.dtype
    q = 1.0 - AUTHORS_OUTLIER_QUANTILE if training else 1.0
    decay, patience = AUTHORS_STEPSIZE_DECAY, AUTHORS_DECAY_PATIENCE
    n = y.shape[-3] if seg is None else seg[1]
    best = torch.full(lead + (n,), math.inf, dtype=dt, device=dev)
    if seg is not None:                         # an empty packed sequence takes no part (best NaN throughout)
        count = torch.zeros(n, dtype=torch.long, device=dev).index_add_(0, seg[0], torch.ones_like(seg[0]))
        best = torch.where(count > 0, best, torch.full_like(best, math.nan))
    s = torch.full(lead + (n,), AUTHORS_STEPSIZE, dtype=dt, device=dev)
    p = torch.full(lead + (n,), patience, dtype=torch.long, device=dev)
    it = torch.zeros(lead, dtype=torch.long, device=dev)
    with torch.no_grad():
        for l in range(1, max(bound, 1) + 1):
            live = ((cap >= l) & _authors_go(best, s, q)) | (l == 1)      # theirs: iter_idx = l - 1 < max_iter
            if exit_when_done and not bool(live.any()):
                break
            h = step(y)
            e = authors_residue(y, h, seg)
            st = _per_token(s, seg, y)
            y_new = h * st + y * (1 - st)
            down = e < best
            best_new = torch.where(down, e, best)
            p_new = torch.where(down, patience, p - 1)
            adapt = p_new == 0
            p_new = torch.where(adapt, p_new + patience, p_new)
            s_new = torch.where(adapt, s * decay, s)
            y = torch.where(_as_flag(live, y), y_new, y)
            on = live[..., None]
            best, p, s = torch.where(on, best_new, best), torch.where(on, p_new, p), torch.where(on, s_new, s)
            it = it + live
    stat = torch.where(it > 0, torch.nanquantile(best, q, dim=-1), torch.full(lead, math.nan, dtype=dt, device=dev))
    return y, it, stat


class FixedPointLayer(torch.nn.Module):
    """``o, _, cache = FixedPointLayer(hidden_size=2048, num_heads=4, head_dim=None, mode="chunk", norm_eps=1e-5,
    num_reflections=1, state_size=None, max_iters=100, tol=0.1, train_max_iters=None, sample_max_iters=False,
    alpha_range="paper", dependence=None, normalization=None, c=8.0, sync_free=True, iteration="paper",
    layer_idx=None)(hidden_states, attention_mask=None, past_key_values=None, use_cache=False,
    output_attentions=False, cu_seqlens=None)``.

    ``hidden_states`` (B, T, hidden_size); the channels ``d = num_heads * head_dim`` (``head_dim`` defaults to
    ``hidden_size // num_heads``) are mixed by ``Q_t`` across all heads; heads only group the output norm.
    ``state_size``: None for the vector state (eq. 4), N for the N x d matrix state (eq. 6). ``mode``: "chunk"
    (Triton chunk scan on CUDA, the torch scan of ``diagonal_scan`` elsewhere), "torch", "naive" (the sequential
    reference loop). Returns fla's ``(o, None, past_key_values)``; :attr:`last_iterations` and
    :attr:`last_residual` describe the last forward (device tensors after a ``sync_free`` training forward).
    ``iteration``: ``"paper"`` (003, App. D.2's printed stopping rule) or ``"authors"`` (the authors' damped
    iteration; :attr:`iteration_rule`). See the module text for the mathematics, for ``sync_free`` and for the two
    rules."""

    def __init__(self, hidden_size: int = 2048, num_heads: int = 4, head_dim: int | None = None, mode: str = "chunk",
                 norm_eps: float = 1e-5, num_reflections: int = 1, state_size: int | None = None,
                 max_iters: int = 100, tol: float = 0.1, train_max_iters: int | None = None,
                 sample_max_iters: bool = False, alpha_range: str = "paper", dependence=None,
                 normalization: str | None = None, c: float = 8.0, sync_free: bool = True,
                 iteration: str = "paper", layer_idx: int | None = None, **kwargs):
        super().__init__()
        if kwargs:
            raise InputError(f"FixedPointLayer: unknown keyword {sorted(kwargs)[0]!r}")
        hidden_size = check_int("FixedPointLayer: hidden_size", hidden_size, 1)
        num_heads = check_int("FixedPointLayer: num_heads", num_heads, 1)
        head_dim = check_int("FixedPointLayer: head_dim",
                             head_dim if head_dim is not None else max(1, hidden_size // num_heads), 1)
        r = check_int("FixedPointLayer: num_reflections", num_reflections, 1)
        self.max_iters = check_int("FixedPointLayer: max_iters", max_iters, 1)
        if train_max_iters is not None:
            check_int("FixedPointLayer: train_max_iters", train_max_iters, 1)
        if state_size is not None:
            check_int("FixedPointLayer: state_size", state_size, 1)
        if mode not in MODES:
            raise InputError(f"FixedPointLayer: unknown mode {mode!r} (choose from {', '.join(MODES)})")
        if alpha_range not in ("paper", "contractive"):
            raise InputError(f"FixedPointLayer: alpha_range must be 'paper' or 'contractive', got {alpha_range!r}")
        if normalization is None:
            normalization = "theorem-2.1" if state_size is None else "delta"
        if normalization not in ("theorem-2.1", "delta"):
            raise InputError(f"FixedPointLayer: normalization must be 'theorem-2.1' or 'delta', got "
                             f"{normalization!r}")
        if not isinstance(sync_free, bool):
            raise InputError(f"FixedPointLayer: sync_free must be True or False, got {sync_free!r}")
        for name, val in (("tol", tol), ("norm_eps", norm_eps), ("c", c)):
            if isinstance(val, bool) or not isinstance(val, (int, float)) or not (val > 0 and math.isfinite(val)):
                raise InputError(f"FixedPointLayer: {name} must be a positive number, got {val!r}")
        allowed = DEPENDENCES if state_size is not None else tuple(x for x in DEPENDENCES if x != "C")
        dep = allowed if dependence is None else tuple(dependence)
        bad = [x for x in dep if x not in allowed]
        if bad:
            raise InputError(f"FixedPointLayer: dependence {bad[0]!r} does not apply (choose from "
                             f"{', '.join(allowed)}; 'C' needs the matrix state)")
        self.hidden_size, self.num_heads, self.head_dim, self.num_reflections = hidden_size, num_heads, head_dim, r
        self.mode, self.state_size, self.tol, self.train_max_iters = mode, state_size, float(tol), train_max_iters
        self.sample_max_iters, self.alpha_range, self.dependence = bool(sample_max_iters), alpha_range, dep
        self.normalization, self.c, self.layer_idx = normalization, float(c), layer_idx
        self.sync_free = sync_free
        self.iteration_rule = iteration          # validated by the property
        self.alpha_max = 1.0 if alpha_range == "paper" else 1.0 / (2 * r)
        d = self.channels = num_heads * head_dim
        N = state_size

        def y_proj(name, out, bias=False):   # the previous-output term of a parameter, where it depends on y
            return torch.nn.Linear(d, out, bias=bias) if name in dep else None

        self.x_proj = torch.nn.Linear(hidden_size, d, bias=False)
        self.v_y = y_proj("B", d) if N is None else None
        self.delta_proj = torch.nn.Linear(hidden_size, d, bias=True)
        self.delta_y = y_proj("lambda", d)
        self.u_proj = torch.nn.Linear(hidden_size, r * d, bias=False)
        self.u_y = y_proj("Q", r * d)
        self.alpha_proj = torch.nn.Linear(hidden_size, r, bias=True)
        self.alpha_y = y_proj("Q", r)
        if N is not None:
            self.bc_proj = torch.nn.Linear(hidden_size, 2 * N, bias=False)
            self.b_y = y_proj("B", N)
            self.c_y = y_proj("C", N)
        self.g_proj = torch.nn.Linear(hidden_size, d, bias=False)
        self.g_y = y_proj("G", d)
        # lambda = exp(-c softplus(omega) Delta) in [0.9, 0.999] at Delta = 1 initially (as the authors' DenseRNN)
        lo, hi = math.log(1 / 0.999 ** (1 / c) - 1), math.log(1 / 0.9 ** (1 / c) - 1)
        shape = (d,) if N is None else (N, d)
        w = torch.empty(shape).uniform_(0, 1)
        self.omega = torch.nn.Parameter(lo + (hi - lo) * w)   # softplus(omega) = -log(lambda) / c
        self.D = torch.nn.Parameter(torch.ones(d))
        for m in (self.delta_y, self.u_y, self.alpha_y, self.v_y, self.g_y) + \
                ((self.b_y, self.c_y) if N is not None else ()):
            if m is not None:                        # start from the input-only model (003, App. C.3: zero init)
                torch.nn.init.zeros_(m.weight)
        self.o_norm = torch.nn.RMSNorm(head_dim, eps=norm_eps)
        self.o_proj = torch.nn.Linear(d, hidden_size, bias=False)
        self.last_iterations: int | torch.Tensor | None = None
        self.last_residual: float | torch.Tensor | None = None

    @property
    def iteration_rule(self) -> str:
        """The stopping rule (the constructor's ``iteration``): ``"paper"`` or ``"authors"`` (module text)."""
        return self._iteration_rule

    @iteration_rule.setter
    def iteration_rule(self, rule: str) -> None:
        if not isinstance(rule, str) or rule not in ITERATIONS:
            raise InputError(f"FixedPointLayer: iteration must be one of {', '.join(ITERATIONS)}, got {rule!r}")
        self._iteration_rule = rule

    def extra_repr(self) -> str:
        return (f"hidden_size={self.hidden_size}, num_heads={self.num_heads}, head_dim={self.head_dim}, "
                f"num_reflections={self.num_reflections}, state_size={self.state_size}, max_iters={self.max_iters}, "
                f"tol={self.tol}, alpha_range={self.alpha_range!r}, dependence={self.dependence}, mode={self.mode!r}"
                + ("" if self.iteration_rule == "paper" else f", iteration={self.iteration_rule!r}"))

    # ------------------------------------------------------------------------------------------ one iteration
    def weights(self, dtype) -> dict:
        """What an iteration reads of the layer's weights: ``"y"``, ``(name, ys) -> `` the previous-output term of
        parameter ``name`` (``"delta_y"``, ``"u_y"``, ...; 0 where the layer has none), and ``"rate"``,
        ``c softplus(omega)``. :mod:`lrnnkit.learn.batched` passes R runs' stacked weights in their place."""
        return {"y": lambda name, ys: _lin(getattr(self, name, None), ys),
                "rate": self.c * F.softplus(self.omega.to(dtype))}

    def _inputs(self, u: torch.Tensor) -> dict:
        """The input-only parts of every parameter (computed once per forward, differentiable)."""
        P = {"x": _lin(self.x_proj, u), "delta": _lin(self.delta_proj, u), "g": _lin(self.g_proj, u),
             "u": _lin(self.u_proj, u), "alpha": _lin(self.alpha_proj, u)}
        if self.state_size is not None:
            P["B"], P["C"] = _lin(self.bc_proj, u).split(self.state_size, -1)
        return P

    def _params(self, P: dict, ys: torch.Tensor, W: dict | None = None) -> dict:
        """lambda, the input scale, Q's directions and coefficients, v or (B^, C^) given ``ys = y_{t-1}`` (..., T, d)
        and the weights ``W`` (:meth:`weights`; default the layer's own)."""
        W = self.weights(ys.dtype) if W is None else W
        y = W["y"]
        delta = torch.sigmoid(P["delta"] + y("delta_y", ys))
        lam = torch.exp(-W["rate"] * (delta if self.state_size is None else delta[..., None, :]))
        scale = (1 - lam) if self.normalization == "theorem-2.1" else \
            (delta if self.state_size is None else delta[..., None, :].expand_as(lam))
        U = F.normalize((P["u"] + y("u_y", ys)).reshape(*ys.shape[:-1], self.num_reflections, self.channels), dim=-1)
        alpha = self.alpha_max * torch.sigmoid(P["alpha"] + y("alpha_y", ys))
        out = {"lam": lam, "scale": scale, "U": U, "alpha": alpha}
        if self.state_size is None:
            out["v"] = P["x"] + y("v_y", ys)
        else:
            out["B"] = F.normalize(P["B"] + y("b_y", ys), dim=-1)
            out["C"] = F.normalize(P["C"] + y("c_y", ys), dim=-1)
        return out

    def _scan(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if self.mode == "naive":
            from ..ops.diagonal.naive import diagonal_scan_naive
            return diagonal_scan_naive(a, b, validate=False)
        if self.mode == "torch" and a.is_cuda:
            from ..ops.diagonal.parallel import doubling_scan
            return doubling_scan(a, b)
        return diagonal_scan(a, b)

    def iteration(self, P: dict, y: torch.Tensor, starts, W: dict | None = None) -> torch.Tensor:
        """One iteration ``y^l = f(x, y^{l-1})``: channel mix by Q_t, then one diagonal scan (module text). ``y``
        (B, T, d), or (R, B, T, d) for R runs stacked (their rows scanned at once); ``W``: :meth:`_params`'."""
        T, d = y.shape[-2:]
        p = self._params(P, shift_output(y, starts), W)
        if self.state_size is None:
            xt = _reflect(p["U"], p["alpha"], p["v"] - y) + y
            a, b = p["lam"], p["scale"] * xt
        else:
            xt = _reflect(p["U"], p["alpha"], P["x"] - y) + y
            a, b = p["lam"], p["scale"] * p["B"][..., :, None] * xt[..., None, :]
        a = _at_starts(a, starts)
        n = d if self.state_size is None else self.state_size * d      # the scan's channels per token
        h = self._scan(a.reshape(-1, T, n), b.reshape(-1, T, n))
        if self.state_size is None:
            return h.reshape(y.shape)
        return torch.einsum("...n,...nd->...d", p["C"], h.reshape(*y.shape[:-1], self.state_size, d))

    # ------------------------------------------------------------------------------------------ the iteration
    def eval_cap(self) -> int:
        """The cap at evaluation: ``max_iters`` iterations in all under the printed rule (the final differentiable
        one included), or under the authors' rule :data:`AUTHORS_EVAL_MAX_ITERS` damped steps before the final one
        (fp-rnn at 4c28602, models/model_utils.py (FixedPointOptimizer.cont); module text)."""
        return self.max_iters if self.iteration_rule == "paper" else AUTHORS_EVAL_MAX_ITERS

    def iteration_cap(self) -> int:
        """The cap of the next forward (module text: stopping rule, the authors' iteration): under the printed rule
        on all its iterations, the final differentiable one included; under the authors' rule on its damped steps
        (at least one runs), the final one not included."""
        if not self.training:
            return self.eval_cap()
        cap = self.train_max_iters or self.max_iters
        if self.sample_max_iters:
            g = torch.distributions.Gamma(torch.tensor(GAMMA_SHAPE), torch.tensor(GAMMA_RATE)).sample()
            cap = min(cap, max(1, math.ceil(float(g))))
        return cap

    def device_cap(self, device) -> torch.Tensor:
        """The training cap as a 0-d int64 tensor on ``device``, drawn there without a host read (module text:
        training without host reads): ``train_max_iters or max_iters``, or with ``sample_max_iters``
        ``clamp(ceil(G), 1, that bound)`` for ``G = -sum_{i<4} log(1 - U_i)`` ~ Gamma(4, 1), ``U_i`` uniform
        float64 draws of the device's generator. It counts as :meth:`iteration_cap`'s does under each rule."""
        bound = self.train_max_iters or self.max_iters
        if not self.sample_max_iters:
            return torch.full((), bound, dtype=torch.long, device=device)
        u = torch.rand(int(GAMMA_SHAPE), dtype=torch.float64, device=device)
        g = -torch.log1p(-u).sum() / GAMMA_RATE
        return g.ceil().clamp(1, bound).long()

    def converged(self, y_new, y_old, seg) -> tuple:
        """Device tensors (converged for every sequence: 0-d bool, the largest relative change: 0-d; (R,) each for
        R runs stacked on the leading axis, each over its own sequences) with infinity norms per sequence (module
        text: stopping rule)."""
        num = (y_new - y_old).abs().amax(-1)
        den = y_new.abs().amax(-1)
        if seg is None:
            num, den = num.amax(-1), den.amax(-1)
        else:                                    # seg: (sequence index of every token, number of sequences)
            idx, n = seg
            num = torch.zeros(n, dtype=num.dtype, device=num.device).scatter_reduce(0, idx, num[0], "amax")
            den = torch.zeros(n, dtype=den.dtype, device=den.device).scatter_reduce(0, idx, den[0], "amax")
        ok = (num <= self.tol * den).all(-1)
        rel = torch.where(den > 0, num / den.clamp_min(torch.finfo(den.dtype).tiny), (num > 0).to(num.dtype))
        return ok, rel.amax(-1)

    def _residual(self, y_new, y_old, seg) -> tuple:
        """:meth:`converged` read on the host: (bool, float)."""
        ok, worst = self.converged(y_new, y_old, seg)
        done, worst = torch.stack([ok.to(worst.dtype), worst]).tolist()   # one device-to-host transfer per iteration
        return bool(done), worst

    def fixed_point(self, P: dict, shape, starts=None, seg=None, cap: int | None = None,
                    W: dict | None = None, training: bool | None = None) -> tuple:
        """``(y*, iterations)``: the iterate after the stopping rule, detached (run under no_grad), and the
        iterations run here. Printed rule: ``cap`` counts the final differentiable step too, so at most ``cap - 1``
        run here. Authors' rule: ``cap`` counts the damped steps run here, ``min(cap, k)`` of them for ``k`` the
        step after which the test to go on fails, at least one (:func:`authors_iterate`). ``W``: :meth:`_params`'.
        ``training`` (default ``self.training``): the authors' rule's quantile (module text)."""
        cap = self.iteration_cap() if cap is None else cap
        y = torch.zeros(shape, dtype=P["x"].dtype, device=P["x"].device)
        if self.iteration_rule == "authors":
            y, it, stat = authors_iterate(lambda y: self.iteration(P, y, starts, W), y,
                                          torch.full((), cap, dtype=torch.long, device=y.device), cap,
                                          self.training if training is None else training, seg, exit_when_done=True)
            it, stat = torch.stack([it.to(stat.dtype), stat]).tolist()
            self.last_residual = stat if it else None
            return y, int(it)
        it, rel = 0, None
        with torch.no_grad():
            while it < cap - 1:
                y_new = self.iteration(P, y, starts, W)
                it += 1
                done, rel = self._residual(y_new, y, seg)
                y = y_new
                if done:
                    break
        self.last_residual = rel
        return y, it

    def fixed_point_sync_free(self, P: dict, shape, starts=None, seg=None, cap: torch.Tensor | None = None,
                              W: dict | None = None) -> tuple:
        """``(y*, iterations)`` as :meth:`fixed_point` with the stopping rule decided on the device (module text:
        training without host reads; :func:`freeze_iterate`): ``S - 1`` iterations for ``S = train_max_iters or
        max_iters``, iteration ``l`` applied only while ``l < cap`` and the rule has not held, the iterate frozen
        after; ``iterations`` and :attr:`last_residual` are 0-d device tensors. ``cap``: a 0-d tensor (default
        :meth:`device_cap`). ``W``: :meth:`_params`'. Under the authors' rule likewise (:func:`authors_iterate`)
        with ``S`` damped steps, step ``l`` applied at ``l = 1`` and then while ``l <= cap`` and the test to go on
        holds: ``S + 1`` iterations in all with the final one."""
        dev = P["x"].device
        cap = self.device_cap(dev) if cap is None else cap
        y0 = torch.zeros(shape, dtype=P["x"].dtype, device=dev)
        if self.iteration_rule == "authors":
            y, it, self.last_residual = authors_iterate(lambda y: self.iteration(P, y, starts, W), y0, cap,
                                                        self.train_max_iters or self.max_iters, self.training, seg)
            return y, it
        y, it, self.last_residual = freeze_iterate(lambda y: self.iteration(P, y, starts, W),
                                                   lambda new, old: self.converged(new, old, seg), y0, cap,
                                                   self.train_max_iters or self.max_iters)
        return y, it

    # ------------------------------------------------------------------------------------------ forward
    def forward(self, hidden_states: torch.Tensor, attention_mask: torch.Tensor | None = None,
                past_key_values=None, use_cache: bool | None = False, output_attentions: bool | None = False,
                **kwargs):
        x, cu_seqlens, put_back = pack("FixedPointLayer", hidden_states, self.hidden_size, attention_mask,
                                       past_key_values, use_cache, kwargs)
        with torch.autocast(device_type=x.device.type, enabled=False):
            o = self._mix(x, cu_seqlens)
        return put_back(o).to(hidden_states.dtype), None, past_key_values

    def _mix(self, x: torch.Tensor, cu_seqlens) -> torch.Tensor:
        u = x if x.dtype == torch.float64 else x.float()
        B, T, _ = u.shape
        if B == 0 or T == 0:
            self.last_iterations = 0
            return u.new_zeros(B, T, self.hidden_size)
        starts = seg = None
        if cu_seqlens is not None and T:
            cu = cu_seqlens.to(u.device).long()
            starts = torch.zeros(T + 1, dtype=torch.bool, device=u.device).index_fill_(0, cu[:-1].clamp(0, T),
                                                                                      True)[:T]
            idx = torch.searchsorted(cu[1:], torch.arange(T, device=u.device), right=True)
            seg = (idx, len(cu) - 1)
        P, W = self._inputs(u), self.weights(u.dtype)
        find = self.fixed_point_sync_free if self.training and self.sync_free else self.fixed_point
        y, it = find(P, (B, T, self.channels), starts, seg, W=W)
        y = self.iteration(P, y, starts, W)
        self.last_iterations = it + 1
        g = P["g"] + W["y"]("g_y", shift_output(y.detach(), starts))
        o = (y + self.D.to(u.dtype) * P["x"]) * F.silu(g)
        o = F.rms_norm(o.reshape(B, T, self.num_heads, self.head_dim), (self.head_dim,),
                       self.o_norm.weight.to(u.dtype), self.o_norm.eps)
        return _lin(self.o_proj, o.reshape(B, T, self.channels))

    # ------------------------------------------------------------------------------------------ analysis
    @torch.no_grad()
    def transitions(self, x: torch.Tensor) -> torch.Tensor:
        """The dense RNN's per-token transition matrix at the fixed point, (B, T, 1, n, n) with n = d (vector
        state) or N d (matrix state, index (row, channel) -> row * d + channel): ``A_t = (I - K_t)^{-1} Lambda_t``
        where ``K_t`` is the iteration's own-token term (vector: ``diag(s_t) (I - Q_t)``, s the input scale;
        matrix: ``s (.) B^ ((I - Q_t) C^^T h)^T``), all evaluated at the fixed point (module text)."""
        u = x if x.dtype == torch.float64 else x.float()
        B, T, _ = u.shape
        P = self._inputs(u)
        y, _ = self.fixed_point(P, (B, T, self.channels), cap=self.eval_cap(), training=False)
        p = self._params(P, shift_output(self.iteration(P, y, None), None))
        d = self.channels
        eye = torch.eye(d, dtype=u.dtype, device=u.device)
        Q = eye.expand(B, T, d, d)
        for i in range(self.num_reflections):              # Q = H_r ... H_1: later factor on the left
            ui = p["U"][:, :, i]
            Q = Q - 2 * p["alpha"][:, :, i, None, None] * ui[..., :, None] * (ui[..., None, :] @ Q)
        IQ = eye - Q
        if self.state_size is None:
            K = p["scale"][..., :, None] * IQ
            lam = p["lam"]
        else:
            N = self.state_size
            bc = p["B"][..., :, None] * p["C"][..., None, :]                      # (B, T, N, N)
            K = (bc[..., :, None, :, None] * IQ[:, :, None, :, None, :]).reshape(B, T, N * d, N * d)
            K = p["scale"].reshape(B, T, N * d, 1) * K
            lam = p["lam"].reshape(B, T, N * d)
        n = lam.shape[-1]
        A = torch.linalg.solve(torch.eye(n, dtype=u.dtype, device=u.device) - K, torch.diag_embed(lam))
        return A[:, :, None]


class FixedPointMixer(torch.nn.Module):
    """The fixed-point layer as a :class:`lrnnkit.learn.models.SequenceModel` mixer: ``SequenceModel`` fields map to
    ``num_reflections = n_h``; ``alpha_range = "paper"`` for ``eig_range = (-1, 1)`` (Q may have negative
    eigenvalues) and ``"contractive"`` for ``(0, 1)``; ``state_size = block_size`` (matrix state, eq. 6), or the
    vector state (eq. 4) for ``block_size = 1``; ``backend`` "auto" -> mode "chunk", "scan" -> "torch". The
    paper's settings otherwise (at most ``train_max_iters`` iterations in training: by default
    :attr:`TRAIN_MAX_ITERS`, 16, as 003 Fig. 3 trains A5 / S5; 100 for the paper's other results, Section 3; and
    100 at evaluation; tol 0.1; every previous-output dependence); ``short_conv`` and ``gate`` do not apply (003,
    App. D.3.1 removes the short convolution). ``forward`` returns the layer's output only. ``SYNC_FREE``: its
    training forward can run without reading the device (the layer's ``sync_free``), so a training step with it can
    be captured as a CUDA graph (:mod:`lrnnkit.learn.step`; the training loop sets the layer's flag,
    :func:`lrnnkit.learn.train.build`). ``iteration``: the layer's stopping rule (``"paper"``, ``"authors"``; module
    text), TrainConfig's ``fp_iteration`` (through :func:`lrnnkit.layers.mixers.build_mixer`'s ``fp_iteration``).
    The counts above are the printed rule's; the authors' rule caps its damped steps instead, the final
    differentiable iteration not included: up to ``train_max_iters + 1`` iterations in training and 1001 at
    evaluation (fp-rnn at 4c28602, models/model_utils.py (FixedPointOptimizer.cont))."""

    SYNC_FREE = True
    #: the default iteration cap in training (003, Section 3: l_max = 16 for state tracking, Fig. 3; the paper's
    #: other results print 100: ``train_max_iters``, TrainConfig's ``fp_train_iters``); evaluation runs up to 100
    TRAIN_MAX_ITERS = 16

    def __init__(self, width: int, heads: int, head_dim: int, n_h: int = 1, eig_range=(-1.0, 1.0),
                 block_size: int = 8, backend: str = "auto", train_max_iters: int | None = None,
                 iteration: str = "paper"):
        super().__init__()
        modes = {"auto": "chunk", "scan": "torch", "chunk": "chunk", "torch": "torch", "naive": "naive"}
        if backend not in modes:
            raise InputError(f"backend {backend!r} does not apply to the fixed-point layer (choose from "
                             f"{', '.join(modes)})")
        neg = float(tuple(eig_range)[0]) < 0
        self.layer = FixedPointLayer(hidden_size=width, num_heads=heads, head_dim=head_dim, mode=modes[backend],
                                     num_reflections=n_h, state_size=None if block_size == 1 else block_size,
                                     alpha_range="paper" if neg else "contractive", max_iters=100,
                                     train_max_iters=train_max_iters or self.TRAIN_MAX_ITERS,
                                     sync_free=self.SYNC_FREE, iteration=iteration)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layer(x)[0]

    def transitions(self, x: torch.Tensor) -> torch.Tensor:
        return self.layer.transitions(x)

    @property
    def last_iterations(self):
        return self.layer.last_iterations
