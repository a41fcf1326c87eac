"""Where fla 0.6.0's GatedDeltaProduct and lrnnkit's DeltaProductLayer part on the A5 word problem: every path of
fla's recurrence and ours against a float64 truth at the race's shape, then short A5 loss curves of fla's layer on
each of its paths beside ours (same weights, same batches). ONE process on the GPU.

The race's network and keywords (``bench_layer_vs_fla``: hidden 384, 12 heads x 32, expand_v 1, n_h = 2, eigenvalues
in [-1, 1], short convolution, output gate, no forget gate). The recurrence (paper 001, DeltaProduct; fla's
``chunk_gated_delta_product`` convention) per token t and factor j = 1..n_h, with unit keys (l2norm, eps 1e-6)::

    S <- (I - b_{t,j} k_{t,j} k_{t,j}^T) S + b_{t,j} k_{t,j} v_{t,j}^T,        o_t = K^{-1/2} S^T q_t

Paths of fla's layer (its module's ``chunk_gated_delta_product`` swapped for the duration of a call; the same
q, k, v, beta reach every path; fla's layout: k, v, beta interleaved to length T n_h, q at the last of a token's
n_h positions, zero elsewhere):

  fla-chunk        ``chunk_gated_delta_product`` (what fla's layer trains with)
  fla-chunk-b32    the same kernel, beta = 2 sigmoid(b_proj x) taken in float32 from the bf16 projection as our
                   layer takes it (fla's layer takes the sigmoid in bf16 under autocast); mixer and curves only
  fla-chunk-dr     ``chunk_delta_rule`` (DeltaNet's chunk kernels) on the interleaved sequence: fla-chunk's backward
                   (fla-chunk calls ``chunk_delta_rule_bwd``) with DeltaNet's forward in place of fla-chunk's own
  fla-fused        ``fused_recurrent_delta_rule`` on the interleaved sequence (sequential kernels, with a backward;
                   ``fused_recurrent_gated_delta_rule``, which fla's layer uses for inference, has none)
  fla-naive        ``naive_recurrent_gated_delta_product`` (fla's torch loop, autograd; float32 inside)
  ours             ``DeltaProductLayer`` (lrnnkit's chunk kernels)

Sections (``--parts``):
  check   (a) relative L2 errors against float64 (our sequential loop in float64): the recurrence's o, dq, dk, dv,
          dbeta on random inputs and on the inputs of an A5 batch through the network's initial weights; the mixer's
          output and every gradient (input and parameters), fla's layer on each path and ours loaded with the same
          weights, the A5 batch's mixer input; bf16 (autocast, as the race) and fp32 (fla's chunk functions refuse
          fp32 in their wrappers: called through their autograd Functions here). Names the first tensor where
          fla-chunk departs from float64 while the paths that share no kernel with it (fla-fused, fla-naive, ours)
          do not. The bf16 rows run first, the float32 rows after the curves and only within --budget seconds
          (fla autotunes its kernels again for float32).
  curves  (b) A5, --steps steps per path from the same initial weights and batches (the race's train step): the
          loss at every step, the ms per step, token accuracy at 128 after; and where each path's loss first moves
          away from ours (equal weights and data: paths that compute the same function track each other until
          rounding, amplified by training, parts them).

fla's Triton autotuner picks a configuration per kernel on first use, by timing; the configurations picked in this
process are written to the JSON (``fla_configs``), so two processes' choices can be compared.

On the device machine (fla 0.6.0 and einops carried as wheels in .whl/):
    python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD
    python3 benchmarks/diagnose_fla_a5.py --out $OUT
(about 4 minutes on a fresh H200, most of it fla's first-call autotuning, timed in ``first_call_seconds``; the
float32 rows need about 2 minutes more: ``--budget 450`` in a 10-minute call.)
Longer curves (the A5 plateau lasts thousands of steps): ``--parts curves --steps 6000 --curve-paths fla-chunk,ours``.
A dry run on a CPU (fla's kernels under the Triton interpreter, ``_fla_interpret``; float32 rows only: the
interpreter does not emulate bf16 products; fla's chunk paths cannot train in float32, so only ours draws a curve):
    TRITON_INTERPRET=1 python3 benchmarks/diagnose_fla_a5.py --device cpu --batch 1 --length 16 --steps 3 --budget 1e9
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for p in (HERE, ROOT):
    if p not in sys.path:
        sys.path.insert(0, p)

import torch  # noqa: E402

import bench_layer_vs_fla as bl  # noqa: E402

PATHS = ("fla-chunk", "fla-chunk-b32", "fla-chunk-dr", "fla-fused", "fla-naive", "ours")
LAYER_ONLY = ("fla-chunk-b32",)   # differs from fla-chunk in the layer (beta's precision), not in the recurrence
H, K, NH = bl.LAYER_KW["num_heads"], bl.LAYER_KW["head_dim"], bl.LAYER_KW["num_householder"]
SCALE = K ** -0.5


# ------------------------------------------------------------------------------------------------ fla's paths
def _interleave_q(q, n):
    """q (B, T, H, K) -> (B, T n, H, K): q at the last of each token's n positions, zero at the others."""
    B, T = q.shape[:2]
    qn = q.new_zeros(B, T, n, *q.shape[2:])
    qn[:, :, -1] = q
    return qn.flatten(1, 2)


def _last(o, n):
    """(B, T n, H, V) outputs of the interleaved sequence -> (B, T, H, V) at each token's last position."""
    return o.unflatten(1, (o.shape[1] // n, n))[:, :, -1]


def _l2(x):
    """fla's l2norm (x / sqrt(||x||^2 + 1e-6)), in torch: float32 arithmetic (float64 for float64 x), x's dtype out."""
    xf = x if x.dtype == torch.float64 else x.float()
    return (xf / torch.sqrt((xf * xf).sum(-1, keepdim=True) + 1e-6)).to(x.dtype)


def fla_path(name: str, bypass_fp32: bool = False):
    """A function with the keywords fla's layer passes to ``chunk_gated_delta_product`` (ungated: g is None),
    computing the recurrence on fla path ``name``; ``bypass_fp32`` calls fla's chunk kernels through their autograd
    Functions, past the wrappers' float32 refusal."""
    from fla.ops.delta_rule import chunk_delta_rule, fused_recurrent_delta_rule
    from fla.ops.delta_rule.chunk import ChunkDeltaRuleFunction
    from fla.ops.gated_delta_product import chunk_gated_delta_product
    from fla.ops.gated_delta_product.chunk import ChunkGatedDeltaProductFunction
    from fla.ops.gated_delta_product.naive import naive_recurrent_gated_delta_product

    def f(q, k, v, g, beta, num_householder, initial_state=None, output_final_state=False, cu_seqlens=None,
          use_qk_l2norm_in_kernel=False, scale=None):
        assert g is None and initial_state is None and cu_seqlens is None, "the race's keywords only"
        n, l2 = num_householder, use_qk_l2norm_in_kernel
        sc = SCALE if scale is None else scale
        if name in ("fla-chunk", "fla-chunk-b32"):
            if bypass_fp32:
                return ChunkGatedDeltaProductFunction.apply(q, k, v, None, beta, sc, n, None, False, l2, None, None,
                                                            None)
            return chunk_gated_delta_product(q=q, k=k, v=v, g=None, beta=beta, num_householder=n, scale=sc,
                                             use_qk_l2norm_in_kernel=l2)
        qi = _interleave_q(q, n)
        if name == "fla-chunk-dr":
            if bypass_fp32:
                o, _ = ChunkDeltaRuleFunction.apply(qi, k, v, beta, sc, None, False, l2, None, None, 64)
            else:
                o, _ = chunk_delta_rule(qi, k, v, beta, scale=sc, use_qk_l2norm_in_kernel=l2)
            return _last(o, n), None
        if name == "fla-fused":
            o, _ = fused_recurrent_delta_rule(qi, k, v, beta, scale=sc, use_qk_l2norm_in_kernel=l2)
            return _last(o, n), None
        if name == "fla-naive":
            qq, kk = (_l2(q), _l2(k)) if l2 else (q, k)
            return naive_recurrent_gated_delta_product(qq, kk, v, None, beta, sc, num_householder=n)
        raise ValueError(f"unknown fla path {name!r}")
    return f


class _Float32Out(torch.nn.Module):
    """A projection whose output is cast to float32 (under autocast: the bf16 product, then float32), so that
    fla's ``b_proj(x).sigmoid()`` runs in float32 as our layer's beta does; the parameters stay the wrapped ones."""

    def __init__(self, lin):
        super().__init__()
        self.lin = lin

    def forward(self, x):
        return self.lin(x).float()


@contextlib.contextmanager
def layer_path(layer, name: str, bypass_fp32: bool = False):
    """fla's layer running its recurrence on path ``name`` inside the block (its module's global swapped; for
    fla-chunk-b32 also its ``b_proj`` wrapped)."""
    mod = sys.modules[type(layer).__module__]
    old, old_b = mod.chunk_gated_delta_product, layer.b_proj
    mod.chunk_gated_delta_product = fla_path(name, bypass_fp32)
    if name in LAYER_ONLY:
        layer.b_proj = _Float32Out(old_b)
    try:
        yield layer
    finally:
        mod.chunk_gated_delta_product = old
        layer.b_proj = old_b


def fla_configs():
    """The configurations fla's autotuned kernels picked in this process: {module.kernel: {key: config}}."""
    from triton.runtime.autotuner import Autotuner
    out = {}
    for mname, mod in list(sys.modules.items()):
        if not mname.startswith("fla.") or mod is None:
            continue
        for attr, obj in list(vars(mod).items()):
            try:   # heuristics(autotune(jit(f))): follow .fn down to the autotuner (a few levels at most)
                for _ in range(4):
                    if obj is None or isinstance(obj, Autotuner):
                        break
                    obj = getattr(obj, "fn", None)
                if isinstance(obj, Autotuner) and obj.cache:
                    out[f"{mname}.{attr}"] = {str(k): str(c) for k, c in obj.cache.items()}
            except Exception:   # an attribute that cannot be inspected is not a kernel of ours to record
                continue
    return out


# ------------------------------------------------------------------------------------------------ the truth
def truth_core(q, k, v, beta, do):
    """float64 o and gradients (dq, dk, dv, dbeta) of the recurrence, fla's interleaved layout, l2norm inside
    (lrnnkit's sequential loop, :func:`lrnnkit.ops.gh.naive.delta_product_naive`)."""
    from lrnnkit.ops.gh.naive import delta_product_naive
    B, T = q.shape[:2]
    xs = [x.detach().double().requires_grad_(True) for x in (q, k, v, beta)]
    qq, kk, vv, bb = xs
    o, _ = delta_product_naive(_l2(qq), _l2(kk).unflatten(1, (T, NH)), vv.unflatten(1, (T, NH)),
                               bb.unflatten(1, (T, NH)), scale=SCALE, validate=False)
    (o * do.double()).sum().backward()
    return [o.detach()] + [x.grad for x in xs]


def core_run(path, q, k, v, beta, do, dtype):
    """o and (dq, dk, dv, dbeta) of one path on the given inputs cast to ``dtype`` (float64 results)."""
    xs = [x.detach().to(dtype).requires_grad_(True) for x in (q, k, v, beta)]
    if path == "ours":
        from lrnnkit.ops.gh.api import chunk_gh
        T = q.shape[1]
        qq, kk, vv, bb = xs
        o, _ = chunk_gh(qq, kk.unflatten(1, (T, NH)), vv.unflatten(1, (T, NH)), None, bb.unflatten(1, (T, NH)), NH,
                        use_qk_l2norm_in_kernel=True, validate=False)
    else:
        o, _ = fla_path(path, bypass_fp32=dtype == torch.float32)(*xs[:3], None, xs[3], num_householder=NH,
                                                                  use_qk_l2norm_in_kernel=True)
    (o.double() * do.double()).sum().backward()
    return [o.detach().double()] + [x.grad.double() for x in xs]


def rel(a, b):
    return float((a.double() - b.double()).norm() / b.double().norm().clamp_min(1e-30))


# ------------------------------------------------------------------------------------------------ inputs
def a5_batch(seed, batch, length, device):
    tab, start, n = bl.group_table("A5")
    gen = torch.Generator().manual_seed(1000 + seed)
    return bl.sample(tab, start, n, batch, length, gen, device), n


def a5_mixer_input(seed, batch, length, device):
    """The mixer's input on an A5 batch through the network's initial weights for ``seed`` (equal for either
    layer: ``bl.same_initial_weights``), and the network's ours-layer mixer (those weights)."""
    (toks, _), n = a5_batch(seed, batch, length, device)
    torch.manual_seed(seed)
    net = bl.Net(n, n, bl.make_mixer("ours")).to(device)
    with torch.no_grad():
        x = net.n1(net.embed(toks))
    return x, net.mixer


def core_inputs_from(mixer, x):
    """q, k, v, beta in fla's interleaved layout as fla's layer builds them (before l2norm), float32."""
    B, T, _ = x.shape
    with torch.no_grad():
        q = mixer.q_conv1d(mixer.q_proj(x)).reshape(B, T, H, K)
        k = mixer.k_conv1d(mixer.k_proj(x)).reshape(B, T * NH, H, K)
        v = mixer.v_conv1d(mixer.v_proj(x)).reshape(B, T * NH, H, K)
        beta = (2 * torch.sigmoid(mixer.b_proj(x))).reshape(B, T * NH, H)
    return q, k, v, beta


# ------------------------------------------------------------------------------------------------ check
def check(device, batch, length, seed, paths, dtypes):
    """The rows of section (a) for ``dtypes`` (bf16 and / or float32)."""
    rows = []
    torch.manual_seed(seed)
    rnd = (torch.randn(batch, length, H, K, device=device), torch.randn(batch, length * NH, H, K, device=device),
           torch.randn(batch, length * NH, H, K, device=device), 2 * torch.rand(batch, length * NH, H, device=device))
    x, mixer = a5_mixer_input(seed, batch, length, device)
    inputs = {"random": rnd, "A5": core_inputs_from(mixer, x)}
    names = ["o", "dq", "dk", "dv", "dbeta"]
    for src, (q, k, v, beta) in inputs.items():
        do = torch.randn(batch, length, H, K, device=device, generator=torch.Generator(device).manual_seed(seed + 7))
        ref = truth_core(q, k, v, beta, do)
        for dtype in dtypes:
            for path in [p for p in paths if p not in LAYER_ONLY]:
                t0 = time.perf_counter()
                try:
                    got = core_run(path, q, k, v, beta, do, dtype)
                    errs = {nm: rel(a, b) for nm, a, b in zip(names, got, ref)}
                except Exception as e:   # a path that refuses a dtype: recorded, not fatal
                    errs = {"error": f"{type(e).__name__}: {str(e)[:200]}"}
                rows.append(dict(level="recurrence", inputs=src, dtype=str(dtype).split(".")[-1], path=path,
                                 seconds=round(time.perf_counter() - t0, 2), **errs))
                print(rows[-1], flush=True)
    rows += check_layer(device, x, mixer, seed, paths, dtypes)
    return rows


def check_layer(device, x, ours_init, seed, paths, dtypes):
    """The mixer: fla's layer on each path and ours, loaded with the race's initial weights, on the A5 mixer input;
    output and every gradient against our layer in float64 with the sequential loop."""
    rows = []
    sd = ours_init.state_dict()
    fla = bl.make_mixer("fla").to(device)
    fla.load_state_dict(sd)
    ours = bl.make_mixer("ours").to(device)
    ours.load_state_dict(sd)
    truth = bl.make_mixer("ours", mode="naive").to(device).double()
    truth.load_state_dict(sd)
    do = torch.randn(x.shape, device=device, generator=torch.Generator(device).manual_seed(seed + 11))

    def grads(layer, dtype, autocast):
        xx = x.detach().to(dtype).requires_grad_(True)
        layer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
            o = layer(xx)[0]
        (o.double() * do.double()).sum().backward()
        # fla-chunk-b32's wrapper names b_proj's weight b_proj.lin.weight: the parameter's own name is kept
        return dict(o=o.detach().double(), dx=xx.grad.double(),
                    **{n.replace(".lin.", "."): p.grad.double() for n, p in layer.named_parameters()})
    ref = grads(truth, torch.float64, False)
    # bf16 autocast exists on the GPU only (on a CPU dry run it would run float32 again)
    modes = [(dt, dt == torch.bfloat16) for dt in dtypes if dt == torch.float32 or x.device.type == "cuda"]
    for dtype, autocast in modes:
        for path in paths:
            t0 = time.perf_counter()
            try:
                if path == "ours":
                    got = grads(ours, torch.float32, autocast)
                else:
                    with layer_path(fla, path, bypass_fp32=not autocast):
                        got = grads(fla, torch.float32, autocast)
                errs = {nm: rel(got[nm], ref[nm]) for nm in ref}
            except Exception as e:
                errs = {"error": f"{type(e).__name__}: {str(e)[:200]}"}
            rows.append(dict(level="mixer", inputs="A5", dtype="bf16 autocast" if autocast else "float32", path=path,
                             seconds=round(time.perf_counter() - t0, 2), **errs))
            print(rows[-1], flush=True)
    return rows


INDEPENDENT = ("fla-fused", "fla-naive", "ours")   # share no kernel with fla-chunk (fla-chunk-dr shares its backward)


def first_departure(rows, factor=3.0, floor=2e-2):
    """Per (level, inputs, dtype): the first tensor (in the rows' order) where fla-chunk's error is above ``floor``
    and more than ``factor`` times the largest error of the paths that share no kernel with it (``INDEPENDENT``);
    None where there is none. The floor sits above bf16's errors here (about 1e-2 for every path)."""
    out = []
    groups = {}
    for r in rows:
        groups.setdefault((r["level"], r["inputs"], r["dtype"]), []).append(r)
    for key, rs in groups.items():
        chunk = next((r for r in rs if r["path"] == "fla-chunk"), None)
        others = [r for r in rs if r["path"] in INDEPENDENT and "error" not in r]
        hit = None
        if chunk is not None and "error" not in chunk and others:
            for nm in [k for k in chunk if k not in ("level", "inputs", "dtype", "path", "seconds")]:
                worst_other = max(r.get(nm, 0.0) for r in others)
                if chunk[nm] > floor and chunk[nm] > factor * worst_other:
                    hit = dict(tensor=nm, fla_chunk=chunk[nm], worst_other=worst_other)
                    break
        out.append(dict(level=key[0], inputs=key[1], dtype=key[2], first_departure=hit))
    return out


# ------------------------------------------------------------------------------------------------ curves
def curve(path, seed, steps, device, batch, length):
    """The race's training (``bl.train_step``) on A5 for ``steps`` steps from seed ``seed``'s weights and batches:
    losses per step, ms per step (median), token accuracy at ``length`` after."""
    tab, start, n = bl.group_table("A5")
    torch.manual_seed(seed)
    model = bl.Net(n, n, bl.make_mixer("ours" if path == "ours" else "fla")).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)
    gen = torch.Generator().manual_seed(1000 + seed)
    held = [bl.sample(tab, start, n, 256, length, gen, device) for _ in range(2)]
    lossf = torch.nn.CrossEntropyLoss()
    ctx = contextlib.nullcontext() if path == "ours" else layer_path(model.mixer, path)
    losses, times = [], []
    with ctx:
        for _ in range(steps):
            toks, lab = bl.sample(tab, start, n, batch, length, gen, device)
            bl._sync()
            t0 = time.perf_counter()
            loss = bl.train_step(model, opt, lossf, toks, lab)
            bl._sync()
            times.append(time.perf_counter() - t0)
            losses.append(float(loss))
        acc = bl.accuracy(model, held, device)
    ms = 1000 * statistics.median(times[5:] if len(times) > 10 else times)
    return dict(path=path, seed=seed, steps=steps, ms_step=round(ms, 2), final_loss=losses[-1] if losses else None,
                acc128=round(acc, 4), losses=[round(x, 4) for x in losses])


def parting(curves, tol=0.05):
    """Per path: the first step where its loss differs from ours by more than ``tol`` (None: never), and the
    largest difference over the first 20 steps."""
    ref = next((c for c in curves if c["path"] == "ours"), None)
    out = {}
    for c in curves:
        if ref is None or c is ref:
            continue
        d = [abs(a - b) for a, b in zip(c["losses"], ref["losses"])]
        out[c["path"]] = dict(first_step_apart=next((i + 1 for i, x in enumerate(d) if x > tol), None),
                              max_diff_first20=round(max(d[:20]), 4) if d else None)
    return out


# ------------------------------------------------------------------------------------------------ main
def _fmt(x):
    return f"{x:9.2e}" if isinstance(x, float) else f"{str(x):>9s}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parts", default="check,curves")
    ap.add_argument("--paths", default="fla-chunk,fla-chunk-b32,fla-chunk-dr,fla-fused,fla-naive,ours",
                    help=f"comma-separated, from {', '.join(PATHS)}")
    ap.add_argument("--curve-paths", default="fla-chunk,fla-chunk-b32,fla-fused,ours",
                    help="paths of the curves (fla-naive: a torch loop over T n_h positions, slow)")
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--length", type=int, default=128)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=400, help="training steps per curve")
    ap.add_argument("--budget", type=float, default=200.0,
                    help="seconds after which the float32 rows of the check are skipped (they come last)")
    ap.add_argument("--out", default=os.environ.get("OUT") or os.path.join(HERE, "results", "diagnose_fla_a5"))
    ap.add_argument("--device", default="cuda")
    a = ap.parse_args(argv)
    paths = [p for p in a.paths.split(",") if p]
    curve_paths = [p for p in a.curve_paths.split(",") if p]
    for p in paths + curve_paths:
        if p not in PATHS:
            print(f"diagnose_fla_a5: unknown path {p!r} (choose from {', '.join(PATHS)})", file=sys.stderr)
            return 2
    dev = a.device
    if dev == "cpu":   # a dry run under the Triton interpreter: float32 rows are faithful, bf16 rows are not
        import _fla_interpret
        _fla_interpret.enable()
    import fla
    bl.fla_layer_cls()
    fla_path("fla-chunk")   # imports every fla module the paths use
    if dev == "cpu":
        _fla_interpret.patch_fla_ranges()
    out = dict(device=torch.cuda.get_device_name(0) if dev == "cuda" else "cpu", torch=torch.__version__,
               fla=getattr(fla, "__version__", "?"), batch=a.batch, length=a.length, seed=a.seed,
               keywords=bl.LAYER_KW)
    try:
        import triton
        out["triton"] = triton.__version__
    except ImportError:
        out["triton"] = None
    t00 = time.time()

    def save():
        from lrnnkit.fileio import atomic_write_text
        os.makedirs(a.out, exist_ok=True)
        out["fla_configs"] = fla_configs()
        out["seconds"] = round(time.time() - t00, 1)
        atomic_write_text(os.path.join(a.out, "diagnose_fla_a5.json"), json.dumps(out, indent=1))

    print(f"# {({k: v for k, v in out.items() if k != 'keywords'})}", flush=True)
    if "check" in a.parts.split(","):
        t = time.time()
        # first calls autotune fla's kernels: timed apart (one bf16 forward + backward per path at the full shape).
        # On a CPU the bf16 rows are left out: the interpreter multiplies bf16 tiles as integers (_fla_interpret)
        first = [torch.bfloat16] if dev == "cuda" else []
        warm = {}
        if first:
            x, mixer = a5_mixer_input(a.seed, a.batch, a.length, dev)
            q, k, v, beta = core_inputs_from(mixer, x)
            do = torch.randn_like(q)
            for p in [p for p in paths if p not in LAYER_ONLY]:
                t1 = time.time()
                try:
                    core_run(p, q, k, v, beta, do, torch.bfloat16)
                except Exception as e:
                    warm[p + " (failed)"] = f"{type(e).__name__}: {str(e)[:200]}"
                warm[p] = round(time.time() - t1, 1)
                print(f"first call {p}: {warm[p]} s", flush=True)
        out["first_call_seconds"] = warm
        out["check"] = check(dev, a.batch, a.length, a.seed, paths, first)
        out["first_departure"] = first_departure(out["check"])
        out["check_seconds"] = round(time.time() - t, 1)
        save()
    if "curves" in a.parts.split(","):
        t = time.time()
        out["curves"] = []
        for p in curve_paths:
            try:
                model, *rest = _warm_model(dev, a.batch, a.length, p)
                with contextlib.nullcontext() if p == "ours" else layer_path(model.mixer, p):
                    bl.train_step(model, *rest)   # autotune / compile outside the timing
                del model, rest
                c = curve(p, a.seed, a.steps, dev, a.batch, a.length)
            except Exception as e:   # a path that fails to train: recorded, the others still run
                print(f"curve {p}: failed: {type(e).__name__}: {str(e)[:200]}", flush=True)
                out.setdefault("curve_failures", {})[p] = f"{type(e).__name__}: {str(e)[:200]}"
                continue
            out["curves"].append(c)
            print(f"curve {p}: {c['ms_step']} ms/step, loss {c['losses'][:1]} -> {c['final_loss']}, "
                  f"acc128 {c['acc128']}", flush=True)
            save()
        out["parting"] = parting(out["curves"])
        out["curves_seconds"] = round(time.time() - t, 1)
        save()
    if "check" in a.parts.split(","):
        # float32 last: fla's kernels autotune again for float32 (about as long as for bf16), so these rows run
        # only while the --budget lasts
        if time.time() - t00 < a.budget:
            t = time.time()
            out["check"] += check(dev, a.batch, a.length, a.seed, paths, [torch.float32])
            out["first_departure"] = first_departure(out["check"])
            out["check_fp32_seconds"] = round(time.time() - t, 1)
        else:
            out["check_fp32_skipped"] = f"budget of {a.budget} s spent before the float32 rows"
        save()
    # the table, last
    if "check" in out:
        cols = ["o", "dq", "dk", "dv", "dbeta"]
        print("\n## recurrence: relative L2 error against float64 (o, then the gradients)")
        print(f"{'inputs':7s} {'dtype':9s} {'path':13s} " + " ".join(f"{c:>9s}" for c in cols))
        for r in out["check"]:
            if r["level"] == "recurrence":
                vals = [r.get(c, r.get("error", "-")) for c in cols] if "error" not in r else ["refused"] * 5
                print(f"{r['inputs']:7s} {r['dtype']:9s} {r['path']:13s} " + " ".join(_fmt(v) for v in vals))
        print("\n## mixer on an A5 batch: relative L2 error against float64 (output, input gradient, worst parameter)")
        for r in out["check"]:
            if r["level"] == "mixer":
                if "error" in r:
                    print(f"{r['dtype']:13s} {r['path']:13s} refused: {r['error'][:80]}")
                    continue
                params = {k: v for k, v in r.items() if k.endswith("weight") or k.endswith("bias") or k.endswith("_log")}
                worst = max(params, key=params.get)
                print(f"{r['dtype']:13s} {r['path']:13s} o {_fmt(r['o'])} dx {_fmt(r['dx'])} worst {worst} "
                      f"{_fmt(params[worst])}")
        print("\n## first tensor where fla-chunk departs from float64 while the other paths do not")
        for d in out["first_departure"]:
            print(f"{d['level']:10s} {d['inputs']:7s} {d['dtype']:13s} {d['first_departure']}")
    if "curves" in out:
        print(f"\n## A5 curves, seed {a.seed}, {a.steps} steps each (chance: ln 60 = {math.log(60):.2f})")
        print(f"{'path':13s} {'ms/step':>8s} {'loss@1':>7s} {'loss@end':>8s} {'acc128':>7s} {'apart from ours at step':>24s}")
        for c in out["curves"]:
            apart = out["parting"].get(c["path"], {}).get("first_step_apart", "-")
            print(f"{c['path']:13s} {c['ms_step']:8.2f} {c['losses'][0]:7.3f} {c['final_loss']:8.3f} "
                  f"{c['acc128']:7.4f} {str(apart):>24s}")
    print(f"# total {time.time() - t00:.0f} s")
    return 0


def _warm_model(device, batch, length, path):
    """A throw-away network for ``path`` and one batch: (model, opt, lossf, toks, lab) for one untimed step."""
    tab, start, n = bl.group_table("A5")
    torch.manual_seed(12345)
    model = bl.Net(n, n, bl.make_mixer("ours" if path == "ours" else "fla")).to(device)
    toks, lab = bl.sample(tab, start, n, batch, length, torch.Generator().manual_seed(0), device)
    return model, torch.optim.AdamW(model.parameters(), lr=1e-3), torch.nn.CrossEntropyLoss(), toks, lab


if __name__ == "__main__":
    sys.exit(main())
