"""lrnnkit's DeltaProductLayer against flash-linear-attention 0.6.0's GatedDeltaProduct, in ONE process on the GPU:
the same network, data and seeds, only the mixer swapped.

Network: embedding -> RMSNorm -> one mixer layer (d = 384, 12 heads x 32, n_h = 2, eigenvalues in [-1, 1], short
convolution, no forget gate, expand_v = 1) + residual -> RMSNorm -> MLP 4x + residual -> RMSNorm -> linear head.
Task: the S3 word problem (tokens: uniformly random elements of S3; label at every position: the running product),
batch 512, length 128. AdamW lr 1e-3 (weight decay 0.1), bf16 autocast, clipping 1.0. Warm-up (compilation,
fla's autotuning) is excluded: each layer runs a few steps on a throw-away copy first. Every ``--probe`` steps the
token accuracy at length 128 is measured on a fixed held-out set (probe time excluded from the wall time); after the
budget (default 100 s of training time, as in the first recorded comparison; a run takes longer, for the data and
the probes: about 1.5x in call 15), accuracy at 128 / 256 / 512.

Sections (``--parts``):
  same     fla's weights loaded into ours (and back): outputs and every gradient on the same input (bf16 and fp32)
  race     ms/step, first step / seconds to 0.99, final accuracy at 1x / 2x / 4x, per layer and seed (after
           --budget seconds, or --race-steps steps; both layers start from equal weights and see the same data;
           the S3 word problem, or --group's)
  ablate   the differences between the two layers, one at a time (ours with fla's choice switched off)
  stages   forward + backward of the mixer and of its pieces (conv, recurrence), fla's beside ours
  profile  the CUDA kernels of one training step of each layer (torch.profiler), top entries
  fig3     001 Fig. 3 at small scale: S3, S4, A5, S5 x n_h = 1..4, ours beside fla

On the device machine (fla 0.6.0 and einops carried as wheels in .whl/):
    python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD
    python3 benchmarks/bench_layer_vs_fla.py --parts same,race,profile --seeds 0 --out $OUT
(one seed of the race, both layers, takes about 5.5 minutes: one seed per 10-minute GPU call)
"""
from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402


# ------------------------------------------------------------------------------------------------ the peers
def fla_layer_cls():
    """fla 0.6.0's GatedDeltaProduct (loaded as bench_learning.py loads it: fla.layers' package init needs
    transformers, which the GPU machine lacks)."""
    from bench_learning import _import_fla_layer
    return _import_fla_layer()


LAYER_KW = dict(hidden_size=384, head_dim=32, num_heads=12, expand_v=1, num_householder=2, allow_neg_eigval=True,
                use_forget_gate=False, use_short_conv=True)


def make_mixer(kind: str, **over):
    kw = dict(LAYER_KW, **over)
    if kind == "fla":
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fla_layer_cls()(**kw)
    from lrnnkit.layers import DeltaProductLayer
    return DeltaProductLayer(**kw)


class Net(nn.Module):
    def __init__(self, vocab: int, n_out: int, mixer: nn.Module, width: int = 384):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.n1, self.n2, self.nf = nn.RMSNorm(width), nn.RMSNorm(width), nn.RMSNorm(width)
        self.mixer = mixer
        self.up, self.down = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)
        self.head = nn.Linear(width, n_out)

    def forward(self, tokens):
        x = self.embed(tokens)
        x = x + self.mixer(self.n1(x))[0]
        x = x + self.down(torch.nn.functional.gelu(self.up(self.n2(x))))
        return self.head(self.nf(x))


# ------------------------------------------------------------------------------------------------ the task
def group_table(name: str):
    """(multiplication table (n x n) as a long tensor, n) of a permutation group from lrnnkit's presets; the word
    problem's label at t is the product of the tokens up to t (left to right: apply x_1 first)."""
    from lrnnkit.automata.sources import load_source
    fsa = load_source(f"group:{name}")
    n = len(fsa.alphabet)
    # states of the Cayley automaton are group elements; delta[s][a] = s * a
    tab = np.array(fsa.delta, dtype=np.int64)
    return torch.as_tensor(tab), int(fsa.start), n


def sample(tab, start, n, batch, length, gen, device):
    """A batch of words (uniform tokens from ``gen``) and their running products, computed on the CPU in numpy and
    moved once: the same batches, bit for bit, as the loop on the GPU it replaces (which launched small kernels at
    every position, outside the timed region but in the run's wall time)."""
    toks = torch.randint(0, n, (batch, length), generator=gen, device="cpu")
    tab_np, cols = tab.numpy(), toks.numpy().T.copy()
    lab = np.empty_like(cols)
    s = np.full(batch, start, dtype=cols.dtype)
    for t in range(length):
        s = tab_np[s, cols[t]]
        lab[t] = s
    return toks.to(device), torch.from_numpy(lab.T.copy()).to(device)


# ------------------------------------------------------------------------------------------------ training
def _sync():
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def train_step(model, opt, lossf, toks, lab):
    """One AdamW step under bf16 autocast with gradient clipping at 1.0 (the network's training step); returns the
    step's loss (a detached tensor: reading it syncs, so the race does not)."""
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = lossf(model(toks).flatten(0, 1).float(), lab.flatten())
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return loss.detach()


def accuracy(model, data, device):
    model.eval()
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        hits = tot = 0
        for toks, lab in data:
            pred = model(toks).argmax(-1)
            hits += int((pred == lab).sum())
            tot += lab.numel()
    model.train()
    return hits / tot


def same_initial_weights(group, seed, n_h=2) -> bool:
    """Whether the race's network starts from the same weights with either layer for ``seed`` (both layers draw
    their parameters in the same order and shapes, so ``torch.manual_seed(seed)`` gives equal tensors): with the
    same data, a race pair then differs only by the kernels' rounding and the steps each layer reaches."""
    tab, start, n = group_table(group)
    states = []
    for kind in ("fla", "ours"):
        torch.manual_seed(seed)
        states.append(Net(n, n, make_mixer(kind, num_householder=n_h)).state_dict())
    return states[0].keys() == states[1].keys() and all(torch.equal(states[0][k], states[1][k]) for k in states[0])


def run(kind, group, seed, budget_s, probe, device, n_h=2, batch=512, length=128, over=None, max_steps=None):
    tab, start, n = group_table(group)
    torch.manual_seed(seed)
    mixer = make_mixer(kind, num_householder=n_h, **(over or {}))
    model = Net(n, n, mixer).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)
    gen = torch.Generator().manual_seed(1000 + seed)
    held = {L: [sample(tab, start, n, 256, L, gen, device) for _ in range(2)] for L in (length, 2 * length, 4 * length)}
    lossf = nn.CrossEntropyLoss()
    step, wall, first = 0, 0.0, None
    times = []
    curve = []
    while wall < budget_s and (max_steps is None or step < max_steps):
        toks, lab = sample(tab, start, n, batch, length, gen, device)
        _sync()
        t0 = time.perf_counter()
        train_step(model, opt, lossf, toks, lab)
        _sync()
        dt = time.perf_counter() - t0
        wall += dt
        times.append(dt)
        step += 1
        if step % probe == 0:
            acc = accuracy(model, held[length][:1], device)
            curve.append((step, round(wall, 2), round(acc, 4)))
            if first is None and acc >= 0.99:
                first = (step, wall)
    final = {L: accuracy(model, d, device) for L, d in held.items()}
    ms = 1000 * statistics.median(times[10:]) if len(times) > 20 else float("nan")
    return dict(kind=kind, group=group, n_h=n_h, seed=seed, ms_step=ms, steps=step, wall=wall,
                first_step=None if first is None else first[0], first_s=None if first is None else first[1],
                final={str(k): v for k, v in final.items()}, curve=curve, over=over or {})


def warm(kind, device, n_h=2, over=None):
    """Compile / autotune every kernel the race uses (train step at 128, eval at 128 / 256 / 512)."""
    r = run(kind, "S3", 12345, 1e9, 10 ** 9, device, n_h=n_h, over=over, max_steps=3)
    return r


# ------------------------------------------------------------------------------------------------ same weights
def same_weights(device):
    """fla's layer and ours with the same weights (fla's state_dict loaded into ours, and ours back into a fresh fla
    layer), the same bf16 input: relative L2 differences of the outputs and of every gradient, each layer also
    against the float64 truth (our layer in float64 with the sequential "naive" recurrence on the same weights;
    fla refuses float32)."""
    rows = []
    for gate in (False, True):
        torch.manual_seed(0)
        kw = dict(LAYER_KW, use_forget_gate=gate)
        fla = make_mixer("fla", **kw).to(device)
        ours = make_mixer("ours", **kw).to(device)
        ours.load_state_dict(fla.state_dict())
        back = make_mixer("fla", **kw).to(device)
        back.load_state_dict(ours.state_dict())
        roundtrip = all(torch.equal(a, b) for a, b in zip(back.state_dict().values(), fla.state_dict().values()))
        truth = make_mixer("ours", **dict(kw, mode="naive")).to(device).double()
        truth.load_state_dict(fla.state_dict())
        x = torch.randn(2, 128, 384, device=device)
        torch.manual_seed(1)
        do = torch.randn(2, 128, 384, device=device)
        res = {}
        for name, layer in (("fla", fla.bfloat16()), ("ours", ours.bfloat16()), ("f64", truth)):
            dt = torch.float64 if name == "f64" else torch.bfloat16
            xx = x.to(dt).requires_grad_(True)
            o = layer(xx)[0]
            res[name] = dict(o=o.detach().double())
            if gate and name == "fla":   # fla 0.6.0 refuses the gated backward on Hopper with triton < 3.7.1
                continue
            (o.double() * do.double()).sum().backward()
            res[name].update(dx=xx.grad.double(), **{n: p.grad.double() for n, p in layer.named_parameters()})

        def rel(a, b):
            return float((a - b).norm() / b.norm().clamp_min(1e-30))
        row = dict(forget_gate=gate, state_dict_roundtrip=roundtrip)
        for who in ("ours", "fla"):
            errs = {k: rel(res[who][k], res["f64"][k]) for k in res[who]}
            row[f"{who}_vs_f64_out"] = errs["o"]
            row[f"{who}_vs_f64_worst"] = max(errs.values())
            row[f"{who}_vs_f64_worst_at"] = max(errs, key=errs.get)
        errs = {k: rel(res["ours"][k], res["fla"][k]) for k in res["fla"]}   # outputs only when gated
        row["ours_vs_fla_out"] = errs["o"]
        row["ours_vs_fla_worst"] = max(errs.values())
        row["ours_vs_fla_worst_at"] = max(errs, key=errs.get)
        rows.append(row)
    return rows


# ------------------------------------------------------------------------------------------------ profile
def profile(kind, device, steps=5):
    from torch.profiler import ProfilerActivity, profile as prof
    tab, start, n = group_table("S3")
    torch.manual_seed(0)
    model = Net(n, n, make_mixer(kind)).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(0)
    toks, lab = sample(tab, start, n, 512, 128, gen, device)
    lossf = nn.CrossEntropyLoss()

    def step():
        train_step(model, opt, lossf, toks, lab)
    for _ in range(5):
        step()
    _sync()
    with prof(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        for _ in range(steps):
            step()
        _sync()
    return p.key_averages().table(sort_by="self_cuda_time_total", row_limit=40)


# ------------------------------------------------------------------------------------------------ stages
def _time(fn):
    """Median milliseconds of ``fn()`` (forward + backward of one piece): triton's ``do_bench``, as
    bench_kernels.py times the kernels."""
    from triton.testing import do_bench
    return do_bench(fn, warmup=25, rep=100, return_mode="median")


def stages(device, batch=512, length=128):
    """Forward + backward of the mixer and of its pieces at the race's shapes (bf16 autocast), fla's beside ours:
    where the step-time difference lives."""
    from lrnnkit.ops.gh.api import chunk_gh
    from lrnnkit.layers.short_conv import ShortConvolution
    rows = []
    torch.manual_seed(0)
    x = torch.randn(batch, length, 384, device=device)

    def mixer_fn(layer):
        xx = x.clone().requires_grad_(True)

        def f():
            with torch.autocast("cuda", dtype=torch.bfloat16):
                o = layer(xx)[0]
            o.float().sum().backward()
        return f
    fla = make_mixer("fla").to(device)
    ours = make_mixer("ours").to(device)
    ours.load_state_dict(fla.state_dict())
    rows.append(("mixer fla", _time(mixer_fn(fla))))
    rows.append(("mixer ours", _time(mixer_fn(ours))))
    for m in ours.modules():
        if isinstance(m, ShortConvolution):
            m.backend = "torch"
    rows.append(("mixer ours, conv torch", _time(mixer_fn(ours))))
    for m in ours.modules():
        if isinstance(m, ShortConvolution):
            m.backend = "auto"
    # the short convolution alone, 768 channels (k and v streams), bf16
    xc = torch.randn(batch, length, 768, device=device, dtype=torch.bfloat16, requires_grad=True)
    for name, conv in (("conv fla", fla.k_conv1d), ("conv ours", ours.k_conv1d)):
        conv = conv.bfloat16()

        def f(conv=conv, name=name):
            y = conv(x=xc)[0] if name == "conv fla" else conv(xc)
            y.float().sum().backward()
        rows.append((name, _time(f)))
    from lrnnkit.ops import short_conv
    default = dict(short_conv.BLOCKS)
    for fb, bb in itertools.product([(64, 128, 4), (64, 64, 4)], [(64, 64, 4), (64, 32, 4), (32, 64, 4), (64, 128, 8)]):
        short_conv.BLOCKS.update(fwd=fb, bwd=bb)

        def f():
            ours.k_conv1d(xc).float().sum().backward()
        rows.append((f"conv ours fwd {fb} bwd {bb}", _time(f)))
    short_conv.BLOCKS.update(default)
    # the recurrence alone: q (B,T,H,K), k, v (B,T*n,H,K), beta (B,T*n,H)
    from fla.ops.gated_delta_product import chunk_gated_delta_product
    H, K, n = 12, 32, 2
    q = torch.randn(batch, length, H, K, device=device, dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(batch, length * n, H, K, device=device, dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(batch, length * n, H, K, device=device, dtype=torch.bfloat16, requires_grad=True)
    b32 = (torch.rand(batch, length * n, H, device=device) * 2).requires_grad_(True)
    b16 = b32.detach().bfloat16().requires_grad_(True)

    def core(which, beta, l2):
        def f():
            if which == "fla":
                o, _ = chunk_gated_delta_product(q, k, v, None, beta, num_householder=n, use_qk_l2norm_in_kernel=True)
            else:
                qq, kk = (q, k) if l2 else (q.detach(), k.detach())
                o, _ = chunk_gh(qq, kk, v, None, beta, n, use_qk_l2norm_in_kernel=l2, validate=False)
            o.float().sum().backward()
        return f
    rows.append(("recurrence fla (l2norm in kernel, beta bf16)", _time(core("fla", b16, True))))
    rows.append(("recurrence ours (l2norm Triton, beta fp32)", _time(core("ours", b32, True))))
    rows.append(("recurrence ours (beta bf16)", _time(core("ours", b16, True))))
    rows.append(("recurrence ours, no l2norm", _time(core("ours", b32, False))))
    return [dict(piece=p, ms=round(t, 3)) for p, t in rows]


# ------------------------------------------------------------------------------------------------ main
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parts", default="same,race,profile")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--budget", type=float, default=100.0, help="training seconds per race run")
    ap.add_argument("--probe", type=int, default=50)
    ap.add_argument("--fig3-budget", type=float, default=15.0, help="training seconds per fig3 cell (cap)")
    ap.add_argument("--fig3-steps", type=int, default=None,
                    help="steps per fig3 cell: the same for both layers, so the cells compare learning, not speed "
                    "(the --fig3-budget cap still applies)")
    ap.add_argument("--fig3-groups", default="S3,S4,A5,S5")
    ap.add_argument("--fig3-nh", default="1,2,3,4")
    ap.add_argument("--ablate", default="")
    ap.add_argument("--kinds", default="fla,ours", help="which layers the race / profile run")
    ap.add_argument("--group", default="S3", help="the race's word problem (S3, S4, A5, S5: a group preset)")
    ap.add_argument("--race-steps", type=int, default=None,
                    help="race: this many steps per run instead of --budget seconds (accuracies at equal steps)")
    ap.add_argument("--no-pad", action="store_true", help="diagnostic: run 17..32-wide bf16 heads unpadded")
    ap.add_argument("--out", default=None)
    ap.add_argument("--device", default="cuda", help="cuda; cpu only to dry-run the script (ours only)")
    a = ap.parse_args(argv)
    dev = a.device
    parts = a.parts.split(",")
    kinds = a.kinds.split(",")
    if a.no_pad:
        from lrnnkit.ops.gh import wy
        wy._padded = lambda K, V, dtype: (K, V)
    seeds = [int(s) for s in a.seeds.split(",")]
    out = {"device": torch.cuda.get_device_name(0) if dev == "cuda" else "cpu", "torch": torch.__version__}
    try:
        import fla
        out["fla"] = getattr(fla, "__version__", "?")
    except ImportError:
        out["fla"] = None
    t00 = time.time()

    def save():
        if a.out:
            os.makedirs(a.out, exist_ok=True)
            with open(os.path.join(a.out, "layer_vs_fla.json"), "w") as f:
                json.dump(out, f, indent=1)

    print(f"# {out}", flush=True)
    if "same" in parts:
        out["same"] = same_weights(dev)
        print("\n## same weights (fla -> ours), relative L2 errors ours vs fla")
        for r in out["same"]:
            print(r, flush=True)
        save()
    if "profile" in parts:
        for kind in kinds:
            t = profile(kind, dev)
            out[f"profile_{kind}"] = t
            print(f"\n## profile {kind}\n{t}", flush=True)
        save()
    if "stages" in parts:
        out["stages"] = stages(dev)
        print("\n## fwd+bwd per piece (ms, median, triton.testing.do_bench)")
        for r in out["stages"]:
            print(f"{r['piece']:55s} {r['ms']:8.3f}", flush=True)
        save()
    if "race" in parts:
        for kind in kinds:
            t = time.time()
            warm(kind, dev)
            print(f"warm-up {kind}: {time.time() - t:.1f} s", flush=True)
        out["race"] = []
        for seed in seeds:
            if set(kinds) == {"fla", "ours"}:
                out.setdefault("same_initial_weights", {})[str(seed)] = same_initial_weights(a.group, seed)
            for kind in kinds:
                r = run(kind, a.group, seed, math.inf if a.race_steps else a.budget, a.probe, dev,
                        max_steps=a.race_steps)
                out["race"].append(r)
                print(f"race {kind} seed {seed}: {r['ms_step']:.2f} ms/step, first>=0.99 step {r['first_step']} "
                      f"({r['first_s'] and round(r['first_s'], 1)} s), final {r['final']}, steps {r['steps']}",
                      flush=True)
                save()
    if "ablate" in parts:
        out["ablate"] = []
        variants = [v for v in a.ablate.split(";") if v]
        for v in variants:
            over = json.loads(v)
            for seed in seeds:
                r = run("ours", "S3", seed, a.budget, a.probe, dev, over=over)
                out["ablate"].append(r)
                print(f"ablate {over} seed {seed}: {r['ms_step']:.2f} ms/step, first {r['first_step']} "
                      f"({r['first_s'] and round(r['first_s'], 1)} s), final {r['final']}", flush=True)
                save()
    if "fig3" in parts:
        out["fig3"] = []
        nhs = [int(x) for x in a.fig3_nh.split(",")]
        for nh, kind in itertools.product(nhs, kinds):   # compile / autotune every n_h before any cell is timed
            warm(kind, dev, n_h=nh)
        for g, nh in itertools.product(a.fig3_groups.split(","), nhs):
            for kind in kinds:
                r = run(kind, g, seeds[0], a.fig3_budget, a.probe, dev, n_h=nh, max_steps=a.fig3_steps)
                out["fig3"].append(r)
                print(f"fig3 {g} n_h={nh} {kind}: final {r['final']} first {r['first_step']} "
                      f"{r['ms_step']:.1f} ms/step", flush=True)
                save()
    print(f"# total {time.time() - t00:.0f} s")
    save()


if __name__ == "__main__":
    main()
